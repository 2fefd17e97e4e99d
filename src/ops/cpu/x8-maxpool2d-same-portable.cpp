// Portable s8/u8 max pooling, several planes per pass
// (x8-maxpool2d-same.hpp): 16 lanes of plain C++ per "vector".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "last_plan.hpp"
#include "npukit/parallel.hpp"
#include "x8-maxpool2d-same.hpp"

namespace npukit::cpu {
namespace {

struct Vec {
  struct V {
    uint8_t b[16];
  };
  using M = uint16_t;
  static constexpr int64_t kLanes = 16;
  static V load(const uint8_t* p) {
    V v;
    std::memcpy(v.b, p, 16);
    return v;
  }
  static void store(uint8_t* p, V v) { std::memcpy(p, v.b, 16); }
  static void store_part(uint8_t* p, V v, int64_t n) {
    std::memcpy(p, v.b, static_cast<size_t>(n));
  }
  // No group kernel of its own (x8-maxpool2d-same.inc).
  template <class T>
  static std::nullptr_t special(const X8SamePlan&) {
    return nullptr;
  }
  static V zero() { return V{}; }
  template <class T>
  static V max_masked(V a, M m, V b) {
    // Branch-free lane selects (random codes would mispredict every other branch).
    for (int i = 0; i < 16; ++i) {
      const T x = static_cast<T>(a.b[i]), y = static_cast<T>(b.b[i]);
      const auto take = static_cast<uint8_t>(0u - (((m >> i) & 1u) & static_cast<unsigned>(y > x)));
      a.b[i] = static_cast<uint8_t>((a.b[i] & ~take) | (b.b[i] & take));
    }
    return a;
  }
  static std::vector<M> masks(const X8SamePlan& pl) {
    std::vector<M> out(static_cast<size_t>(pl.masks() * pl.L));
    for (int64_t m = 0; m < pl.masks(); ++m)
      for (int64_t j = 0; j < pl.L; ++j)
        out[static_cast<size_t>(m * pl.L + j)] =
            static_cast<M>(pl.mask_bits(m)[j / 4] >> (16 * (j % 4)));
    return out;
  }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-maxpool2d-same.inc"

namespace npukit::cpu {

void max_pool2d_x8_same_portable(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    run<int8_t>(pr);
  else
    run<uint8_t>(pr);
}

}  // namespace npukit::cpu
