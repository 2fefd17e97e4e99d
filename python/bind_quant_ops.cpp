// Quantized operators: named after the ONNX op in snake case, ONNX input
// order, ONNX attribute names as keywords, plus profile=. Scales and zero
// points may be Python numbers or numpy arrays (0-D, or 1-D for per-axis);
// a zero point's numpy dtype (int8 / uint8) chooses the output type where
// ONNX does (QuantizeLinear: uint8 when no zero point is given).
#include <limits>

#include "args.hpp"
#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/npukit.hpp"
#include "npukit/ops/quantized.hpp"

namespace npukit::python {

namespace {

using py::arg;

std::vector<float> floats(const py::object& o, const char* fn, const char* name) {
  check(!o.is_none(), fn, name, "None", "a number or an array of scales");
  const py::array_t<double> a = float_array(o, fn, name);
  std::vector<float> v;
  for (py::ssize_t i = 0; i < a.size(); ++i) v.push_back(static_cast<float>(a.data()[i]));
  check(!v.empty(), fn, name, "an empty array", "at least one value");
  return v;
}

// Zero points: integers only (a float such as 3.7 is refused, not truncated).
std::vector<int32_t> ints(const py::object& o, const char* fn, const char* name) {
  std::vector<int32_t> v;
  if (o.is_none()) return v;
  const py::array_t<int64_t> a = int_array(o, fn, name, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max());
  for (py::ssize_t i = 0; i < a.size(); ++i) v.push_back(static_cast<int32_t>(a.data()[i]));
  return v;
}

float one_float(const py::object& o, const char* fn, const char* name) {
  const std::vector<float> v = floats(o, fn, name);
  check(v.size() == 1, fn, name, std::to_string(v.size()) + " values", "one value (per tensor)");
  return v[0];
}

int32_t one_int(const py::object& o, const char* fn, const char* name) {
  const std::vector<int32_t> v = ints(o, fn, name);
  check(v.size() <= 1, fn, name, std::to_string(v.size()) + " values", "one value (per tensor)");
  return v.empty() ? 0 : v[0];
}

// Code type named by a zero point: its numpy dtype when it is an int8/uint8
// array, else `dflt`.
DType code_type(const py::object& zp, DType dflt) {
  if (zp.is_none()) return dflt;
  py::array a = py::module_::import("numpy").attr("asarray")(zp);  // also numpy scalars
  if (a.dtype().is(py::dtype::of<int8_t>())) return DType::s8;
  if (a.dtype().is(py::dtype::of<uint8_t>())) return DType::u8;
  return dflt;
}

py::array codes(const py::object& o, const char* fn, const char* name) {
  py::array a = as_tensor(o, fn, name);
  const DType t = dtype_of_array(a, fn, name);
  check(t == DType::s8 || t == DType::u8, fn, (std::string(name) + ".dtype").c_str(), dtype_name(t),
        "int8 or uint8");
  return a;
}

int64_t norm_axis(int64_t axis, int64_t rank, const char* fn) {
  check_range(fn, "axis", axis, -rank, rank - 1);
  return axis < 0 ? axis + rank : axis;
}

// An (N, H, W, C) array seen as a logical (N, C, H, W) view.
TensorView image_view(const py::array& a, bool channels_last, const char* fn, const char* name) {
  TensorView v = view_of(a);
  v.expect_rank(4, fn, name);
  if (!channels_last) return v;
  return TensorView(const_cast<void*>(a.data()), v.dtype(),
                    {v.dim(0), v.dim(3), v.dim(1), v.dim(2)},
                    {v.stride(0), v.stride(3), v.stride(1), v.stride(2)}, fn);
}

py::array new_image(DType t, const Shape& nchw, bool channels_last, TensorView& view) {
  if (!channels_last) {
    py::array y = new_array(t, nchw);
    view = view_of(y);
    return y;
  }
  py::array y = new_array(t, {nchw[0], nchw[2], nchw[3], nchw[1]});
  TensorView v = view_of(y);
  view =
      TensorView(y.mutable_data(), t, nchw, {v.stride(0), v.stride(3), v.stride(1), v.stride(2)});
  return y;
}

// Convolutions: the kernel comes from the weight w (kernel_shape must match it).
Window2d conv_window(const char* fn, const TensorView& x, const TensorView& w,
                     const std::string& auto_pad, const Ints& kernel_shape, const Ints& strides,
                     const Ints& pads, const Ints& dilations) {
  return onnx_window_2d(fn, {kernel_shape, strides, pads, dilations, auto_pad, 0}, x.dim(2),
                        x.dim(3), WindowUse::conv, Profile::onnxruntime, {w.dim(2), w.dim(3)});
}

void bind_quantize(py::module_& m) {
  def_checked(
      m, "quantize_linear",
      [](const py::object& xo, const py::object& y_scale, const py::object& y_zero_point,
         int64_t axis, const std::string& profile) {
        constexpr const char* fn = "npukit.quantize_linear";
        py::array x = as_dtype(xo, DType::f32, fn, "x");
        QuantizeParams p;
        apply_profile(p, profile_arg(profile));
        p.q.scale = floats(y_scale, fn, "y_scale");
        p.q.zero_point = ints(y_zero_point, fn, "y_zero_point");
        p.q.axis = p.q.per_axis() ? norm_axis(axis, x.ndim(), fn) : 0;
        TensorView xv = view_of(x);
        py::array y = new_array(code_type(y_zero_point, DType::u8), xv.shape());
        quantize_linear(xv, view_of(y), p);
        return y;
      },
      arg("x"), arg("y_scale"), arg("y_zero_point") = py::none(), py::kw_only(), arg("axis") = 1,
      arg("profile") = "onnxruntime",
      "ONNX QuantizeLinear: saturate(round(x / y_scale) + y_zero_point), per tensor or per axis; "
      "the output is int8 when y_zero_point is an int8 array, else uint8.");
  def_checked(
      m, "dequantize_linear",
      [](const py::object& xo, const py::object& x_scale, const py::object& x_zero_point,
         int64_t axis) {
        constexpr const char* fn = "npukit.dequantize_linear";
        py::array x = as_tensor(xo, fn, "x");
        QuantParams q;
        q.scale = floats(x_scale, fn, "x_scale");
        q.zero_point = ints(x_zero_point, fn, "x_zero_point");
        q.axis = q.per_axis() ? norm_axis(axis, x.ndim(), fn) : 0;
        TensorView xv = view_of(x);
        py::array y = new_array(DType::f32, xv.shape());
        dequantize_linear(xv, view_of(y), q);
        return y;
      },
      arg("x"), arg("x_scale"), arg("x_zero_point") = py::none(), py::kw_only(), arg("axis") = 1,
      "ONNX DequantizeLinear: (x - x_zero_point) * x_scale in float32.");
}

void bind_avg_pool(py::module_& m) {
  def_checked(
      m, "qlinear_average_pool",
      [](const py::object& xo, const py::object& x_scale, const py::object& x_zero_point,
         const py::object& y_scale, const py::object& y_zero_point, const std::string& auto_pad,
         int64_t ceil_mode, int64_t channels_last, int64_t count_include_pad,
         const Ints& kernel_shape, const Ints& pads, const Ints& strides,
         const std::string& profile) {
        constexpr const char* fn = "npukit.qlinear_average_pool";
        py::array x = codes(xo, fn, "x");
        check_range(fn, "channels_last", channels_last, 0, 1);
        check_range(fn, "count_include_pad", count_include_pad, 0, 1);
        TensorView xv = image_view(x, channels_last != 0, fn, "x");
        QLinearAvgPoolParams p;
        const Profile prof = profile_arg(profile);
        p.window = onnx_window_2d(fn, {kernel_shape, strides, pads, Ints(), auto_pad, ceil_mode},
                                  xv.dim(2), xv.dim(3), WindowUse::pool, prof);
        p.count_include_pad = onnx_count_include_pad(fn, count_include_pad);
        p.x_scale = one_float(x_scale, fn, "x_scale");
        p.y_scale = one_float(y_scale, fn, "y_scale");
        p.x_zero_point = one_int(x_zero_point, fn, "x_zero_point");
        p.y_zero_point = one_int(y_zero_point, fn, "y_zero_point");
        apply_profile(p, prof);
        TensorView yv;
        py::array y = new_image(xv.dtype(), qlinear_average_pool_output_shape(xv.shape(), p),
                                channels_last != 0, yv);
        qlinear_average_pool(xv, yv, p);
        return y;
      },
      arg("x"), arg("x_scale"), arg("x_zero_point"), arg("y_scale"), arg("y_zero_point"),
      py::kw_only(), arg("auto_pad") = "NOTSET", arg("ceil_mode") = 0, arg("channels_last") = 0,
      arg("count_include_pad") = 0, arg("kernel_shape") = py::none(), arg("pads") = py::none(),
      arg("strides") = py::none(), arg("profile") = "onnxruntime",
      "com.microsoft QLinearAveragePool on an int8/uint8 (N, C, H, W) array ((N, H, W, C) with "
      "channels_last=1); profile onnxruntime | ghp_rtl | ghp_golden | tflite | mico.");
  def_checked(
      m, "qlinear_global_average_pool",
      [](const py::object& xo, const py::object& x_scale, const py::object& x_zero_point,
         const py::object& y_scale, const py::object& y_zero_point, int64_t channels_last,
         const std::string& profile) {
        constexpr const char* fn = "npukit.qlinear_global_average_pool";
        py::array x = codes(xo, fn, "x");
        check_range(fn, "channels_last", channels_last, 0, 1);
        TensorView xv = image_view(x, channels_last != 0, fn, "x");
        QLinearAvgPoolParams p;
        p.count_include_pad = true;  // no padding: the divisor is H*W either way
        p.x_scale = one_float(x_scale, fn, "x_scale");
        p.y_scale = one_float(y_scale, fn, "y_scale");
        p.x_zero_point = one_int(x_zero_point, fn, "x_zero_point");
        p.y_zero_point = one_int(y_zero_point, fn, "y_zero_point");
        apply_profile(p, profile_arg(profile));
        TensorView yv;
        py::array y = new_image(xv.dtype(), {xv.dim(0), xv.dim(1), 1, 1}, channels_last != 0, yv);
        qlinear_global_average_pool(xv, yv, p);
        return y;
      },
      arg("x"), arg("x_scale"), arg("x_zero_point"), arg("y_scale"), arg("y_zero_point"),
      py::kw_only(), arg("channels_last") = 0, arg("profile") = "onnxruntime",
      "com.microsoft QLinearGlobalAveragePool: (N, C, H, W) -> (N, C, 1, 1).");
}

// ONNX QLinearConv and ConvInteger.
void bind_qconv(py::module_& m) {
  def_checked(
      m, "qlinear_conv",
      [](const py::object& xo, const py::object& x_scale, const py::object& x_zero_point,
         const py::object& wo, const py::object& w_scale, const py::object& w_zero_point,
         const py::object& y_scale, const py::object& y_zero_point, const py::object& bo,
         const std::string& auto_pad, const Ints& dilations, int64_t group,
         const Ints& kernel_shape, const Ints& pads, const Ints& strides,
         const std::string& profile) {
        constexpr const char* fn = "npukit.qlinear_conv";
        py::array x = codes(xo, fn, "x");
        py::array w = codes(wo, fn, "w");
        TensorView xv = view_of(x), wv = view_of(w);
        xv.expect_rank(4, fn, "x");
        wv.expect_rank(4, fn, "w");
        QLinearConvParams p;
        p.window = conv_window(fn, xv, wv, auto_pad, kernel_shape, strides, pads, dilations);
        p.groups = group;
        p.x_scale = one_float(x_scale, fn, "x_scale");
        p.y_scale = one_float(y_scale, fn, "y_scale");
        p.x_zero_point = one_int(x_zero_point, fn, "x_zero_point");
        p.y_zero_point = one_int(y_zero_point, fn, "y_zero_point");
        p.w.scale = floats(w_scale, fn, "w_scale");
        p.w.zero_point = ints(w_zero_point, fn, "w_zero_point");
        p.w.axis = 0;
        apply_profile(p, profile_arg(profile));
        py::array b;
        if (!bo.is_none()) {
          b = as_dtype(bo, DType::s32, fn, "B");
          p.has_bias = true;
        }
        py::array y = new_array(xv.dtype(), qlinear_conv_output_shape(xv.shape(), wv.shape(), p));
        qlinear_conv(xv, wv, p.has_bias ? view_of(b) : TensorView(), view_of(y), p);
        return y;
      },
      arg("x"), arg("x_scale"), arg("x_zero_point"), arg("w"), arg("w_scale"), arg("w_zero_point"),
      arg("y_scale"), arg("y_zero_point"), arg("B") = py::none(), py::kw_only(),
      arg("auto_pad") = "NOTSET", arg("dilations") = py::none(), arg("group") = 1,
      arg("kernel_shape") = py::none(), arg("pads") = py::none(), arg("strides") = py::none(),
      arg("profile") = "onnxruntime",
      "ONNX QLinearConv (2-D): int32 accumulation (u8 x s8 as the profile's ONNX Runtime "
      "kernel, see onnxruntime_accumulation), float(acc) * M with M = (x_scale*w_scale)/y_scale "
      "(onnxruntime) or (w_scale*x_scale)*(1/y_scale) (pytorch, QNNPACK's order), round half "
      "to even, + y_zero_point, saturate. w_scale/w_zero_point per tensor or per output "
      "channel; B is int32.");
  def_checked(
      m, "conv_integer",
      [](const py::object& xo, const py::object& wo, const py::object& x_zero_point,
         const py::object& w_zero_point, const std::string& auto_pad, const Ints& dilations,
         int64_t group, const Ints& kernel_shape, const Ints& pads, const Ints& strides) {
        constexpr const char* fn = "npukit.conv_integer";
        py::array x = codes(xo, fn, "x");
        py::array w = codes(wo, fn, "w");
        TensorView xv = view_of(x), wv = view_of(w);
        xv.expect_rank(4, fn, "x");
        wv.expect_rank(4, fn, "w");
        ConvIntegerParams p;
        p.window = conv_window(fn, xv, wv, auto_pad, kernel_shape, strides, pads, dilations);
        p.groups = group;
        p.x_zero_point = one_int(x_zero_point, fn, "x_zero_point");
        p.w_zero_point = ints(w_zero_point, fn, "w_zero_point");
        QLinearConvParams shape_only;
        shape_only.window = p.window;
        shape_only.groups = group;
        py::array y =
            new_array(DType::s32, qlinear_conv_output_shape(xv.shape(), wv.shape(), shape_only));
        conv_integer(xv, wv, view_of(y), p);
        return y;
      },
      arg("x"), arg("w"), arg("x_zero_point") = py::none(), arg("w_zero_point") = py::none(),
      py::kw_only(), arg("auto_pad") = "NOTSET", arg("dilations") = py::none(), arg("group") = 1,
      arg("kernel_shape") = py::none(), arg("pads") = py::none(), arg("strides") = py::none(),
      "ONNX ConvInteger: int32 sum of (x - x_zero_point)(w - w_zero_point).");
}

// ONNX QLinearMatMul and MatMulInteger, and how ONNX Runtime accumulates u8 x s8 here.
void bind_qmatmul(py::module_& m) {
  def_checked(
      m, "qlinear_mat_mul",
      [](const py::object& ao, const py::object& a_scale, const py::object& a_zero_point,
         const py::object& bo, const py::object& b_scale, const py::object& b_zero_point,
         const py::object& y_scale, const py::object& y_zero_point, const std::string& profile) {
        constexpr const char* fn = "npukit.qlinear_mat_mul";
        py::array a = codes(ao, fn, "a");
        py::array b = codes(bo, fn, "b");
        QLinearMatMulParams p;
        p.a_scale = one_float(a_scale, fn, "a_scale");
        p.y_scale = one_float(y_scale, fn, "y_scale");
        p.a_zero_point = one_int(a_zero_point, fn, "a_zero_point");
        p.y_zero_point = one_int(y_zero_point, fn, "y_zero_point");
        p.b.scale = floats(b_scale, fn, "b_scale");
        p.b.zero_point = ints(b_zero_point, fn, "b_zero_point");
        apply_profile(p, profile_arg(profile));
        TensorView av = view_of(a), bv = view_of(b);
        py::array y = new_array(av.dtype(), matmul_broadcast_shape(av.shape(), bv.shape()));
        qlinear_matmul(av, bv, view_of(y), p);
        return y;
      },
      arg("a"), arg("a_scale"), arg("a_zero_point"), arg("b"), arg("b_scale"), arg("b_zero_point"),
      arg("y_scale"), arg("y_zero_point"), py::kw_only(), arg("profile") = "onnxruntime",
      "ONNX QLinearMatMul with numpy.matmul broadcasting (ranks 1 to 4); b_scale/b_zero_point "
      "per tensor or per column.");
  def_checked(
      m, "mat_mul_integer",
      [](const py::object& ao, const py::object& bo, const py::object& a_zero_point,
         const py::object& b_zero_point, const std::string& profile) {
        constexpr const char* fn = "npukit.mat_mul_integer";
        py::array a = codes(ao, fn, "A");
        py::array b = codes(bo, fn, "B");
        MatMulIntegerParams p;
        p.a_zero_point = one_int(a_zero_point, fn, "a_zero_point");
        p.b_zero_point = ints(b_zero_point, fn, "b_zero_point");
        apply_profile(p, profile_arg(profile));
        TensorView av = view_of(a), bv = view_of(b);
        py::array y = new_array(DType::s32, matmul_broadcast_shape(av.shape(), bv.shape()));
        matmul_integer(av, bv, view_of(y), p);
        return y;
      },
      arg("A"), arg("B"), arg("a_zero_point") = py::none(), arg("b_zero_point") = py::none(),
      py::kw_only(), arg("profile") = "onnxruntime",
      "ONNX MatMulInteger: int32 (A - a_zero_point) @ (B - b_zero_point), numpy broadcasting; "
      "u8 x s8 accumulates as the profile's ONNX Runtime kernel does (see "
      "onnxruntime_accumulation).");
  def_checked(
      m, "host_cpu_features",
      [] {
        const CpuFeatures f = host_cpu_features();
        py::dict d;
        d["avx2"] = f.avx2;
        d["avx_vnni"] = f.avx_vnni;
        d["avx512_core"] = f.avx512_core;
        d["avx512_vnni"] = f.avx512_vnni;
        return d;
      },
      "The x86 features (CPUID/XGETBV) that decide ONNX Runtime's MLAS integer GEMM kernel.");
  def_checked(
      m, "onnxruntime_accumulation",
      [](const std::string& profile) {
        return std::string(int_accumulation_name(profile_accumulation(profile_arg(profile))));
      },
      arg("profile") = "onnxruntime",
      "How QLinearConv/QLinearMatMul/MatMulInteger sum u8 x s8 products under a profile: "
      "'mlas_u8s8_int16_pairs' (ONNX Runtime on x86 without VNNI: adjacent products saturate "
      "to int16) or 'exact_int32'. 'onnxruntime' follows this host's CPU.");
}

// com.microsoft QLinearAdd.
void bind_qadd(py::module_& m) {
  def_checked(
      m, "qlinear_add",
      [](const py::object& ao, const py::object& a_scale, const py::object& a_zero_point,
         const py::object& bo, const py::object& b_scale, const py::object& b_zero_point,
         const py::object& c_scale, const py::object& c_zero_point, const std::string& profile) {
        constexpr const char* fn = "npukit.qlinear_add";
        py::array a = codes(ao, fn, "A");
        py::array b = codes(bo, fn, "B");
        QLinearAddParams p;
        p.a_scale = one_float(a_scale, fn, "A_scale");
        p.b_scale = one_float(b_scale, fn, "B_scale");
        p.c_scale = one_float(c_scale, fn, "C_scale");
        p.a_zero_point = one_int(a_zero_point, fn, "A_zero_point");
        p.b_zero_point = one_int(b_zero_point, fn, "B_zero_point");
        p.c_zero_point = one_int(c_zero_point, fn, "C_zero_point");
        apply_profile(p, profile_arg(profile));
        TensorView av = view_of(a), bv = view_of(b);
        py::array c = new_array(av.dtype(), broadcast_shape(av.shape(), bv.shape(), fn));
        qlinear_add(av, bv, view_of(c), p);
        return c;
      },
      arg("A"), arg("A_scale"), arg("A_zero_point"), arg("B"), arg("B_scale"), arg("B_zero_point"),
      arg("C_scale"), arg("C_zero_point"), py::kw_only(), arg("profile") = "onnxruntime",
      "com.microsoft QLinearAdd with numpy broadcasting; profile onnxruntime (its x86 AVX2 "
      "kernel: zero point inside the rounding, fused multiply-adds) or pytorch (dequantize, add, "
      "quantize).");
}

}  // namespace

void bind_quant_ops(py::module_& m) {
  bind_quantize(m);
  bind_avg_pool(m);
  bind_qconv(m);
  bind_qmatmul(m);
  bind_qadd(m);
}

}  // namespace npukit::python
