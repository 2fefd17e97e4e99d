// u16_final and lane_consts (qavgpool-u16-final.hpp), shared by the AVX2 and
// AVX-512 u16 average kernels.
#include "ops/cpu/qavgpool-u16-final.hpp"

#include "npukit/ops/pool2d.hpp"

namespace npukit::cpu {

U16Final u16_final(const QAvgPlan& P) {
  U16Final F;
  F.plan = &P;
  F.s8 = P.dtype == DType::s8;
  F.area = P.divisor == AvgDivisor::kernel_area;
  F.rounding = P.rounding;
  F.zp_inside = P.zp_inside;
  F.ys_one = P.y_scale == 1.0f;
  const auto taps = static_cast<int32_t>(P.taps);
  F.pow2_rcp = F.area && F.ys_one && (taps & (taps - 1)) == 0;
  F.kind = P.bm_shift                              ? U16Final::bm_shift
           : P.arith == QAvgArith::int_mean        ? U16Final::int_mean
           : P.arith == QAvgArith::int_sum_requant ? U16Final::requant
                                                   : U16Final::float_mean;
  // x_scale == y_scale == 2^j (normal): the kernels' integer form of float_mean.
  if (F.kind == U16Final::float_mean && P.sum_m == 1 && P.x_scale == P.y_scale &&
      P.y_scale >= 0x1p-60f && P.y_scale <= 0x1p60f)
    F.kind = U16Final::int_float_mean;
  if (F.kind == U16Final::float_mean && !P.exact_float_sum && P.fmean_checked)
    F.kind = U16Final::float_checked;
  F.rshift = P.bm_rshift;
  F.lo_code = P.bm_shift && P.bm_relu && P.lo < 0 ? 0 : P.lo;  // ReLU after saturation
  return F;
}

LaneConsts lane_consts(const U16Final& F, int32_t valid, int32_t clipped) {
  const QAvgPlan& P = *F.plan;
  const auto d = static_cast<int32_t>(avg_divisor(P.divisor, P.taps, valid, clipped));
  LaneConsts c;
  c.offset = -(F.s8 ? 128 : 0) * valid;  // the taps' bias
  switch (F.kind) {
    case U16Final::bm_shift:
      break;
    case U16Final::int_mean:
      c.r = static_cast<float>(d > 0 ? d : 0);
      break;
    case U16Final::int_float_mean:
      c.offset += -P.x_zp * valid + P.y_zp * d;
      c.r = static_cast<float>(d);
      break;
    case U16Final::requant:
      c.offset -= P.x_zp * valid;
      c.r = d > 0 ? P.scale_ratio / static_cast<float>(d) : 0.0f;  // 0: y_zp
      break;
    case U16Final::float_mean:
      c.offset -= P.x_zp * valid;
      c.r = static_cast<float>(valid > 0 ? valid : 1);
      break;
    case U16Final::float_checked:  // d == 0: D == 0, v' = y_zp
      c.offset -= P.x_zp * valid;
      c.r = d > 0 ? fmean_check_multiplier(P, d) : 0.0f;
      break;
  }
  return c;
}

}  // namespace npukit::cpu
