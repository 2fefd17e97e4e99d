// Plan of x8_qavgpool_flat3x3_nchw_avx512: 3x3 windows, stride 1, one pixel
// of padding on every side (k3s1p1) over contiguous NCHW tensors with rows of
// at most 16 columns, the integer final steps of rows16 (qavgpool-rows16.hpp).
// The kernel walks the whole tensor as one flat stream of 32-position chunks:
// no lane is left idle at the end of a row or plane. Every per-position
// constant repeats with period `period` positions (a multiple of both the
// plane and the chunk), so each chunk reads the masks of chunk c % cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

struct Flat3x3Plan {
  int64_t W = 0;          // plane width: the vertical neighbour is W positions away
  int64_t cpp = 0;        // chunks per period
  int64_t positions = 0;  // N * C * H * W
  bool any_even = false;  // some divisor is even (the second quotient of rows16)
  int sh = 0, K = 0;      // rows16's shift and offset
  int64_t ext = 0;        // H * W + 32: the length of each field table
  // Per chunk of the period: the lanes that have a left, right, upper and
  // lower neighbour on the input (4 masks).
  std::vector<uint32_t> masks;
  // The lane fields A, m, e of rows16_codes of one plane's positions, each
  // table extended periodically by 32 (3 * ext words): chunk c's lanes start
  // at offset (32 * c) % (H * W).
  std::vector<uint16_t> fields;
};

// nullptr and *F filled (F may be null) when the kernel takes p, else why not.
const char* flat3x3_build(const QAvgPoolProblem& p, Flat3x3Plan* F);

}  // namespace npukit::cpu
