// Tile kernel of the fp32 convolution's output-channels-in-lanes form for
// AVX-512: P positions x V vectors of 16 output channels, P * V <= 24
// accumulators. Per step one broadcast input per position and V weight
// loads (the loop: f32-conv-ocl-steps.inc, either accumulation). Outputs are
// scattered to their planes, or stored by runs after a transpose.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "conv_nchw.hpp"

#include "ops/cpu/isa-avx512-begin.inc"
#if !defined(__clang__)
// GCC 12 calls the undefined operand of the shuffle intrinsics in
// transpose16 "used uninitialized" when store_transposed is compiled on its
// own (false positive, as in f32-conv-1x1-avx512.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define NPUKIT_AVX512

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 16;

#define NPUKIT_OCL_AVX512
#include "ops/cpu/f32-conv-ocl-steps.inc"

// ref::clip_f32's two steps: max_ps(a, b) is a > b ? a : b and min_ps(a, b)
// is a < b ? a : b, so with the bound first a NaN v passes (the compare is
// false) and -0 passes a bound of 0, as in the reference's ordered compares.
NPUKIT_AVX512 inline __m512 clamp(const OclTile& t, __m512 v) {
  v = _mm512_max_ps(_mm512_set1_ps(t.clip_min), v);
  return _mm512_min_ps(_mm512_set1_ps(t.clip_max), v);
}

#include "ops/cpu/f32-transpose16-avx512.inc"

// The epilogue without scatters, for outputs with contiguous rows: bias is
// added per position (acc + bias, the reference's operation), the P x 16
// block of each vector is transposed so that a register holds one channel's
// P positions, and each run of positions that are consecutive in the output
// (t.run_start) is one masked store per channel.
// A scatter per position cost about half of a short reduction's tile.
template <int V, int P>
[[gnu::always_inline]] NPUKIT_AVX512 inline void store_transposed(const OclTile& t,
                                                                  const __m512 (&acc)[P][V]) {
  for (int v = 0; v < V; ++v) {
    const int64_t channels = std::min<int64_t>(kLanes, t.rows - v * kLanes);
    if (channels <= 0) return;
    __m512 r[16];
    const __m512 b = t.bias ? _mm512_loadu_ps(t.bias + v * kLanes) : _mm512_setzero_ps();
    for (int p = 0; p < 16; ++p) {
      if (p < P)
        r[p] = t.bias ? _mm512_add_ps(acc[p][v], b) : acc[p][v];
      else
        r[p] = _mm512_setzero_ps();
    }
    transpose16(r);
    float* base = t.y + v * kLanes * t.y_channel;
    for (int64_t k = 0; k < t.runs; ++k) {
      const int64_t a = t.run_start[k], e = t.run_start[k + 1];
      const __mmask16 m = static_cast<__mmask16>(((1u << (e - a)) - 1u) << a);
      for (int64_t c = 0; c < channels; ++c) {
        // Lane p goes to y_at[a] + (p - a) = y_at[p] within the run.
        float* at = base + c * t.y_channel + t.y_at[a] - a;
        __m512 x = r[c];
        if (t.result_add) x = _mm512_add_ps(_mm512_maskz_loadu_ps(m, at), x);
        if (t.clip) x = clamp(t, x);
        _mm512_mask_storeu_ps(at, m, x);
      }
    }
  }
}

// Channels-last output (y_channel 1): a position's channels are
// contiguous, so each vector is one store (masked past the block's channels).
// The tile's fields are read into locals first: a float store may alias
// OclTile's clip bounds, so the compiler would reload them after every store.
template <int V, int P>
[[gnu::always_inline]] NPUKIT_AVX512 inline void store_contiguous(const OclTile& t,
                                                                  const __m512 (&acc)[P][V]) {
  const bool bias = t.bias != nullptr, add = t.result_add, clip = t.clip;
  const __m512 lo = _mm512_set1_ps(t.clip_min), hi = _mm512_set1_ps(t.clip_max);
  float* at[P];
  for (int p = 0; p < P; ++p) at[p] = t.y + t.y_at[p];
  __mmask16 m[V];
  __m512 b[V];
  for (int v = 0; v < V; ++v) {
    const int64_t rows = t.rows - v * kLanes;
    m[v] = rows >= kLanes ? static_cast<__mmask16>(0xffff)
                          : static_cast<__mmask16>(rows > 0 ? (1u << rows) - 1u : 0u);
    b[v] = bias ? _mm512_loadu_ps(t.bias + v * kLanes) : _mm512_setzero_ps();
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < V; ++v) {
      float* y = at[p] + v * kLanes;
      __m512 r = acc[p][v];
      if (bias) r = _mm512_add_ps(r, b[v]);
      if (add) r = _mm512_add_ps(_mm512_maskz_loadu_ps(m[v], y), r);
      // clamp()'s two steps, the bound first (a NaN passes, as in the reference).
      if (clip) r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));
      _mm512_mask_storeu_ps(y, m[v], r);
    }
}

// The tile's sums and epilogue; inlined into tile() and into tile_pass(),
// whose loop over a pass of tiles has no call, prologue or reload of the
// kernel's constants per tile.
template <int V, int P>
[[gnu::always_inline]] NPUKIT_AVX512 inline void tile_body(const OclTile& t) {
  __m512 acc[P][V];
  if (!ocl_sums<V, P>(t, acc)) return;  // chains left for later calls
  if (t.y_channel == 1) {
    store_contiguous<V, P>(t, acc);
    return;
  }
  if (t.runs > 0) {
    store_transposed<V, P>(t, acc);
    return;
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

template <int V, int P>
NPUKIT_AVX512 void tile(const OclTile& t) {
  tile_body<V, P>(t);
}

void tile_avx512(const OclTile& t);

// A pass of tiles of one block (chain-outer driving: one chain over a
// task's tiles). Most of a pass's tiles have P positions; the few others
// (an uneven split) go through the dispatcher.
template <int V, int P>
NPUKIT_AVX512 void tile_pass(const OclTile* t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (t[i].positions == P)
      tile_body<V, P>(t[i]);
    else
      tile_avx512(t[i]);
  }
}

// A pass whose tiles have P or P - 1 positions in about equal numbers (an
// even split of a small plane: a 7x7 layer's 9 tiles are five of 5 and four
// of 6): both bodies inlined. Its own function, so that tile_pass<V, P>'s
// code (what the larger planes run) stays as it was: one body in the same
// function ran the 56x56 layers 0.5-0.8% slower.
template <int V, int P>
NPUKIT_AVX512 void tile_pass_mixed(const OclTile* t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (t[i].positions == P)
      tile_body<V, P>(t[i]);
    else if (t[i].positions == P - 1)
      tile_body<V, P - 1>(t[i]);
    else
      tile_avx512(t[i]);
  }
}

template <int V, int... Ps>
constexpr std::array<OclTileKernel, sizeof...(Ps)> kernels_for(std::integer_sequence<int, Ps...>) {
  return {&tile<V, Ps + 1>...};
}

template <int V, int... Ps>
constexpr std::array<OclPassKernel, sizeof...(Ps)> passes_for(std::integer_sequence<int, Ps...>) {
  return {&tile_pass<V, Ps + 1>...};
}

constexpr auto k1 = kernels_for<1>(std::make_integer_sequence<int, 12>());
constexpr auto k2 = kernels_for<2>(std::make_integer_sequence<int, 12>());
constexpr auto k3 = kernels_for<3>(std::make_integer_sequence<int, 8>());
constexpr auto k4 = kernels_for<4>(std::make_integer_sequence<int, 6>());
// Passes for the tile shapes chain-outer layers take (3x3 and larger on
// 32+ channels): a full block's 6 positions, 3 vectors' 8, 2 vectors' 12.
constexpr auto p2 = passes_for<2>(std::make_integer_sequence<int, 12>());
constexpr auto p3 = passes_for<3>(std::make_integer_sequence<int, 8>());
constexpr auto p4 = passes_for<4>(std::make_integer_sequence<int, 6>());

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

// Whether more than one of the n tiles is shorter than the longest (`most`
// positions): the pass then runs two tile sizes (a full block's only).
bool mixed_full_pass(const OclTile* t, int64_t n, int64_t most) {
  int64_t shorter = 0;
  for (int64_t k = 0; k < n; ++k) shorter += t[k].positions < most;
  return shorter > 1 && most == max_positions(t[0].rows);
}

// The pass kernel of n tiles of one block, shaped by the longest tile (the
// first is often a shorter one: shaped by it, a 7x7 layer's pass ran four
// of its nine tiles out of line); one tile at a time for blocks of up to 16
// channels (no pass instantiated).
void pass_avx512(const OclTile* t, int64_t n) {
  int64_t most = 0;
  for (int64_t k = 0; k < n; ++k) most = std::max(most, t[k].positions);
  const int64_t vectors = (t[0].rows + kLanes - 1) / kLanes;
  if (vectors > 1 && mixed_full_pass(t, n, most)) {
    if (vectors == 2) return tile_pass_mixed<2, 12>(t, n);
    if (vectors == 3) return tile_pass_mixed<3, 8>(t, n);
    return tile_pass_mixed<4, 6>(t, n);
  }
  const auto i = static_cast<size_t>(most - 1);
  switch (vectors) {
    case 1:
      for (int64_t k = 0; k < n; ++k) tile_avx512(t[k]);
      return;
    case 2:
      return p2[i](t, n);
    case 3:
      return p3[i](t, n);
    default:
      return p4[i](t, n);
  }
}

}  // namespace

const OclKernel kOclAvx512{tile_avx512, kOclMaxBlock, max_positions, true, true, pass_avx512};

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
