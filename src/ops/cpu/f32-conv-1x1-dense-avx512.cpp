// Tile kernel of f32-conv-1x1-dense-avx512 (conv_1x1_dense.hpp): blocks of
// 12 output channels x 2 vectors of 16 positions (24 accumulators), over
// f32-conv-1x1-dense-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "conv_1x1_dense.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::conv_1x1_dense_avx512 {
#include "ops/cpu/f32-lanes-avx512.inc"
constexpr int kRows = 12;

}  // namespace npukit::cpu::conv_1x1_dense_avx512

#define NPUKIT_1X1_NS conv_1x1_dense_avx512
#define NPUKIT_1X1_FN f32_conv_1x1_dense_tile_avx512
#include "ops/cpu/f32-conv-1x1-dense-body.inc"
#undef NPUKIT_1X1_NS
#undef NPUKIT_1X1_FN

namespace npukit::cpu {
const Dense1x1Kernel kConv1x1DenseAvx512{f32_conv_1x1_dense_tile_avx512, 12, 32};
}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
