// Tile kernel of the fp32 NCHW convolution family for AVX2: blocks of 2 x 8
// consecutive positions (q layout) times up to 6 output channels, 12
// accumulators; per step one rounded product and one rounded addition per
// lane (mul and add intrinsics, no FMA; -ffp-contract=off keeps them apart).
#include <immintrin.h>

#include <algorithm>

#include "conv_nchw.hpp"
#include "f32-store-first-avx2.hpp"

#define NPUKIT_AVX2 __attribute__((target("avx2,fma")))

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 8;
constexpr int kVectors = 2;

// All-ones in lanes [first, first + count).
NPUKIT_AVX2 __m256i lane_mask(int64_t first, int64_t count) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lo = _mm256_cmpgt_epi32(index, _mm256_set1_epi32(static_cast<int>(first) - 1));
  const __m256i hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(first + count)), index);
  return _mm256_and_si256(lo, hi);
}

// Lanes [first, first + count) of v to p + first. VMASKMOVPS stores cost ~12
// cycles on Zen 2/3: from lane 0 (most stores) they are plain stores.
NPUKIT_AVX2 inline void store_lanes(float* p, __m256i m, int64_t first, int64_t count, __m256 v) {
  if (first == 0)
    store_first_f32x8(p, v, count);
  else
    _mm256_maskstore_ps(p, m, v);
}

// ref::clip_f32's two steps: max(lo, v) is lo > v ? lo : v, so a NaN v
// (every comparison false) passes, as does -0 against a bound of 0.
NPUKIT_AVX2 inline __m256 clamp(const ConvTile& t, __m256 v) {
  v = _mm256_max_ps(_mm256_set1_ps(t.clip_min), v);
  return _mm256_min_ps(_mm256_set1_ps(t.clip_max), v);
}

// As the AVX-512 kernel's finish: acc + bias, then old + that, per output row segment.
template <int R>
NPUKIT_AVX2 void finish(const ConvTile& t, const __m256 (&acc)[R], int64_t q, int64_t q_end) {
  if (t.dense) {  // one segment, no division: lanes [0, q_end - q) go to q ..
    const int64_t n = std::min(q_end - q, kLanes);
    const __m256i m = lane_mask(0, n);
    for (int r = 0; r < R; ++r) {
      float* base = t.y[r] + q;
      __m256 v = acc[r];
      if (t.has_bias) v = _mm256_add_ps(v, _mm256_set1_ps(t.bias[r]));
      if (t.result_add) v = _mm256_add_ps(_mm256_maskload_ps(base, m), v);
      if (t.clip) v = clamp(t, v);
      store_lanes(base, m, 0, n, v);
    }
    return;
  }
  int64_t oh = q / t.wq, ow = q % t.wq, lane = 0;
  q_end = std::min(q_end, q + kLanes);
  while (q < q_end) {
    const int64_t seg = std::min(q_end - q, t.wq - ow);
    const int64_t valid = std::clamp<int64_t>(t.ow - ow, 0, seg);
    if (valid > 0) {
      const __m256i m = lane_mask(lane, valid);
      for (int r = 0; r < R; ++r) {
        float* base = t.y[r] + oh * t.y_row + ow - lane;  // lane l goes to base + l
        __m256 v = acc[r];
        if (t.has_bias) v = _mm256_add_ps(v, _mm256_set1_ps(t.bias[r]));
        if (t.result_add) v = _mm256_add_ps(_mm256_maskload_ps(base, m), v);
        if (t.clip) v = clamp(t, v);
        store_lanes(base, m, lane, valid, v);
      }
    }
    lane += seg;
    q += seg;
    ++oh;
    ow = 0;
  }
}

// The old outputs of the rows at positions q .. q + 7 (valid below q_end),
// read where finish would store them; lanes on no output are 0.
template <int R>
NPUKIT_AVX2 void load_old(const ConvTile& t, int64_t q, int64_t q_end, __m256 (&old)[R]) {
  for (int r = 0; r < R; ++r) old[r] = _mm256_setzero_ps();
  if (q >= q_end) return;
  if (t.dense) {
    const __m256i m = lane_mask(0, std::min(q_end - q, kLanes));
    for (int r = 0; r < R; ++r) old[r] = _mm256_maskload_ps(t.y[r] + q, m);
    return;
  }
  int64_t oh = q / t.wq, ow = q % t.wq, lane = 0;
  q_end = std::min(q_end, q + kLanes);
  while (q < q_end) {
    const int64_t seg = std::min(q_end - q, t.wq - ow);
    const int64_t valid = std::clamp<int64_t>(t.ow - ow, 0, seg);
    if (valid > 0) {
      const __m256i m = lane_mask(lane, valid);
      for (int r = 0; r < R; ++r)  // masked-off lanes load 0: OR keeps the earlier segments
        old[r] = _mm256_or_ps(old[r], _mm256_maskload_ps(t.y[r] + oh * t.y_row + ow - lane, m));
    }
    lane += seg;
    q += seg;
    ++oh;
    ow = 0;
  }
}

// Fp32Accumulation::mlas_nchwc*: FMA chains restarting at each chain end,
// their sums kept as tot = chain + tot (from the old outputs with
// residual_first).
template <int R>
NPUKIT_AVX2 void tile_fma(const ConvTile& t) {
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = t.w[r];
  for (int64_t qb = t.q0; qb < t.q1; qb += kLanes * kVectors) {
    __m256 tot[kVectors][R];
    if (t.residual_first)
      for (int v = 0; v < kVectors; ++v) load_old<R>(t, qb + v * kLanes, t.q1, tot[v]);
    const float* x = t.x + qb;
    int64_t e = 0;
    for (int64_t c = 0; c < t.chains; ++c) {
      __m256 acc[kVectors][R];
      for (int v = 0; v < kVectors; ++v)
        for (int r = 0; r < R; ++r) acc[v][r] = _mm256_setzero_ps();
      for (const int64_t end = t.chain_end[c]; e < end; ++e) {
        const float* xe = x + t.offset[e];
        const int32_t wi = t.w_index[e];
        __m256 xv[kVectors];
        for (int v = 0; v < kVectors; ++v) xv[v] = _mm256_loadu_ps(xe + v * kLanes);
        for (int r = 0; r < R; ++r) {
          const __m256 wr = _mm256_set1_ps(w[r][wi]);
          for (int v = 0; v < kVectors; ++v) acc[v][r] = _mm256_fmadd_ps(xv[v], wr, acc[v][r]);
        }
      }
      for (int v = 0; v < kVectors; ++v)
        for (int r = 0; r < R; ++r)
          tot[v][r] = c == 0 && !t.residual_first ? acc[v][r] : _mm256_add_ps(acc[v][r], tot[v][r]);
    }
    for (int v = 0; v < kVectors; ++v) {
      const int64_t q = qb + v * kLanes;
      if (q < t.q1) finish<R>(t, tot[v], q, t.q1);
    }
  }
}

template <int R>
NPUKIT_AVX2 void tile(const ConvTile& t) {
  if (t.fma) return tile_fma<R>(t);
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = t.w[r];
  for (int64_t qb = t.q0; qb < t.q1; qb += kLanes * kVectors) {
    __m256 acc[kVectors][R];
    for (int v = 0; v < kVectors; ++v)
      for (int r = 0; r < R; ++r) acc[v][r] = _mm256_setzero_ps();
    const float* x = t.x + qb;
    for (int64_t e = 0; e < t.steps; ++e) {
      const float* xe = x + t.offset[e];
      __m256 xv[kVectors];
      for (int v = 0; v < kVectors; ++v) xv[v] = _mm256_loadu_ps(xe + v * kLanes);
      for (int r = 0; r < R; ++r) {
        const __m256 wr = _mm256_set1_ps(w[r][e]);
        for (int v = 0; v < kVectors; ++v)
          acc[v][r] = _mm256_add_ps(acc[v][r], _mm256_mul_ps(xv[v], wr));
      }
    }
    for (int v = 0; v < kVectors; ++v) {
      const int64_t q = qb + v * kLanes;
      if (q < t.q1) finish<R>(t, acc[v], q, t.q1);
    }
  }
}

}  // namespace

NPUKIT_AVX2 void f32_conv_tile_avx2(const ConvTile& t) {
  switch (t.rows) {
    case 1:
      return tile<1>(t);
    case 2:
      return tile<2>(t);
    case 3:
      return tile<3>(t);
    case 4:
      return tile<4>(t);
    case 5:
      return tile<5>(t);
    default:
      return tile<6>(t);
  }
}

}  // namespace npukit::cpu
