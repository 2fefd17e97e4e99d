// Tile kernel of f32-conv-1x1-avx2 (conv_1x1.hpp): P positions x V vectors
// of 8 output channels (blocks of 16, as kOclAvx2's packing), P * V <= 12
// accumulators kept in registers, one broadcast input per position and V
// packed weight loads per step (the loop: f32-conv-ocl-steps.inc, either
// accumulation). The epilogue finishes each output as
// the reference does (acc + bias, then old + that, then the clip) and
// stores channel runs after an 8 x 8 transpose.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "conv_1x1.hpp"
#include "f32-store-first-avx2.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 8;
constexpr int64_t kBlock = 2 * kLanes;  // channels per packed block (kOclAvx2's)
constexpr int kGroup = 8;               // positions per transpose

#include "ops/cpu/f32-conv-ocl-steps.inc"

// ref::clip_f32's two steps: ordered compares are false for NaN (it passes)
// and for -0 against a bound of 0 (-0 passes).
inline __m256 clamp8(const OclTile& t, __m256 v) {
  const __m256 lo = _mm256_set1_ps(t.clip_min), hi = _mm256_set1_ps(t.clip_max);
  v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
}
inline float clamp1(const OclTile& t, float v) {
  if (v < t.clip_min) v = t.clip_min;
  if (v > t.clip_max) v = t.clip_max;
  return v;
}

// r[p]: lanes = 8 channels of position p. Afterwards out[c] holds channel c
// at positions 0..7.
inline void transpose(const __m256 r[kGroup], __m256 out[kGroup]) {
  __m256 t[kGroup], u[kGroup];
  for (int i = 0; i < kGroup; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // per 128-bit half: c0 c0' c1 c1'
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // c2 c2' c3 c3'
  }
  // u[4 h + i]: channel i (low half) and 4 + i (high half) at positions 4 h .. 4 h + 3.
  for (int h = 0; h < 2; ++h) {
    u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xee);
    u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    out[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    out[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

// Stores positions p0 .. p0 + n - 1 (n <= 8, consecutive floats of every
// output plane from y + y_at[p0]) of vector v, whose first `rows` lanes are
// output channels.
inline void store_runs(const OclTile& t, __m256 r[kGroup], int p0, int n, int64_t v, int64_t rows,
                       __m256 b) {
  if (t.bias)
    for (int p = 0; p < kGroup; ++p) r[p] = _mm256_add_ps(r[p], b);
  __m256 out[kGroup];
  transpose(r, out);
  const __m256i m =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  float* base = t.y + v * kLanes * t.y_channel + t.y_at[p0];
  for (int c = 0; c < rows; ++c) {
    float* at = base + c * t.y_channel;
    __m256 x = out[c];
    if (t.result_add) x = _mm256_add_ps(_mm256_maskload_ps(at, m), x);
    if (t.clip) x = clamp8(t, x);
    store_first_f32x8(at, x, n);
  }
}

// Outputs not consecutive (strided planes): element by element.
inline void store_scalar(const OclTile& t, __m256 acc, int64_t p, int64_t v, int64_t rows,
                         __m256 b) {
  alignas(32) float lane[kLanes];
  _mm256_store_ps(lane, t.bias ? _mm256_add_ps(acc, b) : acc);
  float* base = t.y + v * kLanes * t.y_channel + t.y_at[p];
  for (int64_t c = 0; c < rows; ++c) {
    float x = lane[c];
    float* at = base + c * t.y_channel;
    if (t.result_add) x = *at + x;
    if (t.clip) x = clamp1(t, x);
    *at = x;
  }
}

template <int V, int P>
void tile(const OclTile& t) {
  __m256 acc[P][V];
  ocl_steps<V, P>(t, acc);
  bool runs = true;  // the positions' outputs are consecutive floats of each plane
  for (int p = 1; p < P; ++p) runs = runs && t.y_at[p] == t.y_at[0] + p;
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    const int64_t rows = std::min<int64_t>(kLanes, t.rows - v * kLanes);
    if (rows <= 0) break;
    const __m256 b = t.bias ? _mm256_loadu_ps(t.bias + v * kLanes) : _mm256_setzero_ps();
    if (runs) {
#pragma GCC unroll 2
      for (int p0 = 0; p0 < P; p0 += kGroup) {
        __m256 r[kGroup];  // a copy: the accumulators stay registers
#pragma GCC unroll 8
        for (int p = 0; p < kGroup; ++p) r[p] = p0 + p < P ? acc[p0 + p][v] : _mm256_setzero_ps();
        store_runs(t, r, p0, P - p0 < kGroup ? P - p0 : kGroup, v, rows, b);
      }
    } else {
#pragma GCC unroll 12
      for (int p = 0; p < P; ++p) store_scalar(t, acc[p][v], p, v, rows, b);
    }
  }
}

template <int V, int... Ps>
constexpr std::array<OclTileKernel, sizeof...(Ps)> kernels_for(std::integer_sequence<int, Ps...>) {
  return {&tile<V, Ps + 1>...};
}

constexpr auto k1 = kernels_for<1>(std::make_integer_sequence<int, 12>());
constexpr auto k2 = kernels_for<2>(std::make_integer_sequence<int, 6>());

int64_t max_positions(int64_t rows) {
  return rows <= kLanes ? 12 : 6;
}

void tile_dispatch(const OclTile& t) {
  const auto i = static_cast<size_t>(t.positions - 1);
  if (t.rows <= kLanes)
    k1[i](t);
  else
    k2[i](t);
}

}  // namespace

const OclKernel kConv1x1Avx2{tile_dispatch, kBlock, max_positions};

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
