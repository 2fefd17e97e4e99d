// AVX-512 (BW) s8/u8 max pooling, several planes per pass
// (x8-maxpool2d-same.hpp): 64 lanes, one 64-bit mask word per vector.
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

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

#include "ops/cpu/x8-maxpool2d-same-avx512-lanes.inc"

// On VBMI hosts, plans with one column tap above and one below run the
// column pass in registers (x8-maxpool2d-same-avx512vbmi.cpp).
struct Vec : Avx512Lanes {
  template <class T>
  static X8SameGroup512 special(const X8SamePlan& pl) {
    if (!x8_same_vbmi_usable() || !x8_same_vbmi_plan(pl)) return nullptr;
    return x8_same_group_vbmi(std::is_signed_v<T>, pl.row_taps.size() == 2);
  }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-maxpool2d-same.inc"

namespace npukit::cpu {

void max_pool2d_x8_same_avx512(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    run<int8_t>(pr);
  else
    run<uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
