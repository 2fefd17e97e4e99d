// Quantization math: exact rounding, fixed-point multipliers (gemmlowp/TFLite,
// XNNPACK, MRT/CVM), calibration and the integer convolutions of seed 001/MRT.
// Scalar primitives are numpy-vectorized (they accept arrays and broadcast).
#include "args.hpp"
#include "arrays.hpp"
#include "checked_def.hpp"
#include "npukit/ops/int_conv2d.hpp"
#include "npukit/quant/cvm.hpp"
#include "npukit/quant/gemmlowp.hpp"
#include "npukit/quant/mrt_quant.hpp"
#include "npukit/quant/onnx_quant.hpp"
#include "npukit/quant/rounding.hpp"
#include "npukit/quant/tflite_multiplier.hpp"
#include "npukit/quant/xnnpack_requantization.hpp"

#include <cmath>
#include <limits>

namespace npukit::python {

namespace {

using py::arg;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

TfliteRounding tflite_arg(bool single_rounding) {
  return single_rounding ? TfliteRounding::single_rounding : TfliteRounding::double_rounding;
}

DType qtype_arg(const std::string& name, const char* fn) {
  const DType t = dtype_from_name(name);
  check(t == DType::s8 || t == DType::u8, fn, "dtype", "'" + name + "'", "'int8' or 'uint8'");
  return t;
}

// Exact rounding of quotients, shifts and floats.
void bind_rounding(py::module_& m) {
  def_checked(
      m, "roundings",
      [] {
        std::vector<std::string> names;
        for (Rounding r : all_roundings()) names.emplace_back(rounding_name(r));
        return names;
      },
      "Names of the rounding rules.");
  def_checked(
      m, "div_round",
      [](const py::object& num, const py::object& den, const py::object& rounding) {
        constexpr const char* fn = "npukit.div_round";
        const Rounding r = rounding_from_name(str_arg(rounding, fn, "rounding"));
        return py::vectorize([r](int64_t a, int64_t b) { return div_round(a, b, r); })(
            int_array(num, fn, "num", kInt64Min, kInt64Max),
            int_array(den, fn, "den", kInt64Min, kInt64Max));
      },
      arg("num"), arg("den"), arg("rounding") = "half_to_even",
      "Exact round(num / den) (int64, broadcasting) under a rule from roundings().");
  def_checked(
      m, "shift_round",
      [](const py::object& x, const py::object& shift_obj, const py::object& rounding) {
        constexpr const char* fn = "npukit.shift_round";
        const Rounding r = rounding_from_name(str_arg(rounding, fn, "rounding"));
        const int shift = static_cast<int>(int_arg(shift_obj, fn, "shift", 0, 63));
        return py::vectorize([r, shift](int64_t v) { return shift_round(v, shift, r); })(
            int_array(x, fn, "x", kInt64Min, kInt64Max));
      },
      arg("x"), arg("shift"), arg("rounding") = "half_up",
      "Exact round(x / 2^shift), shift 0..63.");
  def_checked(
      m, "round_to_int",
      [](const py::object& x, const py::object& rounding) {
        constexpr const char* fn = "npukit.round_to_int";
        const Rounding r = rounding_from_name(str_arg(rounding, fn, "rounding"));
        return py::vectorize([r](double v) { return round_to_int(v, r); })(float_array(x, fn, "x"));
      },
      arg("x"), arg("rounding") = "half_to_even", "Exact rounding of float64 values to int64.");
}

// gemmlowp's fixed-point primitives and TFLite's quantized multipliers.
void bind_gemmlowp_tflite(py::module_& m) {
  def_checked(
      m, "saturating_rounding_doubling_high_mul",
      [](const py::object& a, const py::object& b) {
        constexpr const char* fn = "npukit.saturating_rounding_doubling_high_mul";
        return py::vectorize([](int64_t x, int64_t y) {
          return saturating_rounding_doubling_high_mul(static_cast<int32_t>(x),
                                                       static_cast<int32_t>(y));
        })(int_array(a, fn, "a", kInt32Min, kInt32Max),
           int_array(b, fn, "b", kInt32Min, kInt32Max));
      },
      arg("a"), arg("b"), "gemmlowp SaturatingRoundingDoublingHighMul on int32.");
  def_checked(
      m, "rounding_divide_by_pot",
      [](const py::object& x, const py::object& e) {
        constexpr const char* fn = "npukit.rounding_divide_by_pot";
        return py::vectorize([](int64_t v, int64_t k) {
          return rounding_divide_by_pot(static_cast<int32_t>(v), static_cast<int>(k));
        })(int_array(x, fn, "x", kInt32Min, kInt32Max), int_array(e, fn, "exponent", 0, 31));
      },
      arg("x"), arg("exponent"), "gemmlowp RoundingDivideByPOT on int32 (exponent 0..31).");

  def_checked(
      m, "quantize_multiplier",
      [](double M, bool single_rounding, bool checked) {
        const QuantizedMultiplier q = checked ? quantize_multiplier_checked(M)
                                              : quantize_multiplier(M, tflite_arg(single_rounding));
        return py::make_tuple(q.multiplier, q.shift);
      },
      arg("real_multiplier"), py::kw_only(), arg("single_rounding") = false, arg("checked") = false,
      "TFLite QuantizeMultiplier: (multiplier, shift) with M = multiplier * 2^(shift - 31). "
      "checked=True raises instead of flushing/saturating an unrepresentable M.");
  def_checked(
      m, "multiply_by_quantized_multiplier",
      [](const py::object& x, const py::object& multiplier, const py::object& shift,
         bool single_rounding) {
        constexpr const char* fn = "npukit.multiply_by_quantized_multiplier";
        const QuantizedMultiplier q{
            static_cast<int32_t>(int_arg(multiplier, fn, "multiplier", kInt32Min, kInt32Max)),
            static_cast<int>(int_arg(shift, fn, "shift", -1024, 1024))};
        const TfliteRounding r = tflite_arg(single_rounding);
        return py::vectorize([q, r](int64_t v) {
          return multiply_by_quantized_multiplier(static_cast<int32_t>(v), q, r);
        })(int_array(x, fn, "x", kInt32Min, kInt32Max));
      },
      arg("x"), arg("multiplier"), arg("shift"), py::kw_only(), arg("single_rounding") = false,
      "TFLite MultiplyByQuantizedMultiplier (double rounding, or TFLITE_SINGLE_ROUNDING).");
}

// XNNPACK's requantization schemes.
void bind_xnnpack(py::module_& m) {
  def_checked(
      m, "xnnpack_multiplier",
      [](float scale) {
        const XnnpackMantissaMultiplier mm = xnnpack_mantissa_multiplier(scale);
        return py::make_tuple(mm.mantissa, mm.shift);
      },
      arg("scale"),
      "XNNPACK rndnu multiplier: (mantissa, shift) with scale = mantissa * 2^-shift.");
  def_checked(
      m, "xnnpack_requantize",
      [](const py::object& acc, const py::object& scale_obj, const py::object& zp,
         const py::object& qmin_obj, const py::object& qmax_obj, const py::object& scheme_obj) {
        constexpr const char* fn = "npukit.xnnpack_requantize";
        const py::array_t<int64_t> a = int_array(acc, fn, "acc", kInt32Min, kInt32Max);
        const float scale = static_cast<float>(float_arg(scale_obj, fn, "scale"));
        const auto zero_point =
            static_cast<int32_t>(int_arg(zp, fn, "zero_point", kInt32Min, kInt32Max));
        const auto qmin = static_cast<int32_t>(int_arg(qmin_obj, fn, "qmin", kInt32Min, kInt32Max));
        const auto qmax = static_cast<int32_t>(int_arg(qmax_obj, fn, "qmax", kInt32Min, kInt32Max));
        const std::string scheme = str_arg(scheme_obj, fn, "scheme");
        if (scheme == "rndnu") {
          const XnnpackMantissaMultiplier mm = xnnpack_mantissa_multiplier(scale);
          return py::vectorize([=](int64_t v) {
            return xnnpack_requantize_rndnu(static_cast<int32_t>(v), mm, zero_point, qmin, qmax);
          })(a);
        }
        if (scheme == "gemmlowp") {
          const XnnpackQ31Multiplier mm = xnnpack_q31_multiplier(scale);
          return py::vectorize([=](int64_t v) {
            return xnnpack_requantize_gemmlowp(static_cast<int32_t>(v), mm, zero_point, qmin, qmax);
          })(a);
        }
        check(scheme == "fp32", fn, "scheme", "'" + scheme + "'", "'fp32', 'rndnu' or 'gemmlowp'");
        xnnpack_check_fp32_scale(scale);
        return py::vectorize([=](int64_t v) {
          return xnnpack_requantize_fp32(static_cast<int32_t>(v), scale, zero_point, qmin, qmax);
        })(a);
      },
      arg("acc"), arg("scale"), arg("zero_point") = 0, arg("qmin") = -128, arg("qmax") = 127,
      arg("scheme") = "rndnu", "XNNPACK requantization of int32 accumulators.");
}

// MRT/CVM's fixed-point float, shift and clip.
void bind_cvm(py::module_& m) {
  def_checked(
      m, "cvm_float",
      [](double r, int bits) {
        const CvmFloat f = cvm_float(r, bits);
        return py::make_tuple(f.frac, f.exp);
      },
      arg("r"), arg("bits") = 24, "MRT cvm_float: (frac, exp) with r ~= frac * 2^exp.");
  def_checked(
      m, "cvm_right_shift",
      [](const py::object& x, const py::object& shift, const py::object& precision) {
        constexpr const char* fn = "npukit.cvm_right_shift";
        const int s = static_cast<int>(int_arg(shift, fn, "shift", kInt32Min, kInt32Max));
        const int p = static_cast<int>(int_arg(precision, fn, "precision", kInt32Min, kInt32Max));
        return py::vectorize([=](int64_t v) { return cvm_right_shift(v, s, p); })(
            int_array(x, fn, "x", kInt64Min, kInt64Max));
      },
      arg("x"), arg("shift"), arg("precision"),
      "CVM right shift: round(x / 2^shift) ties up, clipped to +-(2^(precision-1) - 1).");
  def_checked(
      m, "cvm_clip",
      [](const py::object& x, const py::object& precision) {
        constexpr const char* fn = "npukit.cvm_clip";
        const int p = static_cast<int>(int_arg(precision, fn, "precision", kInt32Min, kInt32Max));
        return py::vectorize([=](int64_t v) { return cvm_clip(v, p); })(
            int_array(x, fn, "x", kInt64Min, kInt64Max));
      },
      arg("x"), arg("precision"));
  def_checked(
      m, "cvm_requantize",
      [](const py::object& x, const py::object& frac, const py::object& exp,
         const py::object& precision) {
        constexpr const char* fn = "npukit.cvm_requantize";
        const CvmFloat f{int_arg(frac, fn, "frac", kInt64Min, kInt64Max),
                         static_cast<int>(int_arg(exp, fn, "exp", kInt32Min, kInt32Max))};
        const int p = static_cast<int>(int_arg(precision, fn, "precision", kInt32Min, kInt32Max));
        return py::vectorize([=](int64_t v) { return cvm_requantize(v, f, p); })(
            int_array(x, fn, "x", kInt64Min, kInt64Max));
      },
      arg("x"), arg("frac"), arg("exp"), arg("precision"),
      "MRT requantization: cvm shift of frac * x by exp, then the symmetric clip.");
}

// MRT's quantization parameters, calibration and (re/de)quantization.
void bind_mrt_quant(py::module_& m) {
  py::class_<MrtQuantParams>(m, "MrtQuantParams",
                             "MRT scale (sc) and zero point per tensor or channel")
      .def(py::init(checked_call(
               "npukit.MrtQuantParams",
               [](const std::string& scheme, int precision, int axis, std::vector<double> sc,
                  std::vector<double> zp) {
                 constexpr const char* fn = "npukit.MrtQuantParams";
                 check_range(fn, "precision", precision, 2, 16);
                 check_range(fn, "axis", axis, -1, 3);
                 check(!sc.empty() && sc.size() == zp.size(), fn, "sc",
                       std::to_string(sc.size()) + " scales and " + std::to_string(zp.size()) +
                           " zero points",
                       "one or more scales and as many zero points");
                 for (double v : sc)
                   check(std::isfinite(v) && v > 0, fn, "sc", std::to_string(v),
                         "finite scales > 0");
                 for (double v : zp)
                   check(std::isfinite(v), fn, "zp", std::to_string(v), "finite zero points");
                 return MrtQuantParams{mrt_scheme_from_name(scheme), precision, axis, std::move(sc),
                                       std::move(zp)};
               },
               arg("scheme"), arg("precision"), arg("axis"), arg("sc"), arg("zp"))),
           arg("scheme"), arg("precision"), arg("axis"), arg("sc"), arg("zp"))
      .def_property_readonly("scheme",
                             [](const MrtQuantParams& p) { return mrt_scheme_name(p.scheme); })
      .def_readonly("precision", &MrtQuantParams::precision)
      .def_readonly("axis", &MrtQuantParams::axis)
      .def_readonly("sc", &MrtQuantParams::sc)
      .def_readonly("zp", &MrtQuantParams::zp)
      .def("__repr__", [](const MrtQuantParams& p) {
        return "MrtQuantParams(scheme='" + std::string(mrt_scheme_name(p.scheme)) +
               "', precision=" + std::to_string(p.precision) + ", axis=" + std::to_string(p.axis) +
               ", channels=" + std::to_string(p.sc.size()) + ")";
      });
  def_checked(
      m, "mrt_calibrate",
      [](const py::object& x, const std::string& scheme, int precision, int axis) {
        py::array a = as_dtype(x, DType::f32, "npukit.mrt_calibrate", "x");
        return mrt_calibrate(view_of(a), mrt_scheme_from_name(scheme), precision, axis);
      },
      arg("x"), arg("scheme") = "symmetric", arg("precision") = 8, arg("axis") = -1,
      "MRT calibration: scheme 'symmetric', 'seed_affine' or 'zero_point'; axis -1 = layer-wise.");
  def_checked(
      m, "mrt_quantize",
      [](const py::object& x, const MrtQuantParams& p) {
        py::array a = as_dtype(x, DType::f32, "npukit.mrt_quantize", "x");
        return array_of(DType::s32, mrt_quantize(view_of(a), p));
      },
      arg("x"), arg("params"), "float32 -> int32 with the MRT formulas.");
  def_checked(
      m, "mrt_dequantize",
      [](const py::object& q, const MrtQuantParams& p) {
        py::array a = as_tensor(q, "npukit.mrt_dequantize", "q");
        return array_of(DType::f32, mrt_dequantize(view_of(a), p));
      },
      arg("q"), arg("params"));
  def_checked(
      m, "mrt_requantize",
      [](const py::object& q, const MrtQuantParams& from, const MrtQuantParams& to, int bits) {
        py::array a = as_tensor(q, "npukit.mrt_requantize", "q");
        return array_of(DType::s32, mrt_requantize(view_of(a), from, to, bits));
      },
      arg("q"), arg("from_params"), arg("to_params"), arg("bits") = 24,
      "Symmetric integer requantization through cvm_float and cvm_right_shift.");
}

// ONNX quantization parameters, calibration and (re/de)quantization.
void bind_onnx_quant(py::module_& m) {
  py::class_<OnnxQuantParams>(m, "OnnxQuantParams", "ONNX scale / zero point per tensor or axis")
      .def(py::init(checked_call(
               "npukit.OnnxQuantParams",
               [](const std::string& dtype, int axis, std::vector<float> scale,
                  std::vector<int32_t> zero_point) {
                 return OnnxQuantParams{qtype_arg(dtype, "npukit.OnnxQuantParams"), axis,
                                        std::move(scale), std::move(zero_point)};
               },
               arg("dtype"), arg("axis"), arg("scale"), arg("zero_point"))),
           arg("dtype"), arg("axis"), arg("scale"), arg("zero_point"))
      .def_property_readonly(
          "dtype", [](const OnnxQuantParams& p) { return numpy_dtype(p.dtype).attr("name"); })
      .def_readonly("axis", &OnnxQuantParams::axis)
      .def_readonly("scale", &OnnxQuantParams::scale)
      .def_readonly("zero_point", &OnnxQuantParams::zero_point);
  def_checked(
      m, "onnx_calibrate",
      [](const py::object& x, const std::string& dtype, bool symmetric, int axis) {
        constexpr const char* fn = "npukit.onnx_calibrate";
        py::array a = as_dtype(x, DType::f32, fn, "x");
        return onnx_calibrate(view_of(a), qtype_arg(dtype, fn),
                              symmetric ? OnnxCalibration::symmetric : OnnxCalibration::asymmetric,
                              axis);
      },
      arg("x"), arg("dtype") = "uint8", arg("symmetric") = false, arg("axis") = -1,
      "ONNX-style scale / zero point (DynamicQuantizeLinear rule, or symmetric).");
  def_checked(
      m, "onnx_quantize",
      [](const py::object& x, const OnnxQuantParams& p) {
        py::array a = as_dtype(x, DType::f32, "npukit.onnx_quantize", "x");
        return array_of(p.dtype, onnx_quantize(view_of(a), p));
      },
      arg("x"), arg("params"), "saturate(round_half_to_even(x / scale) + zero_point).");
  def_checked(
      m, "onnx_dequantize",
      [](const py::object& q, const OnnxQuantParams& p) {
        py::array a = as_tensor(q, "npukit.onnx_dequantize", "q");
        return array_of(DType::f32, onnx_dequantize(view_of(a), p));
      },
      arg("q"), arg("params"), "(q - zero_point) * scale in float32.");
  def_checked(
      m, "onnx_requantize",
      [](const py::object& q, const OnnxQuantParams& from, const OnnxQuantParams& to) {
        py::array a = as_tensor(q, "npukit.onnx_requantize", "q");
        return array_of(to.dtype, onnx_requantize(view_of(a), from, to));
      },
      arg("q"), arg("from_params"), arg("to_params"));
}

IntConv2dParams conv_params(const char* fn, const py::array& w, const Ints& strides,
                            const Ints& pads, const Ints& dilations, int64_t group,
                            int32_t x_zero_point, int32_t w_zero_point) {
  view_of(w).expect_rank(4, fn, "w");
  IntConv2dParams p;
  p.window = onnx_window_2d(fn, {std::nullopt, strides, pads, dilations, "NOTSET", 0}, 1, 1,
                            WindowUse::conv, Profile::onnxruntime, {w.shape(2), w.shape(3)});
  p.groups = group;
  p.x_zero_point = x_zero_point;
  p.w_zero_point = w_zero_point;
  return p;
}

void bind_int_conv(py::module_& m) {
  def_checked(
      m, "seed_conv2d",
      [](const py::object& xo, const py::object& wo, const Ints& strides, const Ints& pads,
         const Ints& dilations, int64_t group) {
        constexpr const char* fn = "npukit.seed_conv2d";
        py::array x = as_tensor(xo, fn, "x"), w = as_tensor(wo, fn, "w");
        const IntConv2dParams p = conv_params(fn, w, strides, pads, dilations, group, 0, 0);
        py::array y = new_array(DType::s32,
                                int_conv2d_output_shape(view_of(x).shape(), view_of(w).shape(), p));
        seed_conv2d(view_of(x), view_of(w), view_of(y), p);
        return y;
      },
      arg("x"), arg("w"), py::kw_only(), arg("strides") = py::none(), arg("pads") = py::none(),
      arg("dilations") = py::none(), arg("group") = 1,
      "Seed 001 integer convolution (int32 output); ONNX attribute names, pads [t, l, b, r].");
  def_checked(
      m, "zero_point_conv2d",
      [](const py::object& xo, const py::object& wo, int32_t x_zero_point, int32_t w_zero_point,
         const Ints& strides, const Ints& pads, const Ints& dilations, int64_t group) {
        constexpr const char* fn = "npukit.zero_point_conv2d";
        py::array x = as_tensor(xo, fn, "x"), w = as_tensor(wo, fn, "w");
        const IntConv2dParams p =
            conv_params(fn, w, strides, pads, dilations, group, x_zero_point, w_zero_point);
        py::array y = new_array(DType::s32,
                                int_conv2d_output_shape(view_of(x).shape(), view_of(w).shape(), p));
        zero_point_conv2d_expanded(view_of(x), view_of(w), view_of(y), p);
        return y;
      },
      arg("x"), arg("w"), arg("x_zero_point"), arg("w_zero_point"), py::kw_only(),
      arg("strides") = py::none(), arg("pads") = py::none(), arg("dilations") = py::none(),
      arg("group") = 1,
      "MRT's integer expansion of sum (x - x_zero_point)(w - w_zero_point); padding is the real "
      "zero.");
  def_checked(
      m, "mrt_conv2d",
      [](const py::object& xo, const py::object& wo, int32_t x_zero_point, int32_t w_zero_point,
         int64_t frac, int exp, int precision, const Ints& strides, const Ints& pads,
         const Ints& dilations, int64_t group) {
        constexpr const char* fn = "npukit.mrt_conv2d";
        py::array x = as_tensor(xo, fn, "x"), w = as_tensor(wo, fn, "w");
        const IntConv2dParams p =
            conv_params(fn, w, strides, pads, dilations, group, x_zero_point, w_zero_point);
        return array_of(DType::s32,
                        mrt_conv2d(view_of(x), view_of(w), p, CvmFloat{frac, exp}, precision));
      },
      arg("x"), arg("w"), arg("x_zero_point"), arg("w_zero_point"), arg("frac"), arg("exp"),
      arg("precision"), py::kw_only(), arg("strides") = py::none(), arg("pads") = py::none(),
      arg("dilations") = py::none(), arg("group") = 1,
      "zero_point_conv2d, then cvm_requantize(acc, frac, exp, precision).");
}

}  // namespace

void bind_quant_math(py::module_& m) {
  bind_rounding(m);
  bind_gemmlowp_tflite(m);
  bind_xnnpack(m);
  bind_cvm(m);
  bind_mrt_quant(m);
  bind_onnx_quant(m);
  bind_int_conv(m);
}

}  // namespace npukit::python
