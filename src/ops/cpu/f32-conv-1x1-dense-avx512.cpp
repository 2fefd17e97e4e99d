// Tile kernel of f32-conv-1x1-dense-avx512 (conv_1x1_dense.hpp): blocks of
// 12 output channels x 2 vectors of 16 positions (24 accumulators), over
// f32-conv-1x1-dense-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "conv_1x1_dense.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::conv_1x1_dense_avx512 {

using Vec = __m512;
using Mask = __mmask16;
constexpr int64_t kLanes = 16;
constexpr int kRows = 12;
inline Vec zero() {
  return _mm512_setzero_ps();
}
inline Vec set1(float v) {
  return _mm512_set1_ps(v);
}
inline Vec loadu(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void storeu(float* p, Vec v) {
  _mm512_storeu_ps(p, v);
}
inline Vec add(Vec a, Vec b) {
  return _mm512_add_ps(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return _mm512_mul_ps(a, b);
}
inline Vec fmadd(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm512_max_ps(a, b);  // a > b ? a : b, as maxps
}
inline Vec vmin(Vec a, Vec b) {
  return _mm512_min_ps(a, b);  // a < b ? a : b, as minps
}
inline Mask first_lanes(int64_t n) {
  return static_cast<Mask>((1u << n) - 1u);
}
inline Vec load_masked(const float* p, Mask m) {
  return _mm512_maskz_loadu_ps(m, p);
}
inline void store_masked(float* p, Mask m, Vec v) {
  _mm512_mask_storeu_ps(p, m, v);
}

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
