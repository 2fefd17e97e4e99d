// Plane kernel of the fp32 depthwise family for AVX2: 8 consecutive outputs
// per vector, up to 4 vectors' chains at once (independent chains hide the
// add latency), over f32-dwconv-plane-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu::dwconv_avx2 {
#include "ops/cpu/f32-lanes-avx2.inc"
constexpr int kGroup = 4;

}  // namespace npukit::cpu::dwconv_avx2

#define NPUKIT_DWCONV_NS dwconv_avx2
#define NPUKIT_DWCONV_FN f32_dwconv_plane_avx2
#include "ops/cpu/f32-dwconv-plane-body.inc"
#undef NPUKIT_DWCONV_NS
#undef NPUKIT_DWCONV_FN

#include "ops/cpu/isa-end.inc"
