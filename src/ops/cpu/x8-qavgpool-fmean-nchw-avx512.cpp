// x8_qavgpool_fmean_nchw_avx512: ONNX Runtime's float QLinearAveragePool on
// NCHW (x8-qavgpool-fmean-nchw.inc) compiled for avx512 (dispatched at run time).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

#define NPUKIT_FMEAN_NS fmean_avx512
#define NPUKIT_FMEAN_ISA avx512
#define NPUKIT_FMEAN_LEVEL 2
#include "ops/cpu/x8-qavgpool-fmean-nchw.inc"

#include "ops/cpu/isa-end.inc"
#endif
