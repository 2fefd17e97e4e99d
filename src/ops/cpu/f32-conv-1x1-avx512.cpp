// Tile kernel of f32-conv-1x1-avx512 (conv_1x1.hpp): P positions x V
// vectors of 16 output channels, P * V <= 24 accumulators, one broadcast
// input per position and V packed weight loads per step (the loop:
// f32-conv-ocl-steps.inc, either accumulation). The epilogue finishes each output as the reference
// does (acc + bias, then old + that, then the clip) and stores channel runs after a transpose.
#include <immintrin.h>

#include <array>
#include <utility>

#include "conv_1x1.hpp"

#include "ops/cpu/isa-avx512-begin.inc"
#if !defined(__clang__)
// GCC 12 also calls the undefined operand of the unpack intrinsics "used
// uninitialized" once store_runs is compiled on its own (false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 16;
constexpr int kGroup = 8;  // positions per transpose

#define NPUKIT_OCL_AVX512
#include "ops/cpu/f32-conv-ocl-steps.inc"

// ref::clip_f32's two steps: ordered compares are false for NaN (it passes)
// and for -0 against a bound of 0 (-0 passes).
inline __m256 clamp8(const OclTile& t, __m256 v) {
  const __m256 lo = _mm256_set1_ps(t.clip_min), hi = _mm256_set1_ps(t.clip_max);
  v = _mm256_mask_blend_ps(_mm256_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  return _mm256_mask_blend_ps(_mm256_cmp_ps_mask(v, hi, _CMP_GT_OQ), v, hi);
}
inline float clamp1(const OclTile& t, float v) {
  if (v < t.clip_min) v = t.clip_min;
  if (v > t.clip_max) v = t.clip_max;
  return v;
}

// r[p]: lanes = 16 channels of position p. Afterwards out[j] holds, for
// j = 4 h + i, channel 4 (2 h) + i in its low half and channel 4 (2 h + 1) + i
// in its high half, positions 0..7 in order.
inline void transpose(const __m512 r[kGroup], __m512 out[kGroup]) {
  __m512 t[kGroup];
  for (int i = 0; i < kGroup; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);      // per 128-bit block: c0 c0' c1 c1'
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);  // c2 c2' c3 c3'
  }
  __m512 u[kGroup];  // u[4 h + i]: per block k, channel 4 k + i at positions 4 h .. 4 h + 3
  for (int h = 0; h < 2; ++h) {
    const __m512d a = _mm512_castps_pd(t[4 * h]), b = _mm512_castps_pd(t[4 * h + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * h + 2]), d = _mm512_castps_pd(t[4 * h + 3]);
    u[4 * h + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * h + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * h + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // Blocks k of positions 0-3 and 4-7 side by side: channels of blocks 0, 1
  // (out[i]) and 2, 3 (out[4 + i]).
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int i = 0; i < 4; ++i) {
    out[i] = _mm512_permutex2var_ps(u[i], lo, u[4 + i]);
    out[4 + i] = _mm512_permutex2var_ps(u[i], hi, u[4 + i]);
  }
}

// Channel c's 8 positions in the transpose's output.
inline __m256 channel_run(const __m512 out[kGroup], int c) {
  const int k = c / 4, i = c % 4;
  const __m512 v = out[(k / 2) * 4 + i];
  return k % 2 == 0 ? _mm512_castps512_ps256(v) : _mm512_extractf32x8_ps(v, 1);
}

// Stores positions p0 .. p0 + n - 1 (n <= 8, consecutive floats of every
// output plane from y + y_at[p0]) of vector v, whose first `rows` lanes are
// output channels.
inline void store_runs(const OclTile& t, __m512 r[kGroup], int p0, int n, int64_t v, int64_t rows,
                       __m512 b) {
  if (t.bias)
    for (int p = 0; p < kGroup; ++p) r[p] = _mm512_add_ps(r[p], b);
  __m512 out[kGroup];
  transpose(r, out);
  const __mmask8 m = static_cast<__mmask8>((1u << n) - 1u);
  float* base = t.y + v * kLanes * t.y_channel + t.y_at[p0];
  for (int c = 0; c < rows; ++c) {
    float* at = base + c * t.y_channel;
    __m256 x = channel_run(out, c);
    if (t.result_add) x = _mm256_add_ps(_mm256_maskz_loadu_ps(m, at), x);
    if (t.clip) x = clamp8(t, x);
    _mm256_mask_storeu_ps(at, m, x);
  }
}

// Outputs not consecutive (strided planes): element by element.
inline void store_scalar(const OclTile& t, __m512 acc, int64_t p, int64_t v, int64_t rows,
                         __m512 b) {
  alignas(64) float lane[kLanes];
  _mm512_store_ps(lane, t.bias ? _mm512_add_ps(acc, b) : acc);
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
  __m512 acc[P][V];
  ocl_steps<V, P>(t, acc);
  bool runs = true;  // the positions' outputs are consecutive floats of each plane
  for (int p = 1; p < P; ++p) runs = runs && t.y_at[p] == t.y_at[0] + p;
  for (int v = 0; v < V; ++v) {
    const int64_t rows = std::min<int64_t>(kLanes, t.rows - v * kLanes);
    if (rows <= 0) break;
    const __m512 b = t.bias ? _mm512_loadu_ps(t.bias + v * kLanes) : _mm512_setzero_ps();
    if (runs) {
#pragma GCC unroll 2
      for (int p0 = 0; p0 < P; p0 += kGroup) {
        __m512 r[kGroup];  // a copy: the accumulators stay registers
#pragma GCC unroll 8
        for (int p = 0; p < kGroup; ++p) r[p] = p0 + p < P ? acc[p0 + p][v] : _mm512_setzero_ps();
        store_runs(t, r, p0, P - p0 < kGroup ? P - p0 : kGroup, v, rows, b);
      }
    } else {
      for (int p = 0; p < P; ++p) store_scalar(t, acc[p][v], p, v, rows, b);
    }
  }
}

template <int V, int... Ps>
constexpr std::array<OclTileKernel, sizeof...(Ps)> kernels_for(std::integer_sequence<int, Ps...>) {
  return {&tile<V, Ps + 1>...};
}

constexpr auto k1 = kernels_for<1>(std::make_integer_sequence<int, 12>());
constexpr auto k2 = kernels_for<2>(std::make_integer_sequence<int, 12>());
constexpr auto k3 = kernels_for<3>(std::make_integer_sequence<int, 8>());
constexpr auto k4 = kernels_for<4>(std::make_integer_sequence<int, 6>());

int64_t max_positions(int64_t rows) {
  const int64_t vectors = (rows + kLanes - 1) / kLanes;
  return vectors <= 2 ? 12 : 24 / vectors;
}

void tile_dispatch(const OclTile& t) {
  const auto i = static_cast<size_t>(t.positions - 1);
  switch ((t.rows + kLanes - 1) / kLanes) {
    case 1:
      return k1[i](t);
    case 2:
      return k2[i](t);
    case 3:
      return k3[i](t);
    default:
      return k4[i](t);
  }
}

}  // namespace

const OclKernel kConv1x1Avx512{tile_dispatch, kOclMaxBlock, max_positions};

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
