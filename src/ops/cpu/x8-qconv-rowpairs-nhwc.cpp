// The row-pairs convolution's conditions and per-call plan (qconv_rowpairs.hpp).
#include "ops/cpu/qconv_nhwc.hpp"
#include "ops/cpu/qconv_rowpairs.hpp"

namespace npukit::qconv {

namespace {

uint32_t u32(int64_t v) {
  return static_cast<uint32_t>(static_cast<uint64_t>(v));
}

}  // namespace

const char* rowpairs_declines(const QConvProblem& p) {
  const int64_t C = p.x.dim(1), KW = p.w.dim(3);
  if (C > 2) return "more than 2 input channels (channel quads waste little)";
  if (KW > 1 && p.window.dilation_w != 1) return "dilated across (a window row is not contiguous)";
  if (C * KW > kRowPairsMaxBytes) return "a window row holds more than 8 codes";
  return nhwc_declines(p);  // one group, exact, requantized, symmetric weights, ...
}

RowPairsPlan rowpairs_plan(const QConvProblem& p, int64_t unit) {
  RowPairsPlan s;
  s.C = p.x.dim(1), s.KH = p.w.dim(2), s.KW = p.w.dim(3), s.OC = p.w.dim(0);
  s.groups = (s.OC + kRowPairsLanes - 1) / kRowPairsLanes;
  s.unit = unit, s.row_units = (s.C * s.KW + unit - 1) / unit;
  s.flip = p.x.dtype() == DType::s8 ? 0x80 : 0;
  s.x_zp = p.x_zp + (s.flip ? 128 : 0);
  const uint8_t wflip = p.w.dtype() == DType::u8 ? 0x80 : 0;  // u8 w - 128 as s8 bits
  const auto* wb = static_cast<const uint8_t*>(p.w.raw());
  const int64_t padded = s.groups * kRowPairsLanes;
  const auto size = static_cast<size_t>(padded * s.KH * s.row_units * unit);
  if (unit == 2)
    s.w16.assign(size, 0);
  else
    s.w8.assign(size, 0);
  s.offset.assign(static_cast<size_t>(padded), 0);
  s.multiplier.assign(static_cast<size_t>(padded), 1.0f);
  for (int64_t o = 0; o < s.OC; ++o) {
    uint32_t sum = 0;
    for (int64_t kh = 0; kh < s.KH; ++kh)
      for (int64_t b = 0; b < s.C * s.KW; ++b) {  // byte b of the row: (kw, c) = (b / C, b % C)
        const int64_t c = b % s.C, kw = b / s.C;
        const auto v = static_cast<int8_t>(
            wb[o * p.w.stride(0) + c * p.w.stride(1) + kh * p.w.stride(2) + kw * p.w.stride(3)] ^
            wflip);
        sum += u32(v);
        const int64_t g = o / kRowPairsLanes, lane = o % kRowPairsLanes;
        const auto at = static_cast<size_t>(
            (((g * s.KH + kh) * s.row_units + b / unit) * kRowPairsLanes + lane) * unit + b % unit);
        if (unit == 2)
          s.w16[at] = v;
        else
          s.w8[at] = v;
      }
    const int64_t bias =
        p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[o * p.bias.stride(0)] : 0;
    s.offset[static_cast<size_t>(o)] = static_cast<int32_t>(u32(bias) - u32(s.x_zp) * sum);
    s.multiplier[static_cast<size_t>(o)] = p.multiplier(o);  // as the reference
  }
  return s;
}

}  // namespace npukit::qconv
