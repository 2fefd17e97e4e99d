// x8_qavgpool_fmean_nhwc_avx512: ONNX Runtime's float QLinearAveragePool on
// NHWC (x8-qavgpool-fmean-nhwc.inc, 16 channels per lane group) compiled for
// avx512 (dispatched at run time).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

#define NPUKIT_FMEAN_NHWC_NS fmean_nhwc_avx512
#define NPUKIT_FMEAN_NHWC_LEVEL 2
#include "ops/cpu/x8-qavgpool-fmean-nhwc.inc"

namespace npukit::cpu {
void x8_qavgpool_fmean_nhwc_avx512(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    fmean_nhwc_avx512::run<int8_t>(p);
  else
    fmean_nhwc_avx512::run<uint8_t>(p);
}
}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
