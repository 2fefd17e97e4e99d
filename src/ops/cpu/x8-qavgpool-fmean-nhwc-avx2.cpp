// x8_qavgpool_fmean_nhwc_avx2: ONNX Runtime's float QLinearAveragePool on
// NHWC (x8-qavgpool-fmean-nhwc.inc, 8 channels per lane group) compiled for
// avx2 (dispatched at run time).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

#define NPUKIT_FMEAN_NHWC_NS fmean_nhwc_avx2
#define NPUKIT_FMEAN_NHWC_LEVEL 1
#include "ops/cpu/x8-qavgpool-fmean-nhwc.inc"

namespace npukit::cpu {
void x8_qavgpool_fmean_nhwc_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    fmean_nhwc_avx2::run<int8_t>(p);
  else
    fmean_nhwc_avx2::run<uint8_t>(p);
}
}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
