// f32_conv_interleaved_rows_avx512: the BM1684 interleaved fp32 convolution
// with output positions in lanes (f32-conv-interleaved-rows.inc) compiled for
// avx512 (dispatched at run time).
#include <cstdint>

#include "ops/cpu/conv_interleaved.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

#define NPUKIT_CIR_LEVEL 2
#define NPUKIT_CIR_NAME f32_conv_interleaved_rows_avx512
#include "ops/cpu/f32-conv-interleaved-rows.inc"

#include "ops/cpu/isa-end.inc"
#endif
