// QLinearAveragePool / QLinearGlobalAveragePool: validation and profiles.
#include <cmath>

#include "core/window_output.hpp"
#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/cpu/qavgpool-flat3x3.hpp"
#include "ops/cpu/qavgpool-k2s2.hpp"
#include "ops/cpu/qavgpool-k3s2.hpp"
#include "ops/cpu/qavgpool-rows16.hpp"
#include "ops/cpu/qavgpool.hpp"
#include "ops/cpu/x8-globalpool.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace cpu {

namespace {

const char* declines_nchw(const QAvgPoolProblem& p) {
  if (p.plan.unsupported) return p.plan.unsupported;
  return p.x.stride(3) == 1 ? nullptr : "x is not unit-stride along W (not NCHW-like)";
}

const char* declines_nhwc(const QAvgPoolProblem& p) {
  if (p.plan.unsupported) return p.plan.unsupported;
  return p.x.stride(1) == 1 ? nullptr : "x is not unit-stride along C (not NHWC-like)";
}

// The float-path kernels keep one dequantized plane per thread.
constexpr int64_t kMaxFmeanPlaneFloats = int64_t{1} << 24;

const char* declines_fmean_nchw(const QAvgPoolProblem& p) {
  const QAvgPlan& P = p.plan;
  if (P.unsupported) return P.unsupported;
  if (P.arith != QAvgArith::float_mean) return "not ONNX Runtime's float path (float_mean)";
  if (P.exact_float_sum) return "exact_float_sum: integer sums give the fp32 sums";
  if (!P.vector_tail) return "rounding other than half to even, or a non-default fp rounding mode";
  if (p.x.stride(3) != 1) return "x is not unit-stride along W (not NCHW-like)";
  if (P.H * (P.W + 2 * P.w.kernel + 64 * P.w.stride) > kMaxFmeanPlaneFloats)
    return "plane too large for the per-thread float buffer";
  return nullptr;
}

// The u16 kernels have the checked float tail (calibrated scales).
const char* declines_u16_nchw(const QAvgPoolProblem& p) {
  return qavg_u16_declines(p, false);
}
// Measured (session 12, one process, 1 thread): on stride-1 rows of more
// than 32 outputs the AVX-512 plane loop (KW masked loads per block and tap
// row) loses to the AVX2 u16 kernel (1x32x40x40 k5s1p2 59 vs 33 us,
// 1x64x112x112 k3s1p1 339 vs 223) and, on calibrated scales, to
// x8-qavgpool-fmean-nchw-avx512 (40x40 k5s1p2 57 vs 43 us).
const char* declines_u16_nchw_avx512(const QAvgPoolProblem& p) {
  if (const char* why = qavg_u16_declines(p, false)) return why;
  if (p.plan.w.stride == 1 && p.plan.w.out > 32)
    return "stride-1 rows of more than 32 outputs (the AVX2 u16 and fmean kernels are faster)";
  return nullptr;
}
const char* declines_u16_nhwc(const QAvgPoolProblem& p) {
  return qavg_u16_declines(p, true);
}

bool vbmi_host() {
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  return vbmi;
#else
  return false;
#endif
}

const char* declines_k2s2_vbmi(const QAvgPoolProblem& p) {
  if (!vbmi_host()) return "the host has no AVX-512 VBMI";
  if (const char* why = k2s2_build(p, nullptr)) return why;
  // 7-output rows (the bundled int8 model's 14 -> 7): 4.7 ms against the
  // float-mean kernel's 1.3 per 1000 images.
  return p.plan.w.out < 8 ? "rows of fewer than 8 outputs (the float-mean kernel is faster)"
                          : nullptr;
}

const char* declines_k3s2_vbmi(const QAvgPoolProblem& p) {
  return vbmi_host() ? k3s2_build(p, nullptr) : "the host has no AVX-512 VBMI";
}

// The plan is kept for the kernel (flat3x3_plan): built once per geometry.
const char* declines_flat3x3(const QAvgPoolProblem& p) {
  const char* why = nullptr;
  flat3x3_plan(p, &why);
  return why;
}

// The AVX2 flat kernel reads the plan's row-tap weights (even W only).
const char* declines_flat3x3_avx2(const QAvgPoolProblem& p) {
  if (const char* why = declines_flat3x3(p)) return why;
  return p.plan.W % 2 ? "odd W (the AVX2 kernel's row-tap weights need rows on even positions)"
                      : nullptr;
}

// Two output rows per step; AVX-512 reads a step's window rows in one load.
const char* declines_rows16_avx512(const QAvgPoolProblem& p) {
  return rows16_build(p, 2, true, nullptr);
}
const char* declines_rows16_avx2(const QAvgPoolProblem& p) {
  return rows16_build(p, 2, false, nullptr, true);
}

const char* declines_fmean_nhwc(const QAvgPoolProblem& p) {
  const QAvgPlan& P = p.plan;
  if (P.unsupported) return P.unsupported;
  if (P.arith != QAvgArith::float_mean) return "not ONNX Runtime's float path (float_mean)";
  if (P.exact_float_sum) return "exact_float_sum: integer sums give the fp32 sums";
  if (!P.vector_tail) return "rounding other than half to even, or a non-default fp rounding mode";
  if (p.x.stride(1) != 1 || p.y.stride(1) != 1) return "x or y not unit-stride along C";
  return nullptr;
}

void run_reference(const QAvgPoolProblem& p) {
  ref::qlinear_average_pool(p.x, p.y, *p.params);
}

}  // namespace

const KernelList<QAvgPoolProblem>& qlinear_average_pool_kernels() {
  static const KernelList<QAvgPoolProblem> list{
      "qlinear_average_pool",
      {
#if defined(__x86_64__)
          {"x8-qavgpool-k2s2-nchw-avx512vbmi", Isa::avx512,
           "2x2 stride-2 windows inside the image, NCHW rows of at least 8 outputs, integer "
           "final step (scale-1 ONNX "
           "Runtime, int_mean) or the checked float tail (calibrated ONNX Runtime), AVX-512 VBMI",
           declines_k2s2_vbmi, x8_qavgpool_k2s2_nchw_avx512vbmi},
          {"x8-qavgpool-k3s2-nchw-avx512vbmi", Isa::avx512,
           "3x3 stride-2 windows, one pixel of padding before the first row and column, none "
           "after the last, NCHW rows, ONNX Runtime (scale 1, or calibrated with the checked "
           "tail), "
           "AVX-512 VBMI",
           declines_k3s2_vbmi, x8_qavgpool_k3s2_nchw_avx512vbmi},
          {"x8-qavgpool-flat3x3-nchw-avx512", Isa::avx512,
           "k3s1p1 on dense NCHW tensors of at least 64 planes, rows of at most 16 columns, "
           "integer final step (scale-1 ONNX Runtime, int_mean)",
           declines_flat3x3, x8_qavgpool_flat3x3_nchw_avx512},
          {"x8-qavgpool-rows16-nchw-avx512", Isa::avx512,
           "rows of at most 16 columns, stride_w 1, integer final step (scale-1 ONNX Runtime, "
           "int_mean)",
           declines_rows16_avx512, x8_qavgpool_rows16_nchw_avx512},
          {"x8-qavgpool-u16-nchw-avx512", Isa::avx512,
           "integer window sums (every profile but GHP; float_mean checked), <= 257 taps, unit "
           "stride along W, stride_w 2 or rows of at most 32 outputs",
           declines_u16_nchw_avx512, x8_qavgpool_u16_nchw_avx512},
          {"x8-qavgpool-u16-nhwc-avx512", Isa::avx512,
           "integer window sums (every profile but GHP; float_mean checked), <= 257 taps, unit "
           "stride along C",
           declines_u16_nhwc, x8_qavgpool_u16_nhwc_avx512},
          {"x8-qavgpool-fmean-nchw-avx512", Isa::avx512,
           "float_mean (ONNX Runtime, calibrated scales), unit stride along W", declines_fmean_nchw,
           x8_qavgpool_fmean_nchw_avx512},
          {"x8-qavgpool-fmean-nhwc-avx512", Isa::avx512,
           "float_mean (ONNX Runtime, calibrated scales), unit stride along C", declines_fmean_nhwc,
           x8_qavgpool_fmean_nhwc_avx512},
          {"x8-qavgpool-k2s2-nchw-avx2", Isa::avx2,
           "2x2 stride-2 windows inside the image, NCHW rows of at least 16 outputs, integer "
           "final step (scale-1 ONNX Runtime, int_mean) or the checked float tail (calibrated "
           "ONNX Runtime)",
           k2s2_avx2_declines, x8_qavgpool_k2s2_nchw_avx2},
          {"x8-qavgpool-k3s2-nchw-avx2", Isa::avx2,
           "3x3 stride-2 windows, one pixel of padding before the first row and column, none "
           "after the last, NCHW rows of at least 16 outputs, ONNX Runtime (scale 1, or "
           "calibrated with the checked tail)",
           k3s2_avx2_declines, x8_qavgpool_k3s2_nchw_avx2},
          {"x8-qavgpool-flat3x3-nchw-avx2", Isa::avx2,
           "k3s1p1 on dense NCHW tensors of at least 64 planes, rows of an even number of at "
           "most 16 columns, integer final step (scale-1 ONNX Runtime, int_mean)",
           declines_flat3x3_avx2, x8_qavgpool_flat3x3_nchw_avx2},
          {"x8-qavgpool-rows16-nchw-avx2", Isa::avx2,
           "rows of at most 16 columns, stride_w 1, integer final step (scale-1 ONNX Runtime, "
           "int_mean) or the checked float tail (calibrated ONNX Runtime)",
           declines_rows16_avx2, x8_qavgpool_rows16_nchw_avx2},
          {"x8-qavgpool-u16-nchw-avx2", Isa::avx2,
           "integer window sums (every profile but GHP; float_mean checked), <= 257 taps, unit "
           "stride along W, stride_w <= 2",
           declines_u16_nchw, x8_qavgpool_u16_nchw_avx2},
          {"x8-qavgpool-u16-nhwc-avx2", Isa::avx2,
           "integer window sums (every profile but GHP; float_mean checked), <= 257 taps, unit "
           "stride along C",
           declines_u16_nhwc, x8_qavgpool_u16_nhwc_avx2},
          {"x8-qavgpool-fmean-nchw-avx2", Isa::avx2,
           "float_mean (ONNX Runtime, calibrated scales), unit stride along W", declines_fmean_nchw,
           x8_qavgpool_fmean_nchw_avx2},
          {"x8-qavgpool-fmean-nhwc-avx2", Isa::avx2,
           "float_mean (ONNX Runtime, calibrated scales), unit stride along C", declines_fmean_nhwc,
           x8_qavgpool_fmean_nhwc_avx2},
          {"x8-qavgpool-nchw-avx512", Isa::avx512, "u8/s8, unit stride along W, every profile",
           declines_nchw, x8_qavgpool_nchw_avx512},
          {"x8-qavgpool-nhwc-avx512", Isa::avx512, "u8/s8, unit stride along C, every profile",
           declines_nhwc, x8_qavgpool_nhwc_avx512},
          {"x8-qavgpool-nchw-avx2", Isa::avx2, "u8/s8, unit stride along W, every profile",
           declines_nchw, x8_qavgpool_nchw_avx2},
          {"x8-qavgpool-nhwc-avx2", Isa::avx2, "u8/s8, unit stride along C, every profile",
           declines_nhwc, x8_qavgpool_nhwc_avx2},
#endif
          {"x8-qavgpool-nchw-portable", Isa::portable, "u8/s8, unit stride along W, every profile",
           declines_nchw, x8_qavgpool_nchw_portable},
          {"x8-qavgpool-nhwc-portable", Isa::portable, "u8/s8, unit stride along C, every profile",
           declines_nhwc, x8_qavgpool_nhwc_portable},
          {"x8-qavgpool-reference", Isa::portable, "always", nullptr, run_reference, true},
      }};
  return list;
}

}  // namespace cpu

const char* qavg_arith_name(QAvgArith a) {
  switch (a) {
    case QAvgArith::float_mean:
      return "float_mean";
    case QAvgArith::int_sum_float:
      return "int_sum_float";
    case QAvgArith::int_sum_ghp:
      return "int_sum_ghp";
    case QAvgArith::int_mean:
      return "int_mean";
    case QAvgArith::int_sum_requant:
      return "int_sum_requant";
  }
  return "invalid";
}

void apply_profile(QLinearAvgPoolParams& p, Profile profile) {
  constexpr const char* fn = "npukit::qlinear_average_pool";
  p.requires_same_quantization = false;
  p.requires_zero_point_zero = false;
  p.whole_image_int_path = false;
  p.ghp_sum_bits = 0;
  switch (semantics_base(profile)) {
    case Profile::onnxruntime:
      p.arith = QAvgArith::float_mean;
      p.divisor = p.count_include_pad ? AvgDivisor::kernel_area : AvgDivisor::valid_count;
      p.whole_image_int_path = true;
      p.rounding = Rounding::half_to_even;
      return;
    case Profile::pytorch:
      // PyTorch 1.13 quantized avg_pool2d (probed: tests/python/test_torch_quant.py).
      p.arith = QAvgArith::int_sum_requant;
      p.divisor = p.count_include_pad ? AvgDivisor::clipped_window : AvgDivisor::valid_count;
      p.rounding = Rounding::half_to_even;
      p.zero_point = QZeroPointRounding::by_memory_format;
      return;
    case Profile::ghp_rtl:
    case Profile::ghp_golden:
      check(p.count_include_pad, fn, "count_include_pad", "0",
            "1 for the GHP accelerator (its pads hold X_z and N = KH*KW)");
      p.arith = QAvgArith::int_sum_ghp;
      p.divisor = AvgDivisor::kernel_area;
      p.ghp_rounding = ghp::post_rounding_for(profile);
      // The RTL's pool engine keeps the window sum in a 14-bit register; the
      // golden model sums exactly.
      p.ghp_sum_bits = profile == Profile::ghp_rtl ? ghp::kPoolSumBits : 0;
      return;
    case Profile::tflite:
      // TFLite / CMSIS-NN int8 AveragePool: mean of the codes over the valid
      // taps, (s + n/2)/n or (s - n/2)/n, i.e. ties away from zero.
      p.arith = QAvgArith::int_mean;
      p.divisor = AvgDivisor::valid_count;
      p.rounding = Rounding::half_away_from_zero;
      p.requires_same_quantization = true;
      return;
    case Profile::mico:
      // MiCo-Lib: int32 sum / valid_count with C division, scale preserved.
      p.arith = QAvgArith::int_mean;
      p.divisor = AvgDivisor::valid_count;
      p.rounding = Rounding::toward_zero;
      p.requires_same_quantization = true;
      p.requires_zero_point_zero = true;
      return;
    default:
      fail(fn, "profile", profile_name(profile),
           "onnxruntime, pytorch, ghp_rtl, ghp_golden, tflite or mico");
  }
}

Shape qlinear_average_pool_output_shape(const Shape& x, const QLinearAvgPoolParams& p) {
  return window_output_shape(x, p.window, "npukit::qlinear_average_pool");
}

void qlinear_average_pool(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p) {
  constexpr const char* fn = "npukit::qlinear_average_pool";
  detail::expect_code_dtype(x, fn, "x.dtype");
  x.expect_rank(4, fn, "x");
  // Messages are built only on failure (fail, not check): this runs per call.
  if (y.dtype() != x.dtype()) fail(fn, "y.dtype", dtype_name(y.dtype()), dtype_name(x.dtype()));
  expect_window_output(x, y, p.window, fn);  // the output shape's checks, allocation-free
  if (p.window.dilation_h != 1 || p.window.dilation_w != 1)
    fail(fn, "dilation",
         std::to_string(p.window.dilation_h) + "x" + std::to_string(p.window.dilation_w),
         "1x1 (QLinearAveragePool has no dilation)");
  if (p.window.ins_h != 0 || p.window.ins_w != 0)
    fail(fn, "ins", std::to_string(p.window.ins_h) + "x" + std::to_string(p.window.ins_w), "0x0");
  detail::check_scale(p.x_scale, fn, "x_scale");
  detail::check_scale(p.y_scale, fn, "y_scale");
  detail::check_zero_point(p.x_zero_point, x.dtype(), fn, "x_zero_point");
  detail::check_zero_point(p.y_zero_point, y.dtype(), fn, "y_zero_point");
  // int32 window sums: 255 * taps must fit (comment at kMaxInt32Taps).
  check_range(fn, "kernel_h*kernel_w", p.window.kernel_h * p.window.kernel_w, 1, kMaxInt32Taps);
  check_range(fn, "H*W", x.dim(2) * x.dim(3), 1, kMaxInt32Taps);
  if (p.requires_same_quantization) {
    if (p.y_scale != p.x_scale)
      fail(fn, "y_scale", std::to_string(p.y_scale),
           "x_scale = " + std::to_string(p.x_scale) +
               " (this profile averages the codes and keeps the input's scale; requantize "
               "separately)");
    if (p.y_zero_point != p.x_zero_point)
      fail(fn, "y_zero_point", std::to_string(p.y_zero_point),
           "x_zero_point = " + std::to_string(p.x_zero_point) +
               " (this profile keeps the input's zero point)");
  }
  if (p.requires_zero_point_zero && p.x_zero_point != 0)
    fail(fn, "x_zero_point", std::to_string(p.x_zero_point), "0 (this profile has no zero point)");
  // No system averages codes or dequantized taps over the window clipped to the
  // padding: refuse it rather than divide by something else.
  if ((p.arith == QAvgArith::float_mean || p.arith == QAvgArith::int_mean) &&
      p.divisor == AvgDivisor::clipped_window)
    fail(fn, "divisor", avg_divisor_name(p.divisor),
         std::string("kernel_area or valid_count (") + qavg_arith_name(p.arith) +
             " has no clipped-window divisor)");
  if (p.arith == QAvgArith::int_sum_ghp) {
    if (x.dtype() != DType::u8)
      fail(fn, "x.dtype", dtype_name(x.dtype()),
           "u8 (the GHP accelerator's activations are uint8)");
    if (p.divisor != AvgDivisor::kernel_area)
      fail(fn, "divisor", avg_divisor_name(p.divisor),
           "kernel_area (GHP: N = KH*KW, count_include_pad = 1)");
    check_range(fn, "ghp_sum_bits", p.ghp_sum_bits, 0, 32);
  }
  if (impl() == Impl::reference) return ref::qlinear_average_pool(x, y, p);
  // A whole-plane window (QLinearGlobalAveragePool) needs no window plan.
  if (cpu::qavg_is_global(x, y, p))
    return cpu::qlinear_global_average_pool_kernels().run(cpu::QGlobalAvgProblem{x, y, &p});
  cpu::QAvgPoolProblem problem{x, y, &p, cpu::make_qavg_plan(x, y, p)};
  cpu::qlinear_average_pool_kernels().run(problem);
}

void qlinear_global_average_pool(const TensorView& x, const TensorView& y,
                                 const QLinearAvgPoolParams& p) {
  x.expect_rank(4, "npukit::qlinear_global_average_pool", "x");
  QLinearAvgPoolParams g = p;
  g.window = Window2d{};
  g.window.kernel_h = x.dim(2);
  g.window.kernel_w = x.dim(3);
  qlinear_average_pool(x, y, g);
}

}  // namespace npukit
