// AVX-512 VNNI row kernel of the channels-last depthwise integer convolution
// for weights whose w' fits s8 (symmetric weights: zero point 0 for s8, 128
// for u8): four taps per vpdpbusd. Per 64 channels and tap quad, the four
// taps' u8 codes x' are interleaved by byte then word unpacks into 4 vectors
// of 16 lanes x 4 taps, and one vpdpbusd per vector sums a lane's 4 u8 x s8
// products exactly in int32 (12 instructions per 256 products, where the pair
// kernels widen every code to int16). The unpacks leave the channels in the
// order of dw_quad_channel, the weights, offsets and multipliers are packed
// in it, and the saturating packs of the codes restore the channel order.
// The requantization is the NHWC GEMM's (float(acc) * m, one min, rounded
// to even, lower clamp and y_zp by saturating packs).
#include "ops/cpu/qconv_dw_nhwc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512vnni-begin.inc"

#include "ops/cpu/x8-qconv-dw-lanes-avx512vnni.inc"

namespace npukit::qconv {

namespace {

// The accumulators of 64 channels from chunk `ch` (n of them stored).
inline void chunk(const DwNhwcRow& r, const uint8_t* const* tap, uint8_t* y, int64_t ch, int64_t n,
                  const dw_vnni::Requant<64>& rq) {
  const int64_t c0 = ch * kDwQuadChunk, chunks = (r.C + kDwQuadChunk - 1) / kDwQuadChunk;
  // Bytes read per tap: the chunk's channels within Cp (x' holds Cp per pixel).
  const int64_t avail = r.Cp - c0;
  const __mmask64 m = avail >= 64 ? ~__mmask64{0} : (__mmask64{1} << avail) - 1;
  const int32_t* off = r.offset_q + c0;
  __m512i acc[4];
  for (int j = 0; j < 4; ++j) acc[j] = _mm512_loadu_si512(off + 16 * j);
  for (int64_t q = 0; q < r.quads; ++q) {
    const __m512i a = _mm512_maskz_loadu_epi8(m, tap[4 * q] + c0);
    const __m512i b = _mm512_maskz_loadu_epi8(m, tap[4 * q + 1] + c0);
    const __m512i c = _mm512_maskz_loadu_epi8(m, tap[4 * q + 2] + c0);
    const __m512i d = _mm512_maskz_loadu_epi8(m, tap[4 * q + 3] + c0);
    const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
    const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
    const int8_t* w = r.wq + (q * chunks + ch) * kDwQuadChunk * 4;
    acc[0] =
        _mm512_dpbusd_epi32(acc[0], _mm512_unpacklo_epi16(ab_lo, cd_lo), _mm512_loadu_si512(w));
    acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_unpackhi_epi16(ab_lo, cd_lo),
                                 _mm512_loadu_si512(w + 64));
    acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_unpacklo_epi16(ab_hi, cd_hi),
                                 _mm512_loadu_si512(w + 128));
    acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_unpackhi_epi16(ab_hi, cd_hi),
                                 _mm512_loadu_si512(w + 192));
  }
  dw_vnni::store_codes<64>(rq, acc, r.multiplier_q + c0, y + c0, n);
}

}  // namespace

void dw_nhwc_quads_avx512vnni(const DwNhwcRow& r) {
  if (r.wq == nullptr) return dw_nhwc_avx512vnni(r);  // w' does not fit s8
  const int64_t chunks = (r.C + kDwQuadChunk - 1) / kDwQuadChunk;
  const dw_vnni::Requant<64> rq(r.y_zp, r.y_s8);
  const uint8_t* own[kDwNhwcMaxTaps];
  for (int64_t i = 0; i < r.n; ++i) {
    const uint8_t* const* tap = r.tap_ptr;
    if (tap == nullptr) {
      const uint8_t* x = r.x + i * r.x_step;
      for (int64_t t = 0; t < 4 * r.quads; ++t) own[t] = x + r.tap_off[t];
      tap = own;
    }
    uint8_t* y = r.y + i * r.y_step;
    for (int64_t ch = 0; ch < chunks; ++ch) chunk(r, tap, y, ch, r.C - ch * kDwQuadChunk, rq);
  }
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void dw_nhwc_quads_avx512vnni(const DwNhwcRow& r) {
  dw_nhwc_portable(r);
}
}  // namespace npukit::qconv

#endif
