// s8/u8 max pooling of NCHW rows, separably: integer max is associative and
// commutative, so the window's max is the max over its columns of the max
// over its rows. Per output row, the window's input rows are reduced into a
// row buffer whose border holds the padding value, then each output reduces
// kernel_w entries of that buffer (stride 2: of its even/odd halves, split
// once per row). Taps past the end padding (ceil_mode) hold the type's lowest
// value, which no max can pick over a real tap; the reference skips them.
#pragma once

#include <cstdint>
#include <vector>

#include "pool2d_plan.hpp"

namespace npukit::cpu {

// One axis in buffer positions b = o * stride + k (k < kernel): positions
// [in_lo, in_hi) read input elements first_index + (b - in_lo), the others
// are padding or past it.
struct X8RowsAxis {
  int64_t out = 0, kernel = 0, stride = 1, span = 0;
  int64_t in_lo = 0, in_hi = 0, first_index = 0;
  std::vector<Tap> kind;          // [span]
  std::vector<int32_t> in_first;  // per output: first buffer position on the input
  std::vector<int32_t> in_count;  // per output: its taps on the input (a contiguous run)
  std::vector<uint8_t> any_pad;   // per output: some tap is padding
};

struct X8RowsPlan {
  X8RowsAxis h, w;
  bool empty_outputs = false;  // some window has no input tap
  const char* unsupported = nullptr;
};

// Plan of a validated pool2d problem; `unsupported` says why these kernels
// cannot run it (the generic x8 kernels then do).
X8RowsPlan make_x8_rows_plan(const Pool2dProblem& pr);
const char* x8_rows_declines(const Pool2dProblem& pr);

void max_pool2d_x8_rows_portable(const Pool2dProblem& pr);
void max_pool2d_x8_rows_avx2(const Pool2dProblem& pr);
void max_pool2d_x8_rows_avx512(const Pool2dProblem& pr);

}  // namespace npukit::cpu
