// Stores the first n (0 .. 8) floats of an AVX2 vector with plain stores
// (32, 16, 8 and 4 bytes), touching no byte past p + n: VMASKMOVPS stores cost
// ~42 uops / 12 cycles on Zen 2 and 3. With n known at compile time (an
// inlined template's tail) it is at most three stores, no branch.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace npukit::cpu {

__attribute__((target("avx2"))) inline void store_first_f32x8(float* p, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(p, v);
    return;
  }
  __m128 part = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(p, part);
    part = _mm256_extractf128_ps(v, 1);
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
    part = _mm_movehl_ps(part, part);
    p += 2;
    n -= 2;
  }
  if (n == 1) _mm_store_ss(p, part);
}

}  // namespace npukit::cpu
