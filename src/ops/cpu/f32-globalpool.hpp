// f32 global max pools over NCHW planes (pool2d with a whole-plane window).
//
// A max keeps one of its inputs, so apart from NaN and the sign of a zero the
// result does not depend on the order: each plane is folded into one vector
// by loads inside the plane (overlapping at its end), and a tree of merges
// leaves plane k in lane k. The few planes where the order would show (a NaN
// in the plane's block, a zero result, or under FTZ a zero or denormal one)
// are recomputed by the reference's scalar loop.
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

// Planes [0, count) of one image (count <= 16); plane k is x + k*cs with hw
// contiguous floats. Writes count results to out[0..count).
struct F32GlobalBlock {
  const float* x = nullptr;
  int64_t count = 0, hw = 0, cs = 0;
};

// Fast pass over one block: out[k] for every plane whose result the order
// cannot change; returns a bit per plane (bit k) that the caller must recompute
// (all of them when the block holds a NaN).
uint32_t f32_global_max_portable(const F32GlobalBlock& b, const F32GlobalMaxRule& r, float* out);
#if defined(__x86_64__)
uint32_t f32_global_max_avx2(const F32GlobalBlock& b, const F32GlobalMaxRule& r, float* out);
uint32_t f32_global_max_avx512(const F32GlobalBlock& b, const F32GlobalMaxRule& r, float* out);
#endif

// pool2d entries.
const char* f32_global_max_declines(const Pool2dProblem& pr);
void max_pool2d_f32_global_portable(const Pool2dProblem& pr);
#if defined(__x86_64__)
void max_pool2d_f32_global_avx2(const Pool2dProblem& pr);
void max_pool2d_f32_global_avx512(const Pool2dProblem& pr);
#endif

}  // namespace npukit::cpu
