// The stride-2 walk from NCHW planes to a channels-last output (dwconv.hpp,
// DwS2Nhwc), AVX-512 only (the runner holds activations channels-last only
// where AVX-512 kernels run). The group walk would transpose every input
// position of the group's planes into its padded copy; at stride 2 the
// output has a quarter of the input's positions, so here the input is read
// in place with the output columns in the lanes and only the sums are
// transposed. An input line's 32 columns from -pad_left (two masked loads:
// columns outside the input are 0, so their taps add nothing, as padding
// does with finite weights) give the taps kw = 0 (even columns), 1 (odd) and
// 2 (even, one further) by vpermt2ps; a line read for kh = 2 of one output
// row is kh = 0 of the next and is kept. Every lane performs its output's
// scalar sequence: the taps in (kh, kw) order from +0 (FMA for the
// mlas_nchwc orders, else a rounded product and a rounded addition), then
// + bias, old + that, the clip, as the row walk (f32-dwconv-nhwc-body.inc).
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx512-begin.inc"
#if !defined(__clang__)
// GCC 12 flags the undefined pass-through operand of the unmasked shuffles
// inside transpose16 as used uninitialized here (-Wuninitialized, a false
// positive: every lane is written); popped by isa-end.inc.
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace npukit::cpu {
namespace dwconv_s2_nhwc_avx512 {
#include "ops/cpu/f32-lanes-avx512.inc"
#include "ops/cpu/f32-transpose16-avx512.inc"

// One input line's three column taps for the 16 output columns.
struct Line {
  Vec kw0, kw1, kw2;
};

// The masks of an input row's columns -pad_left .. 31 - pad_left inside it.
struct RowMasks {
  Mask lo, hi;
};

RowMasks row_masks(int64_t w, int64_t pad_left) {
  RowMasks m{0, 0};
  for (int64_t i = 0; i < 2 * kLanes; ++i) {
    const int64_t col = i - pad_left;
    if (col < 0 || col >= w) continue;
    if (i < kLanes)
      m.lo = static_cast<Mask>(m.lo | (1u << i));
    else
      m.hi = static_cast<Mask>(m.hi | (1u << (i - kLanes)));
  }
  return m;
}

inline Line split(const float* row, RowMasks m) {
  const Vec a = _mm512_maskz_loadu_ps(m.lo, row), b = _mm512_maskz_loadu_ps(m.hi, row + kLanes);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  // Lane 15 takes column 32 (index 0 here): past kDwS2NhwcMaxWidth, never stored.
  const __m512i next = _mm512_setr_epi32(2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 0);
  return {_mm512_permutex2var_ps(a, even, b), _mm512_permutex2var_ps(a, odd, b),
          _mm512_permutex2var_ps(a, next, b)};
}

template <bool kFma>
inline Vec step(Vec acc, Vec v, Vec w) {
  return kFma ? fmadd(v, w, acc) : add(acc, mul(v, w));
}

// Channels c .. c + K - 1's output rows (K independent chains per row):
// sums[oh][c] holds row oh's 16 column sums of channel c.
template <bool kFma, int K>
void channel_rows(const DwS2Nhwc& g, int64_t c, RowMasks m) {
  const float* plane[K];
  Vec w[K][9];
  for (int k = 0; k < K; ++k) {
    plane[k] = g.x + (c + k) * g.x_channel - g.pad_left;
    for (int t = 0; t < 9; ++t) w[k][t] = set1(g.weights[(c + k) * 9 + t]);
  }
  Line kept[K] = {};
  int64_t kept_row = -1;  // the input row in `kept`
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    Vec acc[K];
    for (int k = 0; k < K; ++k) acc[k] = zero();
    for (int64_t kh = 0; kh < 3; ++kh) {
      const int64_t ih = oh * 2 - g.pad_top + kh;
      if (ih < 0 || ih >= g.h) continue;  // a padded line adds nothing
      const bool have = ih == kept_row;
      for (int k = 0; k < K; ++k) {
        const Line l = have ? kept[k] : split(plane[k] + ih * g.x_row, m);
        acc[k] = step<kFma>(acc[k], l.kw0, w[k][kh * 3]);
        acc[k] = step<kFma>(acc[k], l.kw1, w[k][kh * 3 + 1]);
        acc[k] = step<kFma>(acc[k], l.kw2, w[k][kh * 3 + 2]);
        kept[k] = l;
      }
      kept_row = ih;
    }
    for (int k = 0; k < K; ++k) storeu(g.sums + (oh * kLanes + c + k) * kLanes, acc[k]);
  }
}

// Output row oh: the channels' row sums transposed to one vector per
// position, finished and stored.
void finish_row(const DwS2Nhwc& g, int64_t oh) {
  Vec r[kLanes];
  for (int64_t c = 0; c < kLanes; ++c)
    r[c] = c < g.channels ? loadu(g.sums + (oh * kLanes + c) * kLanes) : zero();
  transpose16(r);
  const Mask m = first_lanes(g.channels);
  const Vec b = g.bias ? loadu(g.bias) : zero(), lo = set1(g.clip_min), hi = set1(g.clip_max);
  float* y = g.y + oh * g.y_row;
  for (int64_t ow = 0; ow < g.ow; ++ow, y += g.y_col) {
    Vec v = r[ow];
    if (g.bias) v = add(v, b);
    if (g.result_add) v = add(load_masked(y, m), v);  // the reference's out + acc
    if (g.clip) v = vmin(hi, vmax(lo, v));
    store_masked(y, m, v);
  }
}

}  // namespace dwconv_s2_nhwc_avx512

void f32_dwconv_s2_nhwc_avx512(const DwS2Nhwc& g) {
  using namespace dwconv_s2_nhwc_avx512;
  const RowMasks m = row_masks(g.w, g.pad_left);
  // Channels in pairs (two chains per row; alone, 192@28: 13.9 -> 12.2 µs;
  // four at once, 36 weight registers: 14.1).
  int64_t c = 0;
  for (; c + 2 <= g.channels; c += 2) {
    if (g.fma)
      channel_rows<true, 2>(g, c, m);
    else
      channel_rows<false, 2>(g, c, m);
  }
  if (c < g.channels) {  // an odd last channel
    if (g.fma)
      channel_rows<true, 1>(g, c, m);
    else
      channel_rows<false, 1>(g, c, m);
  }
  for (int64_t oh = 0; oh < g.oh; ++oh) finish_row(g, oh);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
