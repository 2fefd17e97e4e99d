// Plan-time helpers of the integer final step in 16-bit lanes, shared by the
// u16 kernels of both ISAs (x8-qavgpool-u16-{avx512,avx2}.cpp); the proof
// that it equals the reference is at idiv32 in x8-qavgpool-u16-avx512.cpp.
#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

// floor(n / d) == (n*m >> 16) >> sh for every n in [0, n_max], d >= 2
// (the bound above); the largest sh with a 16-bit m. That sh gives m >= 2^15,
// so 2^(16+sh) > 32767*d > n_max*e whenever n_max < 2^15 (e < d): the check
// cannot fail for the numerators idiv_lane admits; it stays as the proof's
// guard.
bool magic16(int32_t d, int64_t n_max, uint16_t& m16, uint16_t& sh16) {
  for (int sh = 16; sh >= 0; --sh) {
    const int64_t p = int64_t{1} << (16 + sh), m = (p + d - 1) / d;
    if (m > 65535) continue;
    if (n_max * (m * d - p) >= p) return false;  // smaller sh is no better
    m16 = static_cast<uint16_t>(m);
    sh16 = static_cast<uint16_t>(sh);
    return true;
  }
  return false;
}

// nh_max: the largest n + h of the class's lanes.
IdivUniform idiv_uniform(int32_t d, int32_t k, int32_t nh_max) {
  IdivUniform U;
  uint16_t m = 0, sh = 0;
  if (d < 2 || nh_max > 32767 || !magic16(d, nh_max, m, sh)) return U;
  U.ok = true;
  U.odd = d % 2 == 1;
  U.m = static_cast<int16_t>(m);
  U.k = static_cast<int16_t>(k);
  U.sh = static_cast<int16_t>(sh);
  if ((d & (d - 1)) == 0) {
    U.pow2 = true;
    U.sh = 0;
    while ((1 << U.sh) < d) ++U.sh;
  }
  return U;
}

}  // namespace npukit::cpu
