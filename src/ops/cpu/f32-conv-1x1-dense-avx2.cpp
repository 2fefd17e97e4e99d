// Tile kernel of f32-conv-1x1-dense-avx2 (conv_1x1_dense.hpp): blocks of 6
// output channels x 2 vectors of 8 positions (12 accumulators of the 16
// registers), over f32-conv-1x1-dense-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "conv_1x1_dense.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::conv_1x1_dense_avx2 {
#include "ops/cpu/f32-lanes-avx2.inc"
constexpr int kRows = 6;

}  // namespace npukit::cpu::conv_1x1_dense_avx2

#define NPUKIT_1X1_NS conv_1x1_dense_avx2
#define NPUKIT_1X1_FN f32_conv_1x1_dense_tile_avx2
#include "ops/cpu/f32-conv-1x1-dense-body.inc"
#undef NPUKIT_1X1_NS
#undef NPUKIT_1X1_FN

namespace npukit::cpu {
const Dense1x1Kernel kConv1x1DenseAvx2{f32_conv_1x1_dense_tile_avx2, 6, 16};
}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
