// Plan of the x8-qavgpool-k2s2-nchw kernels (qavgpool-k2s2.hpp): which calls
// they take and the constants of their final step.
#include "ops/cpu/qavgpool-k2s2.hpp"

namespace npukit::cpu {

namespace {

// The rounding of s / 4 as (s + A + corr(s)) >> 2 (arithmetic shift: floor).
// Write s = 4q + r with r in [0, 4); the shift gives q + [r + A + corr >= 4]:
//   floor A = 0; ceil A = 3 (up when r > 0); half up A = 2 (r >= 2); half
//   down A = 1 (r = 3 only); half to even A = 1 and corr = q & 1 (r = 3, or
//   the tie r = 2 when q is odd), q & 1 being bit 2 of s.
// The sign-dependent rules take one rule per sign of s (the sign of s / 4):
//   half away from zero: half up for s >= 0, half down below (A = 2, corr =
//   -1); half toward zero: the other way round (A = 1, corr = +1); toward
//   zero: floor for s >= 0, ceil below (A = 0, corr = +3).
void set_rule(Rounding r, K2s2Plan& K) {
  using Corr = K2s2Plan::Corr;
  K.rule = r;
  switch (r) {
    case Rounding::floor:
      K.add = 0, K.corr = Corr::none;
      return;
    case Rounding::ceil:
      K.add = 3, K.corr = Corr::none;
      return;
    case Rounding::half_up:
      K.add = 2, K.corr = Corr::none;
      return;
    case Rounding::half_down:
      K.add = 1, K.corr = Corr::none;
      return;
    case Rounding::half_to_even:
      K.add = 1, K.corr = Corr::bit2;
      return;
    case Rounding::half_away_from_zero:
      K.add = 2, K.corr = Corr::neg_one;
      return;
    case Rounding::half_toward_zero:
      K.add = 1, K.corr = Corr::neg_plus;
      return;
    case Rounding::toward_zero:
      K.add = 0, K.corr = Corr::neg_three;
      return;
  }
}

const char* k2s2_declines(const QAvgPoolProblem& p) {
  const QAvgPlan& P = p.plan;
  if (P.unsupported) return P.unsupported;
  if (P.bm_shift) return "bm_pool_quantized's shift";
  if (!qavg_int_float_mean(P) && P.arith != QAvgArith::int_mean && !qavg_checked_float(P))
    return "not an integer final step (scale-1 ONNX Runtime float path, or int_mean) or the "
           "checked float tail";
  if (P.h.kernel != 2 || P.w.kernel != 2 || P.h.stride != 2 || P.w.stride != 2)
    return "not a 2x2 window with stride 2";
  if (P.h.start != 0 || P.w.start != 0) return "padding before the first row or column";
  if (2 * P.h.out > P.H || 2 * P.w.out > P.W)
    return "a window past the last row or column (ceil mode)";
  if (p.x.stride(3) != 1 || p.y.stride(3) != 1) return "x or y not unit-stride along W";
  return nullptr;
}

}  // namespace

const char* k2s2_build(const QAvgPoolProblem& p, K2s2Plan* K) {
  if (const char* why = k2s2_declines(p)) return why;
  if (!K) return nullptr;
  const QAvgPlan& P = p.plan;
  const bool int_float_mean = qavg_int_float_mean(P);
  set_rule(int_float_mean ? Rounding::half_to_even : P.rounding, *K);
  // Every divisor is 4: the reference's code is R((s - 4 x_zp + 4 y_zp) / 4).
  K->offset = int_float_mean ? P.y_zp - P.x_zp : 0;
  K->lo = P.lo;
  K->hi = P.hi;
  const int64_t N = P.N, C = P.C, OH = P.h.out, OW = P.w.out;
  const TensorView &x = p.x, &y = p.y;
  K->OW = OW;
  K->x_pitch = x.stride(2);
  K->y_pitch = y.stride(2);
  // Planes one after another in x (every input row of the plane used) and y.
  const bool x_stack = P.H == 2 * OH && x.stride(1) == P.H * x.stride(2) &&
                       (N == 1 || x.stride(0) == C * x.stride(1));
  const bool y_stack =
      y.stride(1) == OH * y.stride(2) && (N == 1 || y.stride(0) == C * y.stride(1));
  K->stacked = x_stack && y_stack;
  K->segments = K->stacked ? 1 : N * C;
  K->seg_rows = K->stacked ? N * C * OH : OH;
  K->pairs = OW <= 32 && y.stride(2) == OW;
  K->OH = OH;
  K->checked = qavg_checked_float(P);
  return nullptr;
}

const char* k2s2_avx2_declines(const QAvgPoolProblem& p) {
  if (const char* why = k2s2_declines(p)) return why;
  if (p.plan.w.out < 16) return "rows of fewer than 16 outputs (the u16 kernels take them)";
  return nullptr;
}

}  // namespace npukit::cpu
