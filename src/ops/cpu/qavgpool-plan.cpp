// Per-call plan of the fast QLinearAveragePool kernels and the reference's
// final step for one output (qavgpool.hpp).
#include <algorithm>
#include <cfenv>
#include <cmath>

#include "ops/cpu/qavgpool.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::cpu {

namespace {

// PyTorch's test for its channels-last kernel (as in the reference).
bool channels_last_contiguous(const TensorView& x) {
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (x.dim(d) == 1) continue;
    if (x.stride(d) != expected) return false;
    expected *= x.dim(d);
  }
  return true;
}

// Fills `a` from the reference's tap table; false when a window's taps are not
// the contiguous run start + o*stride + k the kernels assume.
bool make_axis(const AxisWindow& w, int64_t out, QAvgAxis& a) {
  const AxisTaps t = axis_taps(w, out);
  a.out = out;
  a.kernel = w.kernel;
  a.stride = w.stride;
  a.start = -w.pad_begin;
  a.first.assign(static_cast<size_t>(out), 0);
  a.valid.assign(static_cast<size_t>(out), 0);
  a.clipped.assign(static_cast<size_t>(out), 0);
  for (int64_t o = 0; o < out; ++o) {
    int64_t first = -1, valid = 0, clipped = 0;
    for (int64_t k = 0; k < w.kernel; ++k) {
      const Tap kind = t.kind_at(o, k);
      clipped += kind != Tap::outside;
      if (kind != Tap::input) {
        if (kind == Tap::inserted_zero) return false;
        continue;
      }
      const int64_t pos = a.start + o * w.stride + k;
      if (t.index_at(o, k) != pos || pos < 0 || pos >= w.in) return false;
      if (first < 0) first = pos;
      if (pos != first + valid) return false;  // not contiguous
      ++valid;
    }
    const auto i = static_cast<size_t>(o);
    a.first[i] = static_cast<int32_t>(first < 0 ? 0 : first);
    a.valid[i] = static_cast<int32_t>(valid);
    a.clipped[i] = static_cast<int32_t>(clipped);
    a.any_empty = a.any_empty || valid == 0;
  }
  return true;
}

// float_mean adds t(d) = fl(x_scale * d), d = x - x_zp in [-255, 255], from
// +0 in fp32. Write x_scale = m * 2^k with m odd (m < 2^24). When
// m * 255 * taps <= 2^24, every t(d) = m*d * 2^k is exact (|m*d| < 2^24) and
// every partial sum is an integer multiple of 2^k of magnitude at most
// 2^24 * 2^k, hence exactly representable (k >= -149 keeps denormals on that
// grid): the fp32 sum is the exact sum m * (sum(x) - valid * x_zp) * 2^k in
// any order, and integer sums give the reference's bits. Scales with short
// mantissas (1, 0.5, 0.125, 3/64, ...) qualify; typical calibrated ones do not.
void exact_float_sum(float x_scale, QAvgPlan& P) {
  int e = 0;
  const double f = std::frexp(static_cast<double>(x_scale), &e);  // x_scale = f * 2^e
  auto m = static_cast<int64_t>(std::ldexp(f, 24));               // exact: 24 bits
  int k = e - 24;
  if (m <= 0) return;
  while (m % 2 == 0) m /= 2, ++k;
  if (m * 255 * P.taps > (int64_t{1} << 24) || k < -149 || k > 127) return;
  P.exact_float_sum = true;
  P.sum_m = static_cast<int32_t>(m);
  P.sum_pow2 = std::ldexp(1.0f, k);
}

}  // namespace

bool qavg_int_float_mean(const QAvgPlan& P) {
  return P.arith == QAvgArith::float_mean && P.exact_float_sum && P.sum_m == 1 &&
         P.x_scale == P.y_scale && P.y_scale >= 0x1p-60f && P.y_scale <= 0x1p60f && P.vector_tail;
}

bool qavg_checked_float(const QAvgPlan& P) {
  return P.arith == QAvgArith::float_mean && !P.exact_float_sum && P.fmean_checked && P.vector_tail;
}

namespace {

// make_qavg_plan's step for ONNX Runtime's float path: the checks that keep
// the kernels' fp32 sums where the reference's are.
void plan_float_mean(const QLinearAvgPoolParams& p, double sum_bound, QAvgPlan& P) {
  // fp32 sums must stay finite (the reference would compute inf - inf = NaN
  // and throw); an empty window would divide 0 by 0 under valid_count.
  if (static_cast<double>(p.x_scale) * sum_bound > 1e37 ||
      static_cast<double>(p.x_scale) * sum_bound / static_cast<double>(p.y_scale) > 1e37)
    P.unsupported = "x_scale / y_scale so large that fp32 sums may overflow";
  if (P.divisor != AvgDivisor::kernel_area && (P.h.any_empty || P.w.any_empty))
    P.unsupported = "a window with no input tap would divide by 0";
  exact_float_sum(p.x_scale, P);
}

// make_qavg_plan's step for the integer sums requantized by the scale ratio.
void plan_int_sum_requant(const TensorView& x, const QLinearAvgPoolParams& p, double sum_bound,
                          QAvgPlan& P) {
  P.scale_ratio = p.x_scale / p.y_scale;
  // The reference rounds v = acc * M to int64 before clamping: keep |v| far
  // below 2^62 so that it never throws where this kernel would clamp.
  if (!(static_cast<double>(P.scale_ratio) * sum_bound < 1e18))
    P.unsupported = "x_scale / y_scale so large that the reference's rounding overflows";
  if (P.taps < 65536) {  // one division per divisor, not per output
    P.multiplier_by_divisor.assign(static_cast<size_t>(P.taps + 1), 0.0f);
    for (int64_t d = 1; d <= P.taps; ++d)
      P.multiplier_by_divisor[static_cast<size_t>(d)] = P.scale_ratio / static_cast<float>(d);
  }
  P.zp_inside =
      p.zero_point == QZeroPointRounding::inside ||
      (p.zero_point == QZeroPointRounding::by_memory_format && !channels_last_contiguous(x));
}

// make_qavg_plan's step for GHP's integer post-processing (and its table of
// every possible sum's code when that is cheaper than computing them).
void plan_int_sum_ghp(const TensorView& y, const QLinearAvgPoolParams& p, QAvgPlan& P) {
  const double m1 = static_cast<double>(p.x_scale) /
                    (static_cast<double>(P.taps) * static_cast<double>(p.y_scale));
  P.post.rounding = p.ghp_rounding;
  const ghp::Multiplier mult = ghp::decompose_multiplier(m1, p.ghp_m1_edge);
  P.post.m1 = mult.m1;
  P.post.n1 = mult.n1;
  P.post.y_zp = p.y_zero_point;
  ghp::check_post_proc(P.post, "npukit::qlinear_average_pool");
  P.sum_mask = p.ghp_sum_bits > 0 ? (int64_t{1} << p.ghp_sum_bits) - 1 : -1;
  // u8 codes and zero point: s <= 255 * taps, and masked s <= sum_mask.
  const int64_t smax = P.sum_mask >= 0 ? std::min(P.sum_mask, 255 * P.taps) : 255 * P.taps;
  const int64_t outputs = P.N * P.C * y.dim(2) * y.dim(3);
  if (P.dtype == DType::u8 && smax < (int64_t{1} << 20) && 4 * (smax + 1) <= outputs) {
    P.ghp_table.resize(static_cast<size_t>(smax + 1));
    for (int64_t s = 0; s <= smax; ++s)
      P.ghp_table[static_cast<size_t>(s)] = ghp::requantize(s - P.taps * P.x_zp, P.post);
  }
}

}  // namespace

QAvgPlan make_qavg_plan(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p) {
  QAvgPlan P;
  const Window2d& win = p.window;
  P.dtype = x.dtype();
  P.N = x.dim(0);
  P.C = x.dim(1);
  P.H = x.dim(2);
  P.W = x.dim(3);
  P.taps = win.kernel_h * win.kernel_w;
  const detail::CodeRange r = detail::code_range(P.dtype);
  P.lo = r.lo;
  P.hi = r.hi;
  P.x_zp = p.x_zero_point;
  P.y_zp = p.y_zero_point;
  P.x_scale = p.x_scale;
  P.y_scale = p.y_scale;
  P.divisor = p.divisor;
  P.rounding = p.rounding;
  const bool whole_image = p.whole_image_int_path && win.kernel_h == P.H && win.kernel_w == P.W &&
                           win.pad_top == 0 && win.pad_bottom == 0 && win.pad_left == 0 &&
                           win.pad_right == 0;
  P.arith = whole_image ? QAvgArith::int_sum_float : p.arith;
  if (!make_axis(axis_h(win, P.H), y.dim(2), P.h) || !make_axis(axis_w(win, P.W), y.dim(3), P.w))
    P.unsupported = "window taps are not one contiguous run per axis";
  const auto taps = static_cast<float>(P.taps);
  // Largest |x - x_zp| times the taps: bounds every sum the kernels form.
  const double sum_bound = 256.0 * static_cast<double>(P.taps);
  switch (P.arith) {
    case QAvgArith::float_mean:
      plan_float_mean(p, sum_bound, P);
      break;
    case QAvgArith::int_sum_float:
      P.int_sum_multiplier = p.x_scale / (p.y_scale * taps);
      if (!std::isfinite(P.int_sum_multiplier)) P.unsupported = "the fp32 multiplier is not finite";
      break;
    case QAvgArith::int_sum_requant:
      plan_int_sum_requant(x, p, sum_bound, P);
      break;
    case QAvgArith::int_sum_ghp:
      plan_int_sum_ghp(y, p, P);
      break;
    case QAvgArith::int_mean:
      break;
  }
  P.vector_tail = P.rounding == Rounding::half_to_even && std::fegetround() == FE_TONEAREST;
  if (P.vector_tail) fmean_check_plan(P);
  return P;
}

QAvgPlan make_bm_pool_plan(const TensorView& x, const TensorView& y, const BmPoolQuantParams& p) {
  QAvgPlan P;
  P.dtype = x.dtype();
  P.N = x.dim(0);
  P.C = x.dim(1);
  P.H = x.dim(2);
  P.W = x.dim(3);
  P.taps = p.window.kernel_h * p.window.kernel_w;
  const detail::CodeRange r = detail::code_range(P.dtype);
  P.lo = r.lo;
  P.hi = r.hi;
  P.arith = QAvgArith::int_mean;  // any integer arithmetic: the kernels form sums
  P.bm_shift = true;
  P.bm_rshift = p.rshift;
  P.bm_relu = p.relu;
  if (p.mode != QuantPoolMode::avg)
    P.unsupported = "max pooling (x8-bmpool-max-pool2d takes it)";
  else if (!make_axis(axis_h(p.window, P.H), y.dim(2), P.h) ||
           !make_axis(axis_w(p.window, P.W), y.dim(3), P.w))
    P.unsupported = "zero insertion or dilation (taps are not one contiguous run per axis)";
  return P;
}

const char* qavg_u16_declines(const QAvgPoolProblem& p, bool nhwc) {
  const QAvgPlan& P = p.plan;
  if (P.unsupported) return P.unsupported;
  if (!P.bm_shift) switch (P.arith) {
      case QAvgArith::float_mean:
        if (!P.exact_float_sum && !P.fmean_checked)
          return "float_mean whose fp32 error bound is too large for the checked tail";
        [[fallthrough]];
      case QAvgArith::int_sum_requant:
        if (!P.vector_tail)
          return "rounding other than half to even, or a non-default fp rounding mode";
        break;
      case QAvgArith::int_mean:
        break;
      case QAvgArith::int_sum_float:
        return "whole-image integer path (one output per plane)";
      case QAvgArith::int_sum_ghp:
        return "GHP post-processing (its lookup table)";
    }
  if (P.taps > 257) return "more than 257 taps (16-bit window sums)";
  if (nhwc) {
    if (p.x.stride(1) != 1 || p.y.stride(1) != 1) return "x or y not unit-stride along C";
    return nullptr;
  }
  if (p.x.stride(3) != 1 || p.y.stride(3) != 1) return "x or y not unit-stride along W";
  if (P.w.stride > 2) return "stride along W above 2";
  if (P.h.out * P.w.out == 1) return "one output per plane (whole-plane sums)";
  // Measured: on rows this short the per-row cost of the checked tail loses to
  // x8-qavgpool-fmean-nchw (the bundled Fashion-MNIST model's 16x14x14 k2s2
  // pool, 7 outputs per row: 6.5 against 2.5 ms per 1000 images).
  if (P.arith == QAvgArith::float_mean && !P.exact_float_sum && P.w.out < 8)
    return "ONNX Runtime's float path on rows of fewer than 8 outputs (the fmean kernel is faster)";
  return nullptr;
}

int32_t qavg_finalize_scalar(const QAvgPlan& P, int64_t sum, float fsum, int64_t valid,
                             int64_t clipped) {
  const int64_t N = P.taps;
  const auto flo = static_cast<float>(P.lo), fhi = static_cast<float>(P.hi);
  switch (P.arith) {
    case QAvgArith::float_mean: {
      const int64_t div = avg_divisor(P.divisor, N, valid, clipped);
      const float avg = fsum / static_cast<float>(div);
      const float v = avg / P.y_scale + static_cast<float>(P.y_zp);
      return static_cast<int32_t>(round_to_int(v < flo ? flo : v > fhi ? fhi : v, P.rounding));
    }
    case QAvgArith::int_sum_float: {
      const int64_t acc = sum - int64_t{P.x_zp} * N;
      return detail::requantize_float(static_cast<int32_t>(acc), P.int_sum_multiplier, P.y_zp,
                                      detail::CodeRange{P.lo, P.hi}, P.rounding);
    }
    case QAvgArith::int_sum_ghp: {
      int64_t s = sum + (N - valid) * P.x_zp;  // taps off the input read X_z
      if (P.sum_mask >= 0) s &= P.sum_mask;
      return ghp::requantize(s - N * P.x_zp, P.post);
    }
    case QAvgArith::int_sum_requant: {
      const int64_t div = avg_divisor(P.divisor, N, valid, clipped);
      if (div == 0) return P.y_zp;
      const auto acc = static_cast<int32_t>(sum - int64_t{P.x_zp} * valid);
      const float v = static_cast<float>(acc) * (P.scale_ratio / static_cast<float>(div));
      const auto zp = static_cast<float>(P.y_zp);
      const float rounded = P.zp_inside ? static_cast<float>(round_to_int(v + zp, P.rounding))
                                        : static_cast<float>(round_to_int(v, P.rounding)) + zp;
      return static_cast<int32_t>(rounded < flo ? flo : rounded > fhi ? fhi : rounded);
    }
    case QAvgArith::int_mean: {
      const int64_t div = avg_divisor(P.divisor, N, valid, clipped);
      return div == 0 ? P.y_zp
                      : static_cast<int32_t>(saturate(div_round(sum, div, P.rounding), P.lo, P.hi));
    }
  }
  return 0;
}

}  // namespace npukit::cpu
