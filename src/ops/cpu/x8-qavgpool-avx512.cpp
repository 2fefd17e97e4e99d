// QLinearAveragePool variants x8_qavgpool_{nchw,nhwc}_avx512: the shared body
// compiled with the avx512 instruction set (dispatched at run time).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(__x86_64__)
#include "ops/cpu/isa-avx512-begin.inc"

#define NPUKIT_QAVG_NS isa_avx512
#define NPUKIT_QAVG_ISA avx512
#define NPUKIT_QAVG_LEVEL 2
#include "ops/cpu/x8-qavgpool-body.inc"

#include "ops/cpu/isa-end.inc"
#endif
