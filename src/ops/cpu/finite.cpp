#include "finite.hpp"

#include <cstdint>
#include <cstring>

namespace npukit::cpu {

bool all_finite_f32(const TensorView& t) {
  if (t.is_contiguous()) {
    const auto* bits = static_cast<const uint32_t*>(t.raw());
    const int64_t n = t.numel();
    // Exponent all ones: infinite or NaN. OR-reduced so the loop vectorizes.
    uint32_t any = 0;
    for (int64_t i = 0; i < n; ++i) any |= ((bits[i] & 0x7f800000u) == 0x7f800000u) ? 1u : 0u;
    return any == 0;
  }
  Shape idx(static_cast<size_t>(t.rank()), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = 0, rest = i;
    for (int d = t.rank() - 1; d >= 0; --d) {
      off += rest % t.dim(d) * t.stride(d);
      rest /= t.dim(d);
    }
    uint32_t b;
    std::memcpy(&b, static_cast<const float*>(t.raw()) + off, 4);
    if ((b & 0x7f800000u) == 0x7f800000u) return false;
  }
  return true;
}

}  // namespace npukit::cpu
