// f32 global pools over NCHW planes (pool2d with a whole-plane window).
//
// Averages and sums keep the reference's order (each plane summed element by
// element from +0, then one division or product): lanes are planes, kLanes
// planes x 4 elements transposed in registers (f32-globalpool-avx2.cpp), or
// for gap-free planes of odd square sizes a per-lane barrel shift of the
// planes' rows (f32-globalpool-avx512.cpp).
//
// A max keeps one of its inputs, so apart from NaN and the sign of a zero the
// result does not depend on the order: each plane is folded into one vector
// by loads inside the plane (overlapping at its end; gap-free planes of the
// squares 6x6 .. 15x15 from the pass's rows under compile-time masks, by
// integer maxes of the floats' bits where every plane of the pass has a value
// above +0), and a tree of merges leaves plane k in lane k. The few planes
// where the order would show (a NaN in the plane's block, a zero result, or
// under FTZ a zero or denormal one) are recomputed by the reference's scalar
// loop.
#pragma once

#include <cstdint>

#include "ops/cpu/pool2d_plan.hpp"

namespace npukit::cpu {

// The reference's max rule for a whole plane.
struct F32GlobalMaxRule {
  float start = 0;         // the running max's first value (-inf or -FLT_MAX)
  bool nchwc = false;      // MLAS's `m > v ? m : v`, else the taps loop's `v > m`
  bool propagate = false;  // taps loop: a NaN tap becomes the running max
  bool flush = false;      // FTZ/DAZ on every input and the result
};

// Planes [0, count) of one image; plane k is x + k*cs with hw contiguous floats.
struct F32GlobalPlanes {
  const float* x = nullptr;
  int64_t count = 0, hw = 0, cs = 0;
};

// Planes per kernel call (a multiple of 32: one redo word per 32 planes).
constexpr int64_t kF32GlobalChunk = 256;

// Fast pass over count <= kF32GlobalChunk planes: out[k] for every plane whose
// result the order cannot change, and bit k % 32 of redo[k / 32] set (redo
// zeroed by the caller) for the planes the caller must recompute (every plane
// of a pass of the ISA's width that holds a NaN).
void f32_global_max_portable(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                             uint32_t* redo);
#if defined(__x86_64__)
void f32_global_max_avx2(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                         uint32_t* redo);
void f32_global_max_avx512(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                           uint32_t* redo);
#endif

// The plane sizes (H*W) of f32_global_avg_odd_avx512: the odd squares 9 .. 225.
bool f32_global_avg_odd_size(int64_t hw);

// The reference's last step of a plane's sum (FTZ is declined).
struct F32GlobalAvgRule {
  bool sum = false;  // PoolMode::sum: sum * coeff, else sum / hw
  float coeff = 1;
};

// out[k * os] for every plane k < b.count (any count).
void f32_global_avg_portable(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out,
                             int64_t os);
#if defined(__x86_64__)
void f32_global_avg_avx2(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out,
                         int64_t os);
// Planes of hw floats, hw apart (b.hw == b.cs), f32_global_avg_odd_size(hw).
void f32_global_avg_odd_avx512(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out,
                               int64_t os);
#endif

// pool2d entries.
const char* f32_global_avg_declines(const Pool2dProblem& pr);
const char* f32_global_avg_odd_declines(const Pool2dProblem& pr);
void avg_pool2d_f32_global_portable(const Pool2dProblem& pr);
#if defined(__x86_64__)
void avg_pool2d_f32_global_avx2(const Pool2dProblem& pr);
void avg_pool2d_f32_global_odd_avx512(const Pool2dProblem& pr);
#endif
const char* f32_global_max_declines(const Pool2dProblem& pr);
void max_pool2d_f32_global_portable(const Pool2dProblem& pr);
#if defined(__x86_64__)
void max_pool2d_f32_global_avx2(const Pool2dProblem& pr);
void max_pool2d_f32_global_avx512(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
