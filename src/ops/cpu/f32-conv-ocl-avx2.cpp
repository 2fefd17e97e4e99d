// Tile kernel of the fp32 convolution's output-channels-in-lanes form for
// AVX2: P positions x V vectors of 8 output channels, P * V <= 12
// accumulators (16 registers). Per step one broadcast input per position and
// V weight loads (the loop: f32-conv-ocl-steps.inc, either accumulation). AVX2 has no scatter: each
// accumulator goes through a small array and its outputs are finished in scalar code with the
// reference's operations (+ bias, old + that, the clip's two compares).
#include <immintrin.h>

#include <array>
#include <utility>

#include "conv_nchw.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 8;
constexpr int64_t kBlock = 2 * kLanes;  // channels per packed block

#include "ops/cpu/f32-conv-ocl-steps.inc"

template <int V, int P>
void tile(const OclTile& t) {
  __m256 acc[P][V];
  if (!ocl_sums<V, P>(t, acc)) return;  // chains left for later calls
  for (int p = 0; p < P; ++p) {
    alignas(32) float sums[V * kLanes];
    for (int v = 0; v < V; ++v) _mm256_store_ps(sums + v * kLanes, acc[p][v]);
    float* at = t.y + t.y_at[p];
    for (int64_t r = 0; r < t.rows; ++r) {
      float value = sums[r];
      if (t.bias) value = value + t.bias[r];
      float& out = at[r * t.y_channel];
      if (t.result_add) value = out + value;
      if (t.clip) {  // ref::clip_f32's rule: NaN and -0 pass
        if (value < t.clip_min) value = t.clip_min;
        if (value > t.clip_max) value = t.clip_max;
      }
      out = value;
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

void tile_avx2(const OclTile& t) {
  const auto i = static_cast<size_t>(t.positions - 1);
  if (t.rows <= kLanes)
    k1[i](t);
  else
    k2[i](t);
}

}  // namespace

const OclKernel kOclAvx2{tile_avx2, kBlock, max_positions, false, true};

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
