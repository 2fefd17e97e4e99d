// AVX2 row-pairs convolution (qconv_rowpairs.hpp; body in
// x8-qconv-rowpairs-body.inc): x' copied as int16, so a broadcast dword is a
// tap pair with no mask or shift, and vpmaddwd sums two exact u8 x s8
// products per lane in int32.
#include "ops/cpu/qconv_rowpairs.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "npukit/parallel.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::qconv {

namespace {

struct PairsShim {
  using Code = uint16_t;
  static constexpr int64_t kUnit = 2;
  static const int8_t* weights(const RowPairsPlan& s) {
    return reinterpret_cast<const int8_t*>(s.w16.data());
  }
  static __m256i dot(__m256i acc, __m256i x, __m256i w) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w));
  }
};

}  // namespace

#include "ops/cpu/x8-qconv-rowpairs-body.inc"

void run_rowpairs_avx2(const QConvProblem& p) {
  run_rows<PairsShim>(p);
}

}  // namespace npukit::qconv

#include "ops/cpu/isa-end.inc"

#else  // not x86-64: never listed as runnable

namespace npukit::qconv {
void run_rowpairs_avx2(const QConvProblem& p) {
  qconv_reference(p);
}
}  // namespace npukit::qconv

#endif
