// The SIMD core of DotChains. The lanes hold 16 output columns; each lane does
// mul then add, separately rounded (-ffp-contract=off keeps them apart; the
// avx2 clone never enables FMA), so each output sees its scalar sequence.
// FTZ/DAZ come from the x86 MXCSR, set on each worker thread for the
// duration of its work: that is the flushing the BM1684 C-model runs under.
#include "dot_chains.hpp"

#include "flush_scope.hpp"

#include <algorithm>
#include <cstring>

#include "npukit/parallel.hpp"

#if defined(__x86_64__) || defined(__i386__)
#define NPUKIT_DOT_X86 1
#endif

namespace npukit::cpu {

namespace {

#ifdef NPUKIT_DOT_X86
#define NPUKIT_DOT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NPUKIT_DOT_CLONES
#endif

// Eight fp32 lanes; GCC lowers it to AVX, SSE pairs or scalars per target
// (only inside this file, so the psABI note about passing it does not apply).
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v8f __attribute__((vector_size(32)));

// By reference, not by value: clang rejects returning an AVX-sized vector from
// a function compiled without AVX (the "default" clone).
__attribute__((always_inline)) inline void load8(v8f& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

// Steps [e0, e1) of one chain for one tile: io[i][l] (position i, lane l)
// is the running sum, +0 when `fresh`. Each step: one product per lane,
// rounded, then one addition, rounded; resuming a sum from memory changes
// nothing, so the steps of a chain can be split into cache-sized segments.
NPUKIT_DOT_CLONES
void chain_tile(const float* const* x, const int64_t* offset, int64_t e0, int64_t e1,
                const float* w, float (*io)[kDotColumns], bool fresh) {
  v8f a00 = {}, a01 = {}, a10 = {}, a11 = {}, a20 = {}, a21 = {};
  v8f a30 = {}, a31 = {}, a40 = {}, a41 = {}, a50 = {}, a51 = {};
  if (!fresh) {
    load8(a00, io[0]), load8(a01, io[0] + 8), load8(a10, io[1]), load8(a11, io[1] + 8);
    load8(a20, io[2]), load8(a21, io[2] + 8), load8(a30, io[3]), load8(a31, io[3] + 8);
    load8(a40, io[4]), load8(a41, io[4] + 8), load8(a50, io[5]), load8(a51, io[5] + 8);
  }
  const float *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3], *x4 = x[4], *x5 = x[5];
  for (int64_t e = e0; e < e1; ++e) {
    const int64_t o = offset[e];
    v8f w0, w1;
    load8(w0, w + e * kDotColumns);
    load8(w1, w + e * kDotColumns + 8);
    const float s0 = x0[o], s1 = x1[o], s2 = x2[o], s3 = x3[o], s4 = x4[o], s5 = x5[o];
    const v8f b0 = {s0, s0, s0, s0, s0, s0, s0, s0};
    a00 = a00 + b0 * w0;
    a01 = a01 + b0 * w1;
    const v8f b1 = {s1, s1, s1, s1, s1, s1, s1, s1};
    a10 = a10 + b1 * w0;
    a11 = a11 + b1 * w1;
    const v8f b2 = {s2, s2, s2, s2, s2, s2, s2, s2};
    a20 = a20 + b2 * w0;
    a21 = a21 + b2 * w1;
    const v8f b3 = {s3, s3, s3, s3, s3, s3, s3, s3};
    a30 = a30 + b3 * w0;
    a31 = a31 + b3 * w1;
    const v8f b4 = {s4, s4, s4, s4, s4, s4, s4, s4};
    a40 = a40 + b4 * w0;
    a41 = a41 + b4 * w1;
    const v8f b5 = {s5, s5, s5, s5, s5, s5, s5, s5};
    a50 = a50 + b5 * w0;
    a51 = a51 + b5 * w1;
  }
  const v8f acc[kDotPositions][2] = {{a00, a01}, {a10, a11}, {a20, a21},
                                     {a30, a31}, {a40, a41}, {a50, a51}};
  std::memcpy(io, acc, sizeof acc);
}

}  // namespace

bool dot_chains_can_flush() {
  return kCanFlush;
}

void run_dot_chains(const DotChains& d, DotFinish finish, void* ctx) {
  const int64_t P = static_cast<int64_t>(d.base.size());
  const int64_t steps = static_cast<int64_t>(d.offset.size());
  const int64_t chains = static_cast<int64_t>(d.chain_end.size());
  const int64_t blocks = (d.columns + kDotColumns - 1) / kDotColumns;
  const int64_t tiles = (P + kDotPositions - 1) / kDotPositions;
  // A task is a run of tiles of one column block. Each chain is done in
  // segments of kSegment steps for all tiles of the run, so that the
  // segment's weights (8 KiB) and inputs stay in the L1 cache.
  constexpr int64_t kTilesPerTask = 8, kSegment = 128;
  const int64_t runs = (tiles + kTilesPerTask - 1) / kTilesPerTask;
  parallel_for(blocks * runs, [&](int64_t task) {
    FlushScope scope(d.flush_denormals);
    const int64_t b = task / runs, t0 = task % runs * kTilesPerTask;
    const int64_t nt = std::min(tiles, t0 + kTilesPerTask) - t0;
    const float* w = d.packed.data() + b * steps * kDotColumns;
    alignas(32) float sums[kTilesPerTask][4][kDotPositions][kDotColumns];
    const float* x[kTilesPerTask][kDotPositions];
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t p0 = (t0 + t) * kDotPositions, np = std::min(kDotPositions, P - p0);
      // A short tile repeats its last position; those lanes are discarded.
      for (int64_t i = 0; i < kDotPositions; ++i)
        x[t][i] = d.src + d.base[p0 + std::min(i, np - 1)];
    }
    for (int64_t c = 0; c < chains; ++c) {
      const int64_t begin = c == 0 ? 0 : d.chain_end[c - 1], end = d.chain_end[c];
      int64_t s0 = begin;
      do {  // an empty chain still gives its +0 sums
        const int64_t s1 = std::min(end, s0 + kSegment);
        for (int64_t t = 0; t < nt; ++t)
          chain_tile(x[t], d.offset.data(), s0, s1, w, sums[t][c], s0 == begin);
        s0 = s1;
      } while (s0 < end);
    }
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t p0 = (t0 + t) * kDotPositions;
      finish(ctx, DotTile{p0, std::min(kDotPositions, P - p0), b * kDotColumns,
                          std::min(kDotColumns, d.columns - b * kDotColumns), sums[t]});
    }
  });
}

}  // namespace npukit::cpu
