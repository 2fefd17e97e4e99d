// f32-conv-nchw-s2-avx512's band kernel (conv_nchw_s2.hpp): blocks of one
// vector of 16 output columns times R <= 12 output channels, every
// accumulator and running total in a register (2 R of them), each input
// row's three taps split from two pairs of loads (masked at the plane's
// edges) by permutes and shared by the R channels, whose weights are
// broadcast from memory inside the FMAs. (Blocks of 2 vectors x 4 or 6
// channels, whose broadcasts the vectors share, were slower: 0.200 against
// 0.186 ms for the stem, 8 channels x 1 vector; 12 x 1: 0.149.)
#include <immintrin.h>

#include <algorithm>

#include "conv_nchw_s2.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 16;

// The lanes of a 16-float load at column s that fall inside [0, w): the
// others read as the padding's zeros (and touch no memory).
inline __mmask16 columns_inside(int64_t s, int64_t w) {
  const int64_t lo = std::clamp<int64_t>(-s, 0, kLanes);
  const int64_t hi = std::clamp<int64_t>(w - s, 0, kLanes);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// One output vector: per kernel row kh, where its loads start in the first
// input channel and their masks (loads at columns c0, c0 + 16, c0 + 2,
// c0 + 17 for c0 = 2 ow0 - pad_left; all off for a row in the padding).
struct Vector {
  const float* at[3];
  __mmask16 load[3][4];
  int64_t out;      // offset of its first output in an output plane
  __mmask16 lanes;  // lanes on outputs
  bool whole;       // every load whole (no column nor row in the padding)
};

Vector vector_at(const ConvS2Band& b, int64_t k) {
  const int64_t oh = k / b.vectors_per_row, ow0 = k % b.vectors_per_row * kLanes;
  const int64_t c0 = 2 * ow0 - b.pad_left;
  const __mmask16 cols[4] = {columns_inside(c0, b.w), columns_inside(c0 + 16, b.w),
                             columns_inside(c0 + 2, b.w), columns_inside(c0 + 17, b.w)};
  Vector v;
  v.whole = (cols[0] & cols[1] & cols[2] & cols[3]) == 0xffff;
  for (int kh = 0; kh < 3; ++kh) {
    const int64_t ih = 2 * oh + kh - b.pad_top;
    const bool inside = ih >= 0 && ih < b.h;
    v.whole = v.whole && inside;
    v.at[kh] = inside ? b.x + ih * b.x_row + c0 : b.x;
    for (int j = 0; j < 4; ++j) v.load[kh][j] = inside ? cols[j] : 0;
  }
  v.out = oh * b.y_row + ow0;
  v.lanes = columns_inside(ow0, b.ow);
  return v;
}

// Kernel row kh's three taps of vector v in input channel c: columns
// 2 (ow0 + l) + kw - pad_left, the even and odd lanes of 32 columns from c0
// (kw = 0, 1) and columns c0 + 2, c0 + 4, .. c0 + 32 (kw = 2) from the loads
// at c0 + 2 and c0 + 17: the second one ends at the last column used, so a
// row's last vector reads no column past it (the stem's 224 = 2 x 112
// columns: no masked load there).
template <bool Whole>
inline void row_taps(const Vector& v, int kh, int64_t channel_offset, __m512 (&tap)[3]) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i third =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
  const float* p = v.at[kh] + channel_offset;
  const __mmask16* m = v.load[kh];
  __m512 a0, a1, b0, b1;
  if constexpr (Whole) {
    a0 = _mm512_loadu_ps(p);
    a1 = _mm512_loadu_ps(p + 16);
    b0 = _mm512_loadu_ps(p + 2);
    b1 = _mm512_loadu_ps(p + 17);
  } else {
    a0 = _mm512_maskz_loadu_ps(m[0], p);
    a1 = _mm512_maskz_loadu_ps(m[1], p + 16);
    b0 = _mm512_maskz_loadu_ps(m[2], p + 2);
    b1 = _mm512_maskz_loadu_ps(m[3], p + 17);
  }
  tap[0] = _mm512_permutex2var_ps(a0, even, a1);
  tap[1] = _mm512_permutex2var_ps(a0, odd, a1);
  tap[2] = _mm512_permutex2var_ps(b0, third, b1);
}

// The outputs of R channels from oc0 for vector v: per input channel a
// chain of 9 FMAs from +0 in (kh, kw) order, then tot = chain + tot; then
// + bias, old + that, clip, as f32-conv-nchw-avx512's finish. Whole:
// unmasked loads.
template <int R, bool Whole>
__attribute__((noinline)) void block(const ConvS2Band& b, const Vector& v, int64_t oc0) {
  const float* w = b.packed + oc0 * b.ic * 9;  // (c, kh, kw, r)
  float* y = b.y + oc0 * b.y_channel + v.out;
  __m512 tot[R];
  if (b.residual_first)
    for (int r = 0; r < R; ++r) tot[r] = _mm512_maskz_loadu_ps(v.lanes, y + r * b.y_channel);
  for (int64_t c = 0; c < b.ic; ++c, w += 9 * R) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int kh = 0; kh < 3; ++kh) {
      __m512 tap[3];
      row_taps<Whole>(v, kh, c * b.x_channel, tap);
      for (int kw = 0; kw < 3; ++kw)
        for (int r = 0; r < R; ++r)
          acc[r] = _mm512_fmadd_ps(tap[kw], _mm512_set1_ps(w[(kh * 3 + kw) * R + r]), acc[r]);
    }
    for (int r = 0; r < R; ++r)
      tot[r] = c == 0 && !b.residual_first ? acc[r] : _mm512_add_ps(acc[r], tot[r]);
  }
  // The finish from locals: b's fields would be reloaded after every store
  // (a float store may alias them).
  const float* bias = b.bias ? b.bias + oc0 : nullptr;
  const bool add_old = b.result_add && !b.residual_first, clip = b.clip;
  const __m512 lo = _mm512_set1_ps(b.clip_min), hi = _mm512_set1_ps(b.clip_max);
  const int64_t plane = b.y_channel;
  const __mmask16 lanes = v.lanes;
  for (int r = 0; r < R; ++r) {
    float* o = y + r * plane;
    __m512 s = tot[r];
    if (bias) s = _mm512_add_ps(s, _mm512_set1_ps(bias[r]));
    if (add_old) s = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, o), s);
    // ref::clip_f32's order (see f32-conv-nchw-avx512.cpp's clamp).
    if (clip) s = _mm512_min_ps(hi, _mm512_max_ps(lo, s));
    _mm512_mask_storeu_ps(o, lanes, s);
  }
}

// The last `left` (< kConvS2Rows) channels from oc0, as one block of R = left.
template <int R, bool Whole>
void rest(const ConvS2Band& b, const Vector& vec, int64_t oc0, int64_t left) {
  if constexpr (R > 0) {
    if (left == R) return block<R, Whole>(b, vec, oc0);
    rest<R - 1, Whole>(b, vec, oc0, left);
  }
}

template <bool Whole>
void channels(const ConvS2Band& b, const Vector& vec) {
  int64_t oc0 = 0;
  for (; oc0 + kConvS2Rows <= b.oc; oc0 += kConvS2Rows) block<kConvS2Rows, Whole>(b, vec, oc0);
  rest<kConvS2Rows - 1, Whole>(b, vec, oc0, b.oc - oc0);
}

}  // namespace

void conv_nchw_s2_band_avx512(const ConvS2Band& b) {
  for (int64_t k = b.k0; k < b.k1; ++k) {
    const Vector v = vector_at(b, k);
    if (v.whole)
      channels<true>(b, v);
    else
      channels<false>(b, v);
  }
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
