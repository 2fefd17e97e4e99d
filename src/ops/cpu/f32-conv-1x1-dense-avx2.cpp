// Tile kernel of f32-conv-1x1-dense-avx2 (conv_1x1_dense.hpp): blocks of 6
// output channels x 2 vectors of 8 positions (12 accumulators of the 16
// registers), over f32-conv-1x1-dense-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "conv_1x1_dense.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::conv_1x1_dense_avx2 {

using Vec = __m256;
using Mask = __m256i;
constexpr int64_t kLanes = 8;
constexpr int kRows = 6;
inline Vec zero() {
  return _mm256_setzero_ps();
}
inline Vec set1(float v) {
  return _mm256_set1_ps(v);
}
inline Vec loadu(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void storeu(float* p, Vec v) {
  _mm256_storeu_ps(p, v);
}
inline Vec add(Vec a, Vec b) {
  return _mm256_add_ps(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return _mm256_mul_ps(a, b);
}
inline Vec fmadd(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm256_max_ps(a, b);  // a > b ? a : b, as maxps
}
inline Vec vmin(Vec a, Vec b) {
  return _mm256_min_ps(a, b);  // a < b ? a : b, as minps
}
inline Mask first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec load_masked(const float* p, Mask m) {
  return _mm256_maskload_ps(p, m);  // masked-off lanes are not read (no fault)
}
inline void store_masked(float* p, Mask m, Vec v) {
  _mm256_maskstore_ps(p, m, v);
}

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
