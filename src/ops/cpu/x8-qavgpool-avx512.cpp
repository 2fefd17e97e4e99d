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
#if defined(__clang__)
#pragma clang attribute push( \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")
#endif

#define NPUKIT_QAVG_NS isa_avx512
#define NPUKIT_QAVG_ISA avx512
#define NPUKIT_QAVG_LEVEL 2
#include "ops/cpu/x8-qavgpool-body.inc"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
