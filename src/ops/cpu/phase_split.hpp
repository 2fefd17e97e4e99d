// Splitting a row of input columns into stride-2 column phases, the copy that
// the NCHW conv and depthwise drivers make of every input row with stride 2:
// padded column c goes to phase c % 2, index c / 2. Written as one pass over
// column pairs so that the compiler vectorizes it (a strided loop per phase
// stayed scalar and cost more than the depthwise arithmetic itself).
#pragma once

#include <cstdint>

namespace npukit::cpu {

// Input columns s[0 .. W) (unit stride) at padded columns pad_left + w:
// phase 0 at even[], phase 1 at odd[] (each indexed by padded column / 2).
inline void split_row_stride2(const float* s, int64_t W, int64_t pad_left, float* even,
                              float* odd) {
  int64_t w = 0;
  if (pad_left % 2 != 0 && W > 0) {
    odd[pad_left / 2] = s[0];
    w = 1;
  }
  const int64_t base = (pad_left + w) / 2;  // pad_left + w is even here
  float* __restrict e = even + base;
  float* __restrict o = odd + base;
  const float* __restrict src = s + w;
  const int64_t pairs = (W - w) / 2;
  for (int64_t i = 0; i < pairs; ++i) {
    e[i] = src[2 * i];
    o[i] = src[2 * i + 1];
  }
  if (w + 2 * pairs < W) e[pairs] = s[W - 1];
}

// The same copy with AVX-512 permutes (phase-split-avx512.cpp; only where
// the host runs AVX-512).
void split_row_stride2_avx512(const float* s, int64_t W, int64_t pad_left, float* even, float* odd);
using RowSplit = void (*)(const float* s, int64_t W, int64_t pad_left, float* even, float* odd);

}  // namespace npukit::cpu
