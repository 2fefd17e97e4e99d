// Tile kernel of the fp32 convolution's output-channels-in-lanes form for
// AVX-512: P positions x V vectors of 16 output channels, P * V <= 24
// accumulators. Per step one broadcast input per position and V weight
// loads; per lane one rounded product and one rounded addition (mul and add
// intrinsics; -ffp-contract=off keeps them apart), in the reference's step
// order. Outputs are scattered to their planes.
#include <immintrin.h>

#include <array>
#include <utility>

#include "conv_nchw.hpp"

#define NPUKIT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 16;

// ref::clip_f32's two steps, literally: ordered compares are false for a
// NaN v (it passes), and -0 < 0 is false (-0 passes a bound of 0).
NPUKIT_AVX512 inline __m512 clamp(const OclTile& t, __m512 v) {
  const __m512 lo = _mm512_set1_ps(t.clip_min), hi = _mm512_set1_ps(t.clip_max);
  v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), v, hi);
}

template <int V, int P>
NPUKIT_AVX512 void tile(const OclTile& t) {
  const float* x[P];
  for (int p = 0; p < P; ++p) x[p] = t.x + t.q[p];
  __m512 acc[P][V];
#pragma GCC unroll 24
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_ps();
  const float* w = t.w;
  for (int64_t e = 0; e < t.steps; ++e, w += kOclMaxBlock) {
    const int64_t o = t.offset[e];
    __m512 wv[V];
    for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_ps(w + v * kLanes);
    for (int p = 0; p < P; ++p) {
      const __m512 xb = _mm512_set1_ps(x[p][o]);
      for (int v = 0; v < V; ++v) acc[p][v] = _mm512_add_ps(acc[p][v], _mm512_mul_ps(xb, wv[v]));
    }
  }
  // Lane l of vector v is output channel 16 v + l: its plane is l * y_channel
  // floats after the vector's first.
  const __m512i index =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(t.y_channel)));
  for (int v = 0; v < V; ++v) {
    const int64_t rows = t.rows - v * kLanes;
    const __mmask16 m =
        rows >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << rows) - 1u);
    float* base = t.y + v * kLanes * t.y_channel;
    const __m512 b = t.bias ? _mm512_loadu_ps(t.bias + v * kLanes) : _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) {
      float* at = base + t.y_at[p];
      __m512 r = acc[p][v];
      if (t.bias) r = _mm512_add_ps(r, b);
      if (t.result_add)
        r = _mm512_add_ps(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, index, at, 4), r);
      if (t.clip) r = clamp(t, r);
      _mm512_mask_i32scatter_ps(at, m, index, r, 4);
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

void tile_avx512(const OclTile& t) {
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

const OclKernel kOclAvx512{tile_avx512, kOclMaxBlock, max_positions};

}  // namespace npukit::cpu
