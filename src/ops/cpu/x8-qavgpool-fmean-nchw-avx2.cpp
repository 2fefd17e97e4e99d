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

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#define NPUKIT_FMEAN_NS fmean_avx2
#define NPUKIT_FMEAN_ISA avx2
#define NPUKIT_FMEAN_LEVEL 1
#include "ops/cpu/x8-qavgpool-fmean-nchw.inc"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
