// Tile kernel of the fp32 NCHW convolution family for AVX-512: blocks of
// 4 x 16 consecutive positions (q layout, or the row form's vectors of one
// output row each; the last block of a tile 1 to 4 vectors) times up to 6
// output channels, 24 accumulators; per step one
// rounded product and one rounded addition per lane (mul and add
// intrinsics; -ffp-contract=off keeps them apart).
#include <immintrin.h>

#include <algorithm>

#include "conv_nchw.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

#define NPUKIT_AVX512

namespace npukit::cpu {

namespace {

constexpr int64_t kLanes = 16;
constexpr int kVectors = 4;

// Accumulators handed to finish by value (by reference, the array could end
// up living in memory).
template <int R>
struct Rows {
  __m512 v[R];
};

// ref::clip_f32's two steps: max_ps(a, b) is a > b ? a : b and min_ps(a, b)
// is a < b ? a : b, so with the bound first a NaN v passes (the compare is
// false) and -0 passes a bound of 0, as in the reference's ordered compares.
NPUKIT_AVX512 inline __m512 clamp(const ConvTile& t, __m512 v) {
  v = _mm512_max_ps(_mm512_set1_ps(t.clip_min), v);
  return _mm512_min_ps(_mm512_set1_ps(t.clip_max), v);
}

// Stores lanes of `acc` (row r, positions q .. q + 15, valid below q_end) to
// the output rows they belong to, finishing each output as the reference:
// acc + bias, then old + that.
// Row r's lanes m of acc, finished, to base + lane.
NPUKIT_AVX512 inline void store_lanes(const ConvTile& t, int r, __m512 v, float* base,
                                      __mmask16 m) {
  if (t.has_bias) v = _mm512_add_ps(v, _mm512_set1_ps(t.bias[r]));
  if (t.result_add) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, base), v);
  if (t.clip) v = clamp(t, v);
  _mm512_mask_storeu_ps(base, m, v);
}

// The row form's vector at q (a multiple of 16): its output offset in a
// plane, its input offset from t.x, and its lanes inside the row.
struct RowVector {
  int64_t out, in;
  __mmask16 lanes;
};
NPUKIT_AVX512 inline RowVector row_vector(const ConvTile& t, int64_t q) {
  const int64_t k = q / kLanes, oh = k / t.row_vectors, col = k % t.row_vectors * kLanes;
  const int64_t valid = std::min(t.ow - col, kLanes);
  return {oh * t.y_row + col, oh * t.wq + col, static_cast<__mmask16>((1u << valid) - 1u)};
}

// Where the vector of positions q .. q + 15 reads x (offset from t.x).
NPUKIT_AVX512 inline int64_t input_at(const ConvTile& t, int64_t q) {
  return t.row_vectors ? row_vector(t, q).in : q;
}

template <int R>
NPUKIT_AVX512 void finish(const ConvTile& t, const Rows<R> rows, int64_t q, int64_t q_end) {
  const __m512* acc = rows.v;
  if (t.row_vectors) {  // one output row's columns
    const RowVector at = row_vector(t, q);
    for (int r = 0; r < R; ++r) store_lanes(t, r, acc[r], t.y[r] + at.out, at.lanes);
    return;
  }
  if (t.dense) {  // one segment, no division: lanes [0, q_end - q) go to q ..
    const int64_t valid = std::min(q_end - q, kLanes);
    const __mmask16 m = static_cast<__mmask16>((1u << valid) - 1u);
    for (int r = 0; r < R; ++r) store_lanes(t, r, acc[r], t.y[r] + q, m);
    return;
  }
  int64_t oh = q / t.wq, ow = q % t.wq, lane = 0;
  q_end = std::min(q_end, q + kLanes);
  while (q < q_end) {
    const int64_t seg = std::min(q_end - q, t.wq - ow);  // lanes left in this q-layout row
    const int64_t valid = std::clamp<int64_t>(t.ow - ow, 0, seg);
    if (valid > 0) {
      const __mmask16 m = static_cast<__mmask16>(((1u << valid) - 1u) << lane);
      // Lane l goes to base + l; the lanes outside m are not touched.
      for (int r = 0; r < R; ++r) store_lanes(t, r, acc[r], t.y[r] + oh * t.y_row + ow - lane, m);
    }
    lane += seg;
    q += seg;
    ++oh;
    ow = 0;
  }
}

// The old outputs of the rows at positions q .. q + 15 (valid below q_end),
// read where finish would store them; lanes on no output are 0. (Written
// through a reference: a one-vector Rows<1> returned by value kept only its
// low 128 bits, GCC 12.)
template <int R>
NPUKIT_AVX512 void load_old(const ConvTile& t, int64_t q, int64_t q_end, __m512 (&old)[R]) {
  for (int r = 0; r < R; ++r) old[r] = _mm512_setzero_ps();
  if (q >= q_end) return;
  if (t.row_vectors) {
    const RowVector at = row_vector(t, q);
    for (int r = 0; r < R; ++r) old[r] = _mm512_maskz_loadu_ps(at.lanes, t.y[r] + at.out);
    return;
  }
  if (t.dense) {
    const int64_t valid = std::min(q_end - q, kLanes);
    const __mmask16 m = static_cast<__mmask16>((1u << valid) - 1u);
    for (int r = 0; r < R; ++r) old[r] = _mm512_maskz_loadu_ps(m, t.y[r] + q);
    return;
  }
  int64_t oh = q / t.wq, ow = q % t.wq, lane = 0;
  q_end = std::min(q_end, q + kLanes);
  while (q < q_end) {
    const int64_t seg = std::min(q_end - q, t.wq - ow);
    const int64_t valid = std::clamp<int64_t>(t.ow - ow, 0, seg);
    if (valid > 0) {
      const __mmask16 m = static_cast<__mmask16>(((1u << valid) - 1u) << lane);
      for (int r = 0; r < R; ++r)
        old[r] = _mm512_mask_loadu_ps(old[r], m, t.y[r] + oh * t.y_row + ow - lane);
    }
    lane += seg;
    q += seg;
    ++oh;
    ow = 0;
  }
}

// The tail of a tile: V vectors from qb, only as many as the positions left
// need, so small images compute fewer discarded positions. (Not inlined and
// never masked: either made GCC keep the accumulators in memory, a store each
// per step.)
template <int R, int V>
__attribute__((noinline)) NPUKIT_AVX512 void block(const ConvTile& t, int64_t qb) {
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = t.w[r];
  __m512 acc[V][R];
  for (int v = 0; v < V; ++v)
    for (int r = 0; r < R; ++r) acc[v][r] = _mm512_setzero_ps();
  const float* x[V];
  for (int v = 0; v < V; ++v) x[v] = t.x + input_at(t, qb + v * kLanes);
  for (int64_t e = 0; e < t.steps; ++e) {
    __m512 xv[V];
    for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_ps(x[v] + t.offset[e]);
    for (int r = 0; r < R; ++r) {
      const __m512 wr = _mm512_set1_ps(w[r][e]);
      for (int v = 0; v < V; ++v) acc[v][r] = _mm512_add_ps(acc[v][r], _mm512_mul_ps(xv[v], wr));
    }
  }
  for (int v = 0; v < V; ++v) {
    Rows<R> rows;
    for (int r = 0; r < R; ++r) rows.v[r] = acc[v][r];
    finish<R>(t, rows, qb + v * kLanes, t.q1);
  }
}

// Fp32Accumulation::mlas_nchwc*: V vectors from qb, FMA chains restarting
// at each chain end, their sums kept as tot = chain + tot (from the old
// outputs with residual_first).
template <int R, int V>
__attribute__((noinline)) NPUKIT_AVX512 void block_fma(const ConvTile& t, int64_t qb) {
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = t.w[r];
  __m512 tot[V][R];
  if (t.residual_first)
    for (int v = 0; v < V; ++v) load_old<R>(t, qb + v * kLanes, t.q1, tot[v]);
  const float* x[V];
  for (int v = 0; v < V; ++v) x[v] = t.x + input_at(t, qb + v * kLanes);
  int64_t e = 0;
  for (int64_t c = 0; c < t.chains; ++c) {
    __m512 acc[V][R];
    for (int v = 0; v < V; ++v)
      for (int r = 0; r < R; ++r) acc[v][r] = _mm512_setzero_ps();
    for (const int64_t end = t.chain_end[c]; e < end; ++e) {
      const int32_t wi = t.w_index[e];
      __m512 xv[V];
      for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_ps(x[v] + t.offset[e]);
      for (int r = 0; r < R; ++r) {
        const __m512 wr = _mm512_set1_ps(w[r][wi]);
        for (int v = 0; v < V; ++v) acc[v][r] = _mm512_fmadd_ps(xv[v], wr, acc[v][r]);
      }
    }
    for (int v = 0; v < V; ++v)
      for (int r = 0; r < R; ++r)
        tot[v][r] = c == 0 && !t.residual_first ? acc[v][r] : _mm512_add_ps(acc[v][r], tot[v][r]);
  }
  for (int v = 0; v < V; ++v) {
    const int64_t q = qb + v * kLanes;
    if (q >= t.q1) break;
    Rows<R> rows;
    for (int r = 0; r < R; ++r) rows.v[r] = tot[v][r];
    finish<R>(t, rows, q, t.q1);
  }
}

template <int R>
NPUKIT_AVX512 void tile_fma(const ConvTile& t) {
  int64_t qb = t.q0;
  for (; qb + kLanes * kVectors <= t.q1; qb += kLanes * kVectors) block_fma<R, kVectors>(t, qb);
  switch ((t.q1 - qb + kLanes - 1) / kLanes) {
    case 1:
      return block_fma<R, 1>(t, qb);
    case 2:
      return block_fma<R, 2>(t, qb);
    case 3:
      return block_fma<R, 3>(t, qb);
    case 4:  // 49 to 63 positions left: four vectors, the last one partial
      return block_fma<R, 4>(t, qb);
    default:  // nothing left
      return;
  }
}

template <int R>
NPUKIT_AVX512 void tile(const ConvTile& t) {
  if (t.fma) return tile_fma<R>(t);
  const float* w[R];
  for (int r = 0; r < R; ++r) w[r] = t.w[r];
  int64_t qb = t.q0;
  for (; qb + kLanes * kVectors <= t.q1; qb += kLanes * kVectors) {
    __m512 acc[kVectors][R];
    for (int v = 0; v < kVectors; ++v)
      for (int r = 0; r < R; ++r) acc[v][r] = _mm512_setzero_ps();
    const float* x[kVectors];
    for (int v = 0; v < kVectors; ++v) x[v] = t.x + input_at(t, qb + v * kLanes);
    for (int64_t e = 0; e < t.steps; ++e) {
      __m512 xv[kVectors];
      for (int v = 0; v < kVectors; ++v) xv[v] = _mm512_loadu_ps(x[v] + t.offset[e]);
      for (int r = 0; r < R; ++r) {
        const __m512 wr = _mm512_set1_ps(w[r][e]);
        for (int v = 0; v < kVectors; ++v)
          acc[v][r] = _mm512_add_ps(acc[v][r], _mm512_mul_ps(xv[v], wr));
      }
    }
    for (int v = 0; v < kVectors; ++v) {
      const int64_t q = qb + v * kLanes;
      if (q < t.q1) {
        Rows<R> rows;
        for (int r = 0; r < R; ++r) rows.v[r] = acc[v][r];
        finish<R>(t, rows, q, t.q1);
      }
    }
  }
  switch ((t.q1 - qb + kLanes - 1) / kLanes) {
    case 1:
      return block<R, 1>(t, qb);
    case 2:
      return block<R, 2>(t, qb);
    case 3:
      return block<R, 3>(t, qb);
    case 4:
      return block<R, 4>(t, qb);
    default:  // nothing left
      return;
  }
}

}  // namespace

NPUKIT_AVX512 void f32_conv_tile_avx512(const ConvTile& t) {
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

#include "ops/cpu/isa-end.inc"
