// fp32 operators: ONNX names and attributes where ONNX has the operator, the
// seed names otherwise. Functions return new arrays; with result_add=True the
// result is y + f(x) for the given y (which is not modified).
#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/npukit.hpp"

namespace npukit::python {

namespace {

using py::arg;

py::array start_output(const py::object& y, bool result_add, const Shape& shape, const char* fn) {
  if (!result_add) return new_array(DType::f32, shape);
  check(!y.is_none(), fn, "y", "None", "an array to accumulate into when result_add=True");
  py::array old = as_dtype(y, DType::f32, fn, "y");
  view_of(old).expect_shape(shape, fn, "y");
  return py::array(old.attr("copy")());
}

Pool2dParams onnx_pool(const char* fn, PoolMode mode, const py::array& x,
                       const std::string& auto_pad, int64_t ceil_mode, int64_t count_include_pad,
                       const Ints& dilations, const Ints& kernel_shape, const Ints& pads,
                       const Ints& strides, const std::string& profile, int64_t opset = 0) {
  view_of(x).expect_rank(4, fn, "x");
  Pool2dParams p;
  p.mode = mode;
  const Profile prof = profile_arg(profile, fn);
  p.window = onnx_window_2d(fn, {kernel_shape, strides, pads, dilations, auto_pad, ceil_mode},
                            x.shape(2), x.shape(3), WindowUse::pool, prof);
  p.count_include_pad = onnx_count_include_pad(fn, count_include_pad);
  p.opset = opset;
  // Integer max pooling has no fp32 semantics (ONNX Runtime runs it in its own
  // loop, which takes negative SAME pads): as in the ONNX runner.
  if (view_of(x).dtype() == DType::f32) apply_profile(p, prof);
  return p;
}

py::array run_pool(const py::array& x, const Pool2dParams& p) {
  TensorView xv = view_of(x);
  py::array y = new_array(xv.dtype(), pool2d_output_shape(xv.shape(), p));
  pool2d(xv, view_of(y), p);
  return y;
}

// Shared body of the per-channel operators: checks x, prepares y, runs op.
template <class Op>
py::array channel_op(const char* fn, const py::object& xo, const py::object& yo, bool result_add,
                     Op op) {
  py::array x = as_dtype(xo, DType::f32, fn, "x");
  TensorView xv = view_of(x);
  xv.expect_rank(4, fn, "x");
  py::array y = start_output(yo, result_add, xv.shape(), fn);
  op(xv, view_of(y), ElementwiseParams{result_add});
  return y;
}

template <class E>
E enum_arg(const std::string& v, const char* fn, const char* name,
           std::initializer_list<std::pair<const char*, E>> choices) {
  std::string all;
  for (const auto& [n, e] : choices) {
    if (v == n) return e;
    all += (all.empty() ? "" : ", ") + std::string(n);
  }
  fail(fn, name, "'" + v + "'", all);
}

// An optional [h, w] list into two window fields (left alone when None).
void set_pair(int64_t& h, int64_t& w, const Ints& v, const char* fn, const char* parameter,
              const char* allowed) {
  if (!v) return;
  check(v->size() == 2, fn, parameter, std::to_string(v->size()) + " values", allowed);
  h = (*v)[0];
  w = (*v)[1];
}

// An optional pad list [top, bottom, left, right] (the seeds' order, not ONNX's).
void set_pads_tblr(Window2d& w, const Ints& pad, const char* fn, const char* allowed) {
  if (!pad) return;
  check(pad->size() == 4, fn, "pad", std::to_string(pad->size()) + " values", allowed);
  w.pad_top = (*pad)[0];
  w.pad_bottom = (*pad)[1];
  w.pad_left = (*pad)[2];
  w.pad_right = (*pad)[3];
}

// ONNX's pooling operators.
void bind_onnx_pools(py::module_& m) {
  def_checked(
      m, "average_pool",
      [](const py::object& xo, const std::string& auto_pad, int64_t ceil_mode,
         int64_t count_include_pad, const Ints& dilations, const Ints& kernel_shape,
         const Ints& pads, const Ints& strides, const std::string& profile, int64_t opset) {
        constexpr const char* fn = "npukit.average_pool";
        py::array x = as_dtype(xo, DType::f32, fn, "x");
        return run_pool(x, onnx_pool(fn, PoolMode::avg, x, auto_pad, ceil_mode, count_include_pad,
                                     dilations, kernel_shape, pads, strides, profile, opset));
      },
      arg("x"), py::kw_only(), arg("auto_pad") = "NOTSET", arg("ceil_mode") = 0,
      arg("count_include_pad") = 0, arg("dilations") = py::none(), arg("kernel_shape") = py::none(),
      arg("pads") = py::none(), arg("strides") = py::none(), arg("profile") = "onnxruntime",
      arg("opset") = 0,
      "ONNX AveragePool on an (N, C, H, W) float32 array; profile 'onnxruntime' or 'pytorch' "
      "sets the divisor rule. opset: the node's ONNX opset, which picks ONNX Runtime's loop "
      "(19 and later: its own loop, before: MLAS); 0 means 19 with dilations, else 18.");
  def_checked(
      m, "max_pool",
      [](const py::object& xo, const std::string& auto_pad, int64_t ceil_mode,
         const Ints& dilations, const Ints& kernel_shape, const Ints& pads, int64_t storage_order,
         const Ints& strides, const std::string& profile) {
        constexpr const char* fn = "npukit.max_pool";
        check_range(fn, "storage_order", storage_order, 0, 0);
        py::array x = as_tensor(xo, fn, "x");
        return run_pool(x, onnx_pool(fn, PoolMode::max, x, auto_pad, ceil_mode, 1, dilations,
                                     kernel_shape, pads, strides, profile));
      },
      arg("x"), py::kw_only(), arg("auto_pad") = "NOTSET", arg("ceil_mode") = 0,
      arg("dilations") = py::none(), arg("kernel_shape") = py::none(), arg("pads") = py::none(),
      arg("storage_order") = 0, arg("strides") = py::none(), arg("profile") = "onnxruntime",
      "ONNX MaxPool (output Y only) on float32, int8 or uint8 (N, C, H, W) arrays.");
  for (auto [name, mode] : {std::pair{"global_average_pool", PoolMode::avg},
                            std::pair{"global_max_pool", PoolMode::max}}) {
    def_checked(
        m, name,
        [mode = mode, name = name](const py::object& xo, const std::string& profile) {
          const std::string fn = std::string("npukit.") + name;
          py::array x = mode == PoolMode::avg ? as_dtype(xo, DType::f32, fn.c_str(), "x")
                                              : as_tensor(xo, fn.c_str(), "x");
          TensorView xv = view_of(x);
          xv.expect_rank(4, fn.c_str(), "x");
          Pool2dParams p = global_pool2d_params(xv.shape(), mode);
          apply_global_profile(p, profile_arg(profile, fn.c_str()));
          py::array y = new_array(xv.dtype(), {xv.dim(0), xv.dim(1), 1, 1});
          pool2d(xv, view_of(y), p);
          return y;
        },
        arg("x"), py::kw_only(), arg("profile") = "onnxruntime",
        "ONNX global pooling of an (N, C, H, W) array to (N, C, 1, 1); the profile sets the NaN "
        "rule of max and the summation of avg.");
  }
}

// Pooling with every parameter of the core, and seed 002's sum pool.
void bind_seed_pools(py::module_& m) {
  def_checked(
      m, "pool2d",
      [](const py::object& xo, const std::string& mode, int64_t kernel_h, int64_t kernel_w,
         int64_t stride_h, int64_t stride_w, int64_t dilation_h, int64_t dilation_w, int64_t ins_h,
         int64_t ins_w, int64_t pad_top, int64_t pad_bottom, int64_t pad_left, int64_t pad_right,
         bool ceil_mode, const std::string& divisor, const std::string& pad_value,
         const std::string& nan, float coeff, const std::string& loop, bool end_pad_crops) {
        constexpr const char* fn = "npukit.pool2d";
        py::array x = as_tensor(xo, fn, "x");
        Pool2dParams p;
        p.mode = enum_arg<PoolMode>(
            mode, fn, "mode",
            {{"avg", PoolMode::avg}, {"max", PoolMode::max}, {"sum", PoolMode::sum}});
        p.window = {kernel_h, kernel_w, stride_h,   stride_w, dilation_h, dilation_w, ins_h,
                    ins_w,    pad_top,  pad_bottom, pad_left, pad_right,  ceil_mode};
        p.divisor = enum_arg<AvgDivisor>(divisor, fn, "divisor",
                                         {{"kernel_area", AvgDivisor::kernel_area},
                                          {"valid_count", AvgDivisor::valid_count},
                                          {"clipped_window", AvgDivisor::clipped_window}});
        p.pad_value = enum_arg<PadValue>(pad_value, fn, "pad_value",
                                         {{"neg_inf", PadValue::neg_inf},
                                          {"neg_flt_max", PadValue::neg_flt_max},
                                          {"zero", PadValue::zero}});
        p.nan = enum_arg<MaxNaN>(nan, fn, "nan",
                                 {{"propagate", MaxNaN::propagate},
                                  {"ignore", MaxNaN::ignore},
                                  {"first_tap", MaxNaN::first_tap}});
        p.loop = enum_arg<PoolLoop>(loop, fn, "loop",
                                    {{"taps", PoolLoop::taps},
                                     {"mlas", PoolLoop::mlas},
                                     {"mlas_nchwc", PoolLoop::mlas_nchwc}});
        p.end_pad_crops = end_pad_crops;
        p.coeff = coeff;
        view_of(x).expect_rank(4, fn, "x");
        return run_pool(x, p);
      },
      arg("x"), py::kw_only(), arg("mode") = "avg", arg("kernel_h") = 1, arg("kernel_w") = 1,
      arg("stride_h") = 1, arg("stride_w") = 1, arg("dilation_h") = 1, arg("dilation_w") = 1,
      arg("ins_h") = 0, arg("ins_w") = 0, arg("pad_top") = 0, arg("pad_bottom") = 0,
      arg("pad_left") = 0, arg("pad_right") = 0, arg("ceil_mode") = false,
      arg("divisor") = "kernel_area", arg("pad_value") = "neg_inf", arg("nan") = "propagate",
      arg("coeff") = 1.0f, arg("loop") = "taps", arg("end_pad_crops") = false,
      "Every pooling parameter of the core: mode avg|max|sum, zero insertion ins_h/ins_w, "
      "divisor kernel_area|valid_count|clipped_window, pad_value neg_inf|neg_flt_max|zero, "
      "nan propagate|ignore|first_tap, loop taps|mlas|mlas_nchwc (ONNX Runtime's MLAS orders).");
  def_checked(
      m, "sum_pool",
      [](const py::object& xo, int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
         int64_t stride_w, int64_t ins_h, int64_t ins_w, const Ints& pad, float coeff) {
        constexpr const char* fn = "npukit.sum_pool";
        py::array x = as_dtype(xo, DType::f32, fn, "x");
        view_of(x).expect_rank(4, fn, "x");
        Pool2dParams p;
        p.mode = PoolMode::sum;
        p.coeff = coeff;
        p.window.kernel_h = kernel_h;
        p.window.kernel_w = kernel_w;
        p.window.stride_h = stride_h;
        p.window.stride_w = stride_w;
        p.window.ins_h = ins_h;
        p.window.ins_w = ins_w;
        set_pads_tblr(p.window, pad, fn, "4 values [top, bottom, left, right] as in seed 002");
        return run_pool(x, p);
      },
      arg("x"), py::kw_only(), arg("kernel_h"), arg("kernel_w"), arg("stride_h") = 1,
      arg("stride_w") = 1, arg("ins_h") = 0, arg("ins_w") = 0, arg("pad") = py::none(),
      arg("coeff") = 1.0f,
      "Seed 002 bm_atomic_sum_pool: window sum times coeff; pad = [top, bottom, left, right].");
}

void bind_conv(py::module_& m) {
  def_checked(
      m, "conv",
      [](const py::object& xo, const py::object& wo, const py::object& bo,
         const std::string& auto_pad, const Ints& dilations, int64_t group,
         const Ints& kernel_shape, const Ints& pads, const Ints& strides, const py::object& yo,
         bool result_add, const std::string& profile) {
        constexpr const char* fn = "npukit.conv";
        py::array x = as_dtype(xo, DType::f32, fn, "x");
        py::array w = as_dtype(wo, DType::f32, fn, "w");
        TensorView xv = view_of(x), wv = view_of(w);
        xv.expect_rank(4, fn, "x");
        wv.expect_rank(4, fn, "w");
        Conv2dParams p;
        p.window = onnx_window_2d(fn, {kernel_shape, strides, pads, dilations, auto_pad, 0},
                                  xv.dim(2), xv.dim(3), WindowUse::conv, Profile::onnxruntime,
                                  {wv.dim(2), wv.dim(3)});
        p.groups = group;
        p.result_add = result_add;
        apply_profile(p, profile_arg(profile, fn));  // the runner's Conv does the same
        py::array b;
        if (!bo.is_none()) {
          b = as_dtype(bo, DType::f32, fn, "b");
          p.has_bias = true;
        }
        const Shape out = conv2d_output_shape(xv.shape(), wv.shape(), p);
        py::array y = start_output(yo, result_add, out, fn);
        conv2d(xv, wv, p.has_bias ? view_of(b) : TensorView(), view_of(y), p);
        return y;
      },
      arg("x"), arg("w"), arg("b") = py::none(), py::kw_only(), arg("auto_pad") = "NOTSET",
      arg("dilations") = py::none(), arg("group") = 1, arg("kernel_shape") = py::none(),
      arg("pads") = py::none(), arg("strides") = py::none(), arg("y") = py::none(),
      arg("result_add") = false, arg("profile") = "onnxruntime",
      "ONNX Conv (2-D, float32) with the profile's summation; result_add=True returns y + "
      "conv(x) (seed 004).");
}

// Seed 004's depthwise convolution.
void bind_depthwise(py::module_& m) {
  def_checked(
      m, "depthwise2d",
      [](const py::object& xo, const py::object& wo, const py::object& bo, const Ints& stride,
         const Ints& pad, const Ints& dilation, const py::object& yo, bool result_add) {
        constexpr const char* fn = "npukit.depthwise2d";
        py::array x = as_dtype(xo, DType::f32, fn, "x");
        py::array w = as_dtype(wo, DType::f32, fn, "w");
        TensorView xv = view_of(x), wv = view_of(w);
        xv.expect_rank(4, fn, "x");
        wv.expect_rank(4, fn, "w");
        check(xv.dim(1) >= 1 && wv.dim(0) >= xv.dim(1) && wv.dim(0) % xv.dim(1) == 0, fn, "w",
              "shape " + shape_text(wv.shape()),
              "(C*multiplier, 1, KH, KW) for x with C = " + std::to_string(xv.dim(1)));
        Depthwise2dParams p;
        p.multiplier = wv.dim(0) / xv.dim(1);
        p.window.kernel_h = wv.dim(2);
        p.window.kernel_w = wv.dim(3);
        set_pair(p.window.stride_h, p.window.stride_w, stride, fn, "stride",
                 "[stride_h, stride_w]");
        set_pair(p.window.dilation_h, p.window.dilation_w, dilation, fn, "dilation",
                 "[dilation_h, dilation_w]");
        set_pads_tblr(p.window, pad, fn, "[top, bottom, left, right]");
        p.result_add = result_add;
        py::array b;
        if (!bo.is_none()) {
          b = as_dtype(bo, DType::f32, fn, "b");
          p.has_bias = true;
        }
        py::array y =
            start_output(yo, result_add, depthwise2d_output_shape(xv.shape(), wv.shape(), p), fn);
        depthwise2d(xv, wv, p.has_bias ? view_of(b) : TensorView(), view_of(y), p);
        return y;
      },
      arg("x"), arg("w"), arg("b") = py::none(), py::kw_only(), arg("stride") = py::none(),
      arg("pad") = py::none(), arg("dilation") = py::none(), arg("y") = py::none(),
      arg("result_add") = false,
      "Depthwise convolution; w is (C*multiplier, 1, KH, KW), pad = [top, bottom, left, right].");
}

// ONNX MatMul and seed 004's matmul.
void bind_matmul(py::module_& m) {
  def_checked(
      m, "mat_mul",
      [](const py::object& ao, const py::object& bo, const std::string& profile) {
        constexpr const char* fn = "npukit.mat_mul";
        // The runner's MatMul (family gemm): sequential fp32 sums, the profiles
        // the table gives that family; others are refused as the runner does.
        expect_supported(OpFamily::gemm, profile_arg(profile, fn), fn);
        py::array a = as_dtype(ao, DType::f32, fn, "a");
        py::array b = as_dtype(bo, DType::f32, fn, "b");
        TensorView av = view_of(a), bv = view_of(b);
        py::array y = new_array(DType::f32, matmul_broadcast_shape(av.shape(), bv.shape()));
        matmul_broadcast(av, bv, view_of(y));
        return y;
      },
      arg("a"), arg("b"), py::kw_only(), arg("profile") = "onnxruntime",
      "ONNX MatMul (numpy.matmul broadcasting, ranks 1 to 4), float32; profile: one the profile "
      "table gives the gemm family (onnxruntime, pytorch and their variants).");
  def_checked(
      m, "matmul",
      [](const py::object& ao, const py::object& bo, const py::object& biaso, const py::object& yo,
         bool result_add) {
        constexpr const char* fn = "npukit.matmul";
        py::array a = as_dtype(ao, DType::f32, fn, "a");
        py::array b = as_dtype(bo, DType::f32, fn, "b");
        TensorView av = view_of(a), bv = view_of(b);
        av.expect_rank(2, fn, "a");
        bv.expect_rank(2, fn, "b");
        MatmulParams p{!biaso.is_none(), result_add};
        py::array bias;
        if (p.has_bias) bias = as_dtype(biaso, DType::f32, fn, "bias");
        py::array y = start_output(yo, result_add, {av.dim(0), bv.dim(1)}, fn);
        matmul(av, bv, p.has_bias ? view_of(bias) : TensorView(), view_of(y), p);
        return y;
      },
      arg("a"), arg("b"), arg("bias") = py::none(), py::kw_only(), arg("y") = py::none(),
      arg("result_add") = false, "Seed 004 matmul: a (M, K) @ b (K, N) + bias (N), result_add.");
}

// Relu and seed 004's per-channel bias and scale.
void bind_elementwise(py::module_& m) {
  def_checked(
      m, "relu",
      [](const py::object& xo, const std::string& profile, const py::object& yo, bool result_add) {
        constexpr const char* fn = "npukit.relu";
        py::array x = as_dtype(xo, DType::f32, fn, "x");
        TensorView xv = view_of(x);
        ElementwiseParams p;
        p.result_add = result_add;
        const Profile prof = semantics_base(profile_arg(profile, fn));
        check(prof == Profile::onnxruntime || prof == Profile::pytorch || prof == Profile::bm1684,
              fn, "profile", profile, "onnxruntime, pytorch or bm1684");
        p.relu_nan = prof == Profile::bm1684 ? ReluNaN::zero : ReluNaN::propagate;
        py::array y = start_output(yo, result_add, xv.shape(), fn);
        relu(xv, view_of(y), p);
        return y;
      },
      arg("x"), py::kw_only(), arg("profile") = "onnxruntime", arg("y") = py::none(),
      arg("result_add") = false, "ONNX Relu; profile bm1684 maps NaN to +0 like okk_bdc_relu.");
  def_checked(
      m, "bias",
      [](const py::object& x, const py::object& b, const py::object& y, bool result_add) {
        return channel_op("npukit.bias", x, y, result_add, [&](auto xv, auto yv, auto p) {
          bias(xv, view_of(as_dtype(b, DType::f32, "npukit.bias", "b")), yv, p);
        });
      },
      arg("x"), arg("b"), py::kw_only(), arg("y") = py::none(), arg("result_add") = false,
      "Seed 004 okk_bdc_bias: x + b[c] on (N, C, H, W).");
  def_checked(
      m, "scale",
      [](const py::object& x, const py::object& s, const py::object& y, bool result_add) {
        return channel_op("npukit.scale", x, y, result_add, [&](auto xv, auto yv, auto p) {
          scale(xv, view_of(as_dtype(s, DType::f32, "npukit.scale", "s")), yv, p);
        });
      },
      arg("x"), arg("s"), py::kw_only(), arg("y") = py::none(), arg("result_add") = false,
      "Seed 004 okk_bdc_scale: x * s[c] on (N, C, H, W).");
  def_checked(
      m, "scale_bias",
      [](const py::object& x, const py::object& s, const py::object& b, const py::object& y,
         bool result_add) {
        constexpr const char* fn = "npukit.scale_bias";
        return channel_op(fn, x, y, result_add, [&](auto xv, auto yv, auto p) {
          scale_bias(xv, view_of(as_dtype(s, DType::f32, fn, "s")),
                     view_of(as_dtype(b, DType::f32, fn, "b")), yv, p);
        });
      },
      arg("x"), arg("s"), arg("b"), py::kw_only(), arg("y") = py::none(), arg("result_add") = false,
      "Seed 004 okk_bdc_scale_bias: x * s[c] + b[c] (two roundings) on (N, C, H, W).");
}

}  // namespace

void bind_fp32(py::module_& m) {
  bind_onnx_pools(m);
  bind_seed_pools(m);
  bind_conv(m);
  bind_depthwise(m);
  bind_matmul(m);
  bind_elementwise(m);
}

}  // namespace npukit::python
