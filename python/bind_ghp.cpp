// GHP-FPGA fixed point and instructions for Python: the accelerator's
// QLinearAveragePool/MaxPool/QLinearAdd under ghp_rtl or ghp_golden, the
// multiplier decomposition, and text <-> binary instructions.
#include <limits>

#include "args.hpp"
#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/ops/ghp_pool.hpp"
#include "npukit/quant/ghp.hpp"

namespace npukit::python {

namespace {

using py::arg;

py::array u8_nchw(const py::object& x, const char* fn) {
  py::array a = as_dtype(x, DType::u8, fn, "x");
  view_of(a).expect_rank(4, fn, "x");
  return a;
}

Window2d window_arg(const char* fn, const py::array& x, const Ints& kernel_shape,
                    const Ints& strides, const Ints& pads, int64_t ceil_mode,
                    const std::string& auto_pad) {
  // The GHP profiles pool with ONNX's geometry (pool_geometry_for).
  return onnx_window_2d(fn, {kernel_shape, strides, pads, std::nullopt, auto_pad, ceil_mode},
                        x.shape(2), x.shape(3), WindowUse::pool, Profile::ghp_rtl);
}

py::array avg_pool(const py::object& xo, const Ints& kernel_shape, double x_scale, int x_zp,
                   double y_scale, int y_zp, const Ints& strides, const Ints& pads,
                   int64_t ceil_mode, int64_t count_include_pad, const std::string& auto_pad,
                   const std::string& profile) {
  constexpr const char* fn = "npukit.ghp_avg_pool";
  py::array x = u8_nchw(xo, fn);
  check(count_include_pad == 1, fn, "count_include_pad", std::to_string(count_include_pad),
        "1 (the GHP accelerator always divides by KH*KW)");
  Ints ks = kernel_shape;
  if (!ks) ks = std::vector<int64_t>{x.shape(2), x.shape(3)};  // global pooling
  // What the accelerator's compiler and one AVGP instruction compute (double scales).
  const Window2d w = window_arg(fn, x, ks, strides, pads, ceil_mode, auto_pad);
  const ghp::PoolEngineParams p =
      ghp::avg_pool_engine_params(profile_arg(profile), w, x_scale, x_zp, y_scale, y_zp);
  py::array y = new_array(DType::u8, ghp::pool_output_shape(view_of(x).shape(), w, fn));
  ghp::ghp_pool_engine_u8(view_of(x), view_of(y), p);
  return y;
}

py::array max_pool(const py::object& xo, const Ints& kernel_shape, const Ints& strides,
                   const Ints& pads, int64_t ceil_mode, const std::string& auto_pad,
                   const std::string& profile) {
  constexpr const char* fn = "npukit.ghp_max_pool";
  py::array x = u8_nchw(xo, fn);
  const Window2d w = window_arg(fn, x, kernel_shape, strides, pads, ceil_mode, auto_pad);
  py::array y = new_array(DType::u8, ghp::pool_output_shape(view_of(x).shape(), w, fn));
  ghp::ghp_max_pool_u8(view_of(x), view_of(y), w, ghp::post_rounding_for(profile_arg(profile)));
  return y;
}

py::array qlinear_add(const py::object& ao, double a_scale, int a_zp, const py::object& bo,
                      double b_scale, int b_zp, double c_scale, int c_zp,
                      const std::string& profile) {
  constexpr const char* fn = "npukit.ghp_qlinear_add";
  py::array a = as_dtype(ao, DType::u8, fn, "a");
  py::array b = as_dtype(bo, DType::u8, fn, "b");
  const ghp::AddParams p =
      ghp::add_params(profile_arg(profile), a_scale, a_zp, b_scale, b_zp, c_scale, c_zp);
  py::array c = new_array(DType::u8, view_of(a).shape());
  ghp::ghp_add_u8(view_of(a), view_of(b), view_of(c), p);
  return c;
}

py::object requantize(const py::object& acc, int64_t m1, int n1, int y_zp,
                      const std::string& profile) {
  constexpr const char* fn = "npukit.ghp_requantize";
  const ghp::PostProc p{m1, n1, y_zp, ghp::post_rounding_for(profile_arg(profile))};
  ghp::check_post_proc(p, fn);
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(),
                    hi = std::numeric_limits<int64_t>::max();
  if (py::isinstance<py::int_>(acc))
    return py::int_(ghp::requantize(int_arg(acc, fn, "acc", lo, hi), p));
  // Integers only: forcecast would truncate floats and wrap beyond 64 bits.
  const py::array_t<int64_t> in = int_array(acc, fn, "acc", lo, hi);
  py::array_t<uint8_t> out(std::vector<py::ssize_t>(in.shape(), in.shape() + in.ndim()));
  const int64_t* src = in.data();
  uint8_t* dst = out.mutable_data();
  for (py::ssize_t i = 0; i < in.size(); ++i) dst[i] = ghp::requantize(src[i], p);
  return out;
}

}  // namespace

void bind_ghp(py::module_& m) {
  def_checked(
      m, "ghp_decompose_multiplier",
      [](double M, const std::string& edge) {
        check(edge == "renormalize" || edge == "reject", "npukit.ghp_decompose_multiplier", "edge",
              "'" + edge + "'", "renormalize or reject");
        const ghp::Multiplier r = ghp::decompose_multiplier(
            M, edge == "reject" ? ghp::M1Edge::reject : ghp::M1Edge::renormalize);
        return py::make_tuple(r.m1, r.n1);
      },
      arg("M"), arg("edge") = "renormalize",
      "GHP compiler: M ~= m1 * 2^-n1 with m1 in [2^25, 2^26). Returns (m1, n1); the instruction "
      "stores n1 - 1.");
  def_checked(
      m, "ghp_add_params",
      [](double a_scale, double b_scale, double c_scale) {
        const ghp::AddParams p =
            ghp::add_params(Profile::ghp_rtl, a_scale, 0, b_scale, 0, c_scale, 0);
        return py::make_tuple(p.m1, p.m2, p.n);
      },
      arg("a_scale"), arg("b_scale"), arg("c_scale"),
      "QLinearAdd multipliers sharing one exponent: (m1, m2, n).");
  def_checked(m, "ghp_requantize", &requantize, arg("acc"), arg("m1"), arg("n1"),
              arg("y_zero_point"), arg("profile") = "ghp_rtl",
              "The post-processing unit on accumulators (int or int64 array) -> uint8.");
  def_checked(
      m, "ghp_avg_pool", &avg_pool, arg("x"), arg("kernel_shape").none(true), arg("x_scale"),
      arg("x_zero_point"), arg("y_scale"), arg("y_zero_point"), arg("strides") = py::none(),
      arg("pads") = py::none(), arg("ceil_mode") = 0, arg("count_include_pad") = 1,
      arg("auto_pad") = "NOTSET", arg("profile") = "ghp_rtl",
      "QLinearAveragePool (uint8 NCHW) as the GHP accelerator computes it (kernel_shape=None: "
      "global).");
  def_checked(m, "ghp_max_pool", &max_pool, arg("x"), arg("kernel_shape"),
              arg("strides") = py::none(), arg("pads") = py::none(), arg("ceil_mode") = 0,
              arg("auto_pad") = "NOTSET", arg("profile") = "ghp_rtl",
              "uint8 MaxPool on the GHP accelerator.");
  def_checked(m, "ghp_qlinear_add", &qlinear_add, arg("a"), arg("a_scale"), arg("a_zero_point"),
              arg("b"), arg("b_scale"), arg("b_zero_point"), arg("c_scale"), arg("c_zero_point"),
              arg("profile") = "ghp_rtl", "QLinearAdd (uint8) on the GHP accelerator.");
  def_checked(
      m, "ghp_assemble",
      [](const std::string& text, const std::string& hw) {
        const std::vector<uint8_t> b = ghp::encode_stream(ghp::assemble(text, ghp::hw_preset(hw)));
        return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
      },
      arg("text"), arg("hw") = "M64P64Q16R16S8", "Text form -> binary instruction stream.");
  def_checked(
      m, "ghp_disassemble",
      [](const py::bytes& data, const std::string& hw) {
        const std::string s = data;
        std::string out;
        for (const auto& ins : ghp::decode_stream(std::vector<uint8_t>(s.begin(), s.end())))
          out += ghp::disassemble(ins, ghp::hw_preset(hw)) + "\n";
        return out;
      },
      arg("data"), arg("hw") = "M64P64Q16R16S8", "Binary instruction stream -> text form.");
}

}  // namespace npukit::python
