// The x86 SSE rules for fp32 results that C++ leaves to the compiler: which
// NaN an addition returns and what max does with NaN and signed zeros. A
// reference kernel that states them gives the same bits whatever operand order
// the compiler picks, on any CPU.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "npukit/ops/fp32_semantics.hpp"

namespace npukit::ref {

// addss/addps: a NaN operand is returned quieted, the first one when both are
// NaN; inf + -inf gives the default NaN (npukit/ops/fp32_semantics.hpp).
using npukit::quiet_nan;
using npukit::x86_add;
using npukit::x86_default_nan;
using npukit::x86_mul;

// maxss/maxps(m, v): v unless m > v, so NaN on either side gives v and of
// two equal values (+0, -0) the second.
inline float x86_simd_max(float m, float v) {
  return m > v ? m : v;
}

// std::max(m, v): m unless m < v, so a NaN v never wins and a NaN m stays.
inline float scalar_max(float m, float v) {
  return m < v ? v : m;
}

}  // namespace npukit::ref
