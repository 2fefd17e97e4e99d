// Plane kernel of the fp32 depthwise family for AVX-512: 16 consecutive
// outputs of a row per vector, up to 8 vectors at once (independent chains
// hide the add latency). Per tap: one rounded product, one rounded addition
// per lane (mul and add intrinsics; -ffp-contract=off keeps them apart), or
// one FMA under the mlas_nchwc accumulations.
#include <immintrin.h>

#include <algorithm>

#include "dwconv.hpp"

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 16;
constexpr int kGroup = 8;

// Vectors v0 .. v0 + G - 1 of the plane (row-major over (oh, vector of the row)).
template <int G, bool kInterleaved, bool kFma>
NPUKIT_AVX512 void plane_group(const DwPlane& p, int64_t v0, int64_t per_row) {
  const float* x[G];
  float* y[G];
  __mmask16 m[G];
  for (int i = 0; i < G; ++i) {
    const int64_t oh = (v0 + i) / per_row, ow = (v0 + i) % per_row * kLanes;
    x[i] = p.x + oh * p.stride_h * p.row + ow;
    y[i] = p.y + oh * p.y_row + ow;
    const int64_t lanes = std::min(kLanes, p.ow - ow);
    m[i] = static_cast<__mmask16>((1u << lanes) - 1u);
  }
  __m512 a0[G], a1[G];
  // Unrolled: as a loop, GCC turned this zeroing into a memset of the arrays
  // in memory (rep stos) on every call, which kept them out of registers.
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i) a0[i] = a1[i] = _mm512_setzero_ps();
  int64_t t = 0;
  if (kInterleaved) {
    for (; t + 1 < p.taps; t += 2) {
      const __m512 w0 = _mm512_set1_ps(p.w[t]), w1 = _mm512_set1_ps(p.w[t + 1]);
      const int64_t o0 = p.tap[t], o1 = p.tap[t + 1];
      for (int i = 0; i < G; ++i) {
        a0[i] = _mm512_add_ps(a0[i], _mm512_mul_ps(_mm512_loadu_ps(x[i] + o0), w0));
        a1[i] = _mm512_add_ps(a1[i], _mm512_mul_ps(_mm512_loadu_ps(x[i] + o1), w1));
      }
    }
  }
  for (; t < p.taps; ++t) {  // sequential: every tap; interleaved: an odd last tap (into A0)
    const __m512 w0 = _mm512_set1_ps(p.w[t]);
    const int64_t o0 = p.tap[t];
    for (int i = 0; i < G; ++i)
      a0[i] = kFma ? _mm512_fmadd_ps(_mm512_loadu_ps(x[i] + o0), w0, a0[i])
                   : _mm512_add_ps(a0[i], _mm512_mul_ps(_mm512_loadu_ps(x[i] + o0), w0));
  }
  const __m512 b = _mm512_set1_ps(p.bias);
  for (int i = 0; i < G; ++i) {
    __m512 r = kInterleaved ? _mm512_add_ps(a0[i], a1[i]) : a0[i];
    if (p.has_bias) r = _mm512_add_ps(r, b);
    if (p.result_add) {
      const __m512 old = _mm512_maskz_loadu_ps(m[i], y[i]);
      // Operand order as in the references: sequential out + acc, interleaved r + out.
      r = kInterleaved ? _mm512_add_ps(r, old) : _mm512_add_ps(old, r);
    }
    if (p.clip) {  // ref::clip_f32's two steps (ordered compares: NaN and -0 pass)
      const __m512 lo = _mm512_set1_ps(p.clip_min), hi = _mm512_set1_ps(p.clip_max);
      r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(r, lo, _CMP_LT_OQ), r, lo);
      r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(r, hi, _CMP_GT_OQ), r, hi);
    }
    _mm512_mask_storeu_ps(y[i], m[i], r);
  }
}

template <bool kInterleaved, bool kFma>
NPUKIT_AVX512 void plane(const DwPlane& p) {
  const int64_t per_row = (p.ow + kLanes - 1) / kLanes, vectors = p.oh * per_row;
  int64_t v = 0;
  for (; v + kGroup <= vectors; v += kGroup) plane_group<kGroup, kInterleaved, kFma>(p, v, per_row);
  for (; v + 2 <= vectors; v += 2) plane_group<2, kInterleaved, kFma>(p, v, per_row);
  for (; v < vectors; ++v) plane_group<1, kInterleaved, kFma>(p, v, per_row);
}

}  // namespace

NPUKIT_AVX512 void f32_dwconv_plane_avx512(const DwPlane& p) {
  if (p.interleaved)
    plane<true, false>(p);
  else if (p.fma)
    plane<false, true>(p);
  else
    plane<false, false>(p);
}

}  // namespace npukit::cpu
