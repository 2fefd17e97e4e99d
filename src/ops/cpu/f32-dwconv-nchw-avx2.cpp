// Plane kernel of the fp32 depthwise family for AVX2: 8 consecutive outputs
// of a row per vector, up to 4 vectors at once (independent chains hide the
// add latency). Per tap: one rounded product, one rounded addition per lane
// (mul and add intrinsics, no FMA; -ffp-contract=off keeps them apart).
#include <immintrin.h>

#include <algorithm>

#include "dwconv.hpp"

#define NPUKIT_AVX2 __attribute__((target("avx2,fma")))

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 8;
constexpr int kGroup = 4;

// All-ones in the first `lanes` lanes.
NPUKIT_AVX2 __m256i lane_mask(int64_t lanes) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), index);
}

// Vectors v0 .. v0 + G - 1 of the plane (row-major over (oh, vector of the row)).
template <int G, bool kInterleaved, bool kFma>
NPUKIT_AVX2 void plane_group(const DwPlane& p, int64_t v0, int64_t per_row) {
  const float* x[G];
  float* y[G];
  __m256i m[G];
  for (int i = 0; i < G; ++i) {
    const int64_t oh = (v0 + i) / per_row, ow = (v0 + i) % per_row * kLanes;
    x[i] = p.x + oh * p.stride_h * p.row + ow;
    y[i] = p.y + oh * p.y_row + ow;
    m[i] = lane_mask(std::min(kLanes, p.ow - ow));
  }
  __m256 a0[G], a1[G];
  // Unrolled: as a loop, GCC turned this zeroing into a memset of the arrays
  // in memory (rep stos) on every call, which kept them out of registers.
#pragma GCC unroll 16
  for (int i = 0; i < G; ++i) a0[i] = a1[i] = _mm256_setzero_ps();
  int64_t t = 0;
  if (kInterleaved) {
    for (; t + 1 < p.taps; t += 2) {
      const __m256 w0 = _mm256_set1_ps(p.w[t]), w1 = _mm256_set1_ps(p.w[t + 1]);
      const int64_t o0 = p.tap[t], o1 = p.tap[t + 1];
      for (int i = 0; i < G; ++i) {
        a0[i] = _mm256_add_ps(a0[i], _mm256_mul_ps(_mm256_loadu_ps(x[i] + o0), w0));
        a1[i] = _mm256_add_ps(a1[i], _mm256_mul_ps(_mm256_loadu_ps(x[i] + o1), w1));
      }
    }
  }
  for (; t < p.taps; ++t) {  // sequential: every tap; interleaved: an odd last tap (into A0)
    const __m256 w0 = _mm256_set1_ps(p.w[t]);
    const int64_t o0 = p.tap[t];
    for (int i = 0; i < G; ++i)
      a0[i] = kFma ? _mm256_fmadd_ps(_mm256_loadu_ps(x[i] + o0), w0, a0[i])
                   : _mm256_add_ps(a0[i], _mm256_mul_ps(_mm256_loadu_ps(x[i] + o0), w0));
  }
  const __m256 b = _mm256_set1_ps(p.bias);
  for (int i = 0; i < G; ++i) {
    __m256 r = kInterleaved ? _mm256_add_ps(a0[i], a1[i]) : a0[i];
    if (p.has_bias) r = _mm256_add_ps(r, b);
    if (p.result_add) {
      const __m256 old = _mm256_maskload_ps(y[i], m[i]);
      // Operand order as in the references: sequential out + acc, interleaved r + out.
      r = kInterleaved ? _mm256_add_ps(r, old) : _mm256_add_ps(old, r);
    }
    if (p.clip) {  // ref::clip_f32: max(lo, r) is lo > r ? lo : r (NaN and -0 pass)
      r = _mm256_max_ps(_mm256_set1_ps(p.clip_min), r);
      r = _mm256_min_ps(_mm256_set1_ps(p.clip_max), r);
    }
    _mm256_maskstore_ps(y[i], m[i], r);
  }
}

template <bool kInterleaved, bool kFma>
NPUKIT_AVX2 void plane(const DwPlane& p) {
  const int64_t per_row = (p.ow + kLanes - 1) / kLanes, vectors = p.oh * per_row;
  int64_t v = 0;
  for (; v + kGroup <= vectors; v += kGroup) plane_group<kGroup, kInterleaved, kFma>(p, v, per_row);
  for (; v < vectors; ++v) plane_group<1, kInterleaved, kFma>(p, v, per_row);
}

}  // namespace

NPUKIT_AVX2 void f32_dwconv_plane_avx2(const DwPlane& p) {
  if (p.interleaved)
    plane<true, false>(p);
  else if (p.fma)
    plane<false, true>(p);
  else
    plane<false, false>(p);
}

}  // namespace npukit::cpu
