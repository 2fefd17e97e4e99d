// x8_qavgpool_fmean_nchw_avx2: ONNX Runtime's float QLinearAveragePool on
// NCHW (x8-qavgpool-fmean-nchw.inc) compiled for avx2 (dispatched at run time).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

#define NPUKIT_FMEAN_NS fmean_avx2
#define NPUKIT_FMEAN_ISA avx2
#define NPUKIT_FMEAN_LEVEL 1
#include "ops/cpu/x8-qavgpool-fmean-nchw.inc"

#include "ops/cpu/isa-end.inc"
#endif
