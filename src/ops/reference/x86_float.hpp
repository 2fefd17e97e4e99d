// The x86 SSE rules for fp32 results that C++ leaves to the compiler: which
// NaN an addition returns and what max does with NaN and signed zeros. A
// reference kernel that states them gives the same bits whatever operand order
// the compiler picks, on any CPU.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace npukit::ref {

// The default NaN x86 produces for an invalid operation (inf - inf).
inline float x86_default_nan() {
  return std::bit_cast<float>(0xffc00000u);
}

inline float quiet_nan(float a) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(a) | 0x00400000u);
}

// addss/addps: a NaN operand is returned quieted, the first one when both are
// NaN; inf + -inf gives the default NaN.
inline float x86_add(float a, float b) {
  if (std::isnan(a)) return quiet_nan(a);
  if (std::isnan(b)) return quiet_nan(b);
  const float r = a + b;
  return std::isnan(r) ? x86_default_nan() : r;
}

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
