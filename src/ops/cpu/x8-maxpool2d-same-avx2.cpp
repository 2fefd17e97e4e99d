// AVX2 s8/u8 max pooling, several planes per pass (x8-maxpool2d-same.hpp):
// 32 lanes; masks are byte vectors (0xff where the tap is on the plane) for
// an and (u8) or a min (s8) before the max, AVX2 having no mask registers.
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

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

struct Vec {
  using V = __m256i;
  struct M {  // bytes: std::vector<__m256i> would lose the 32-byte alignment
    uint8_t bytes[32];
  };
  static constexpr int64_t kLanes = 32;
  static V load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static void store(uint8_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static void store_part(uint8_t* p, V v, int64_t n) {
    alignas(32) uint8_t tmp[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v);
    std::memcpy(p, tmp, static_cast<size_t>(n));
  }
  // No group kernel of its own (x8-maxpool2d-same.inc).
  template <class T>
  static std::nullptr_t special(const X8SamePlan&) {
    return nullptr;
  }
  static V zero() { return _mm256_setzero_si256(); }
  // No blend: u8 clears b's off-plane lanes to 0, the lowest code; s8 takes
  // min(b, 127) on the plane and min(b, -128) off it (the mask's bytes 0xff /
  // 0x00 with the sign bit flipped), then one max. The race's 14x14 k3s1p1
  // max against the blend, alternated (session 15): u8 12.9-13.1 -> 11.2-11.6
  // us at load 13, s8 6.8-6.9 -> 5.3-6.1 at load 9-10.
  template <class T>
  static V max_masked(V a, const M& m, V b) {
    if constexpr (!std::is_signed_v<T>) {
      return _mm256_max_epu8(a, _mm256_and_si256(b, load(m.bytes)));
    } else {
      return _mm256_max_epi8(
          a, _mm256_min_epi8(b, _mm256_xor_si256(load(m.bytes), _mm256_set1_epi8(-128))));
    }
  }
  // Bit i of a 32-bit word -> byte i: 0xff when set.
  static std::vector<M> masks(const X8SamePlan& pl) {
    const int64_t count = pl.masks() * pl.L;
    std::vector<M> out(static_cast<size_t>(count));
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                            2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    for (int64_t m = 0; m < pl.masks(); ++m) {
      const uint64_t* w = pl.mask_bits(m);
      for (int64_t j = 0; j < pl.L; ++j) {
        const auto word = static_cast<uint32_t>(w[j / 2] >> (32 * (j % 2)));
        const __m256i bytes =
            _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(word)), spread);
        store(out[static_cast<size_t>(m * pl.L + j)].bytes,
              _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit));
      }
    }
    return out;
  }
};

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/x8-maxpool2d-same.inc"

namespace npukit::cpu {

void max_pool2d_x8_same_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    run<int8_t>(pr);
  else
    run<uint8_t>(pr);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
