// Group kernel of f32-dwconv-nchwc-avx512 (dwconv.hpp, DwGroup): 16 channels
// in the lanes, 16 x 16 in-register transposes, over f32-dwconv-nchwc-body.inc.
#include <immintrin.h>

#include <cstdint>

#include "dwconv.hpp"

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu::dwconv_nchwc_avx512 {
#include "ops/cpu/f32-lanes-avx512.inc"
constexpr int kGroup = 8;                            // chains at once
constexpr int kNhwcPositions = 4, kNhwcVectors = 4;  // the channels-last row walk's block
#include "ops/cpu/f32-transpose16-avx512.inc"
inline void transpose(Vec (&r)[kLanes]) {  // the name f32-dwconv-nchwc-body.inc calls
  transpose16(r);
}

}  // namespace npukit::cpu::dwconv_nchwc_avx512

#define NPUKIT_DWC_NS dwconv_nchwc_avx512
#define NPUKIT_DWC_FN f32_dwconv_group_avx512
#define NPUKIT_DWC_ROWS_FN f32_dwconv_nhwc_rows_avx512
#include "ops/cpu/f32-dwconv-nchwc-body.inc"
#include "ops/cpu/f32-dwconv-nhwc-body.inc"
#undef NPUKIT_DWC_NS
#undef NPUKIT_DWC_FN
#undef NPUKIT_DWC_ROWS_FN

#include "ops/cpu/isa-end.inc"
