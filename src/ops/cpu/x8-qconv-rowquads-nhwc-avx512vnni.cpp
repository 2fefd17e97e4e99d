// AVX-512 VNNI row-quads convolution (qconv_rowpairs.hpp; body in
// x8-qconv-rowpairs-body.inc): x' copied as u8, so a broadcast dword is 4
// taps of a window row, and vpdpbusd (on 8 lanes) sums four exact u8 x s8
// products per lane in int32.
#include "ops/cpu/qconv_rowpairs.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx512vnni-begin.inc"

namespace npukit::qconv {

namespace {

struct QuadsShim {
  using Code = uint8_t;
  static constexpr int64_t kUnit = 4;
  static const int8_t* weights(const RowPairsPlan& s) {
    return reinterpret_cast<const int8_t*>(s.w8.data());
  }
  static __m256i dot(__m256i acc, __m256i x, __m256i w) { return _mm256_dpbusd_epi32(acc, x, w); }
};

}  // namespace

#include "ops/cpu/x8-qconv-rowpairs-body.inc"

void run_rowquads_avx512vnni(const QConvProblem& p) {
  run_rows<QuadsShim>(p);
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void run_rowquads_avx512vnni(const QConvProblem& p) {
  qconv_reference(p);
}
}  // namespace npukit::qconv

#endif
