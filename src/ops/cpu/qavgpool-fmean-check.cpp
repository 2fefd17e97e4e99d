// ONNX Runtime's float QLinearAveragePool from integer window sums, checked
// (qavgpool.hpp: QAvgPlan::fmean_checked). Compiled for the baseline ISA like
// the reference, so that the redo's fp32 chain is the reference's (no FMA).
//
// Per output the reference computes, in fp32 and in this order,
//   fsum = 0 + t1 + ... + tn,  t_i = x_scale * (x_i - x_zp)
//   v = fsum / div / y_scale + y_zp,  code = round_half_even(clamp(v)).
// Its exact value is V = x_scale * D / (div * y_scale) + y_zp with the
// integer D = sum(x_i) - n * x_zp. A kernel forms D exactly and
// v' = fl(fl(D * c) + y_zp), c = fl(x_scale / (div * y_scale)). Both v and v'
// lie within a bound of V (E_ref and E_fast below, from the largest |x - x_zp|
// and the number of taps), so when v' is closer than 0.5 - E to its nearest
// integer r, v is closer than 0.5 to r: v rounds to r (no tie), and clamping
// commutes with rounding (integer bounds). The lanes that fail the test (a
// fraction of about 2E) redo the reference's chain (qavg_fmean_redo).
#include <cfloat>
#include <cmath>

#include "ops/cpu/qavgpool.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::cpu {

namespace {

// The largest error of rounding a real of magnitude <= z to fp32 (round to
// nearest; 2^-126 also covers results flushed to zero).
double half_ulp(double z) {
  if (z < 0x1p-126) return 0x1p-126;
  int e = 0;
  std::frexp(z, &e);  // z = f * 2^e, f in [0.5, 1): ulp(z) <= 2^(e - 24)
  return std::ldexp(1.0, e - 25);
}

// |v - V| + |v' - V| for outputs with n taps on the input and divisor div
// (M: the largest |x - x_zp|). Every bound is of a magnitude, and rounding
// errors are bounded by half_ulp of a bound on the rounded value.
double check_bound(const QAvgPlan& P, double n, double div, double M) {
  const double s = P.x_scale, ys = P.y_scale, zp = std::abs(static_cast<double>(P.y_zp));
  // Reference: each t_i errs by half_ulp(s*M); partial sums stay below Tn.
  const double At = s * M;
  const double Tn = n * (At + half_ulp(At)) * (1 + 0x1p-14);
  const double e_sum = n * half_ulp(At) + std::max(n - 1, 0.0) * half_ulp(Tn);
  const double q1 = (s * M * n + e_sum) / div;  // |fsum / div|
  const double w1 = (q1 + half_ulp(q1)) / ys;   // |fsum / div / y_scale|
  const double W1 = w1 + half_ulp(w1);
  const double e_ref = e_sum / (div * ys) + half_ulp(q1) / ys + half_ulp(w1) + half_ulp(W1 + zp);
  // Kernel: c errs by half_ulp(c) (+ the double quotient's 2^-53), then the
  // product and the addition of y_zp round once each.
  const double C = s / (div * ys) * (1 + 0x1p-20);
  const double e_c = half_ulp(C) + C * 0x1p-53;
  const double B = M * n * (C + e_c);
  const double e_fast = M * n * e_c + half_ulp(B) + half_ulp(B + half_ulp(B) + zp);
  return (e_ref + e_fast) * (1 + 0x1p-30);
}

}  // namespace

void fmean_check_plan(QAvgPlan& P) {
  P.fmean_checked = false;
  if (P.arith != QAvgArith::float_mean || P.exact_float_sum || P.unsupported) return;
  // Normal scales and multipliers, far from the fp32 range's ends: no
  // subnormal operand anywhere (the bounds above hold without that, but flush
  // and denormals-are-zero modes would then change operands, not results).
  const double lim = 0x1p-100, big = 0x1p100;
  if (!(P.x_scale >= lim && P.x_scale <= big && P.y_scale >= lim && P.y_scale <= big)) return;
  if (P.taps > 257) return;  // the 16-bit sums of the kernels that use it
  const double M = std::max(P.x_zp - P.lo, P.hi - P.x_zp);
  double E = 0;
  const auto taps = static_cast<double>(P.taps);
  for (int64_t d = 1; d <= P.taps; ++d) {
    const auto dd = static_cast<double>(d);
    const double c = static_cast<double>(P.x_scale) / (dd * static_cast<double>(P.y_scale));
    if (c < lim || c > big) return;
    if (P.divisor == AvgDivisor::kernel_area) {
      if (d == P.taps) E = std::max(E, check_bound(P, taps, taps, M));
    } else {
      E = std::max(E, check_bound(P, dd, dd, M));
    }
  }
  // Values within 2^22 keep v' - rint(v') exact and the conversions in range;
  // a bound above 1/64 would send too many lanes to the redo.
  const double vmax = M * taps * static_cast<double>(P.x_scale) / static_cast<double>(P.y_scale) +
                      std::abs(static_cast<double>(P.y_zp));
  if (!(E <= 1.0 / 64) || !(vmax < 0x1p22)) return;
  const double t = 0.5 - E;
  float below = static_cast<float>(t);
  if (static_cast<double>(below) > t) below = std::nextafter(below, 0.0f);
  P.fmean_checked = true;
  P.fmean_check_below = below;
  P.fmean_check_error = E;
}

float fmean_check_multiplier(const QAvgPlan& P, int64_t div) {
  return static_cast<float>(static_cast<double>(P.x_scale) /
                            (static_cast<double>(div) * static_cast<double>(P.y_scale)));
}

template <class T>
int32_t qavg_fmean_redo(const QAvgPlan& P, const T* plane, int64_t sH, int64_t sW, int64_t oh,
                        int64_t ow) {
  const auto h = static_cast<size_t>(oh), w = static_cast<size_t>(ow);
  const int64_t h0 = P.h.first[h], vh = P.h.valid[h], w0 = P.w.first[w], vw = P.w.valid[w];
  float fsum = 0.0f;  // the reference's chain, row-major over the valid taps
  for (int64_t r = h0; r < h0 + vh; ++r)
    for (int64_t c = w0; c < w0 + vw; ++c)
      fsum += P.x_scale * static_cast<float>(static_cast<int32_t>(plane[r * sH + c * sW]) - P.x_zp);
  return qavg_finalize_scalar(P, 0, fsum, vh * vw, int64_t{P.h.clipped[h]} * P.w.clipped[w]);
}

template int32_t qavg_fmean_redo<uint8_t>(const QAvgPlan&, const uint8_t*, int64_t, int64_t,
                                          int64_t, int64_t);
template int32_t qavg_fmean_redo<int8_t>(const QAvgPlan&, const int8_t*, int64_t, int64_t, int64_t,
                                         int64_t);

}  // namespace npukit::cpu
