// Plane kernel of the fp32 depthwise family for AVX-512: 16 consecutive
// outputs per vector, up to 8 vectors' chains at once (independent chains
// hide the add latency), over f32-dwconv-plane-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::dwconv_avx512 {
#include "ops/cpu/f32-lanes-avx512.inc"
constexpr int kGroup = 8;

}  // namespace npukit::cpu::dwconv_avx512

#define NPUKIT_DWCONV_NS dwconv_avx512
#define NPUKIT_DWCONV_FN f32_dwconv_plane_avx512
#include "ops/cpu/f32-dwconv-plane-body.inc"
#undef NPUKIT_DWCONV_NS
#undef NPUKIT_DWCONV_FN

#include "ops/cpu/isa-end.inc"
