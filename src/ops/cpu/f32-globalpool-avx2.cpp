// AVX2 f32 global pools over NCHW planes (f32-globalpool.hpp): max through
// the lane shim of f32-globalmax-nchw-body.inc (8 planes per pass), averages
// and sums in the reference's order (below; AVX-512 hosts run them too).
#include <algorithm>
#include <array>
#include <cfloat>
#include <cstdint>
#include <limits>
#include <utility>

#include "f32-globalpool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

struct GfVec {
  using F = __m256;
  static constexpr int64_t kLanes = 8;
  static constexpr int kDepth = 3;
  static constexpr bool kBitsMaxFirst = true;  // fixed passes: integer max first (3.7 -> 2.8 µs)
  static constexpr bool kTreeInPostOrder = true;  // 4 live partials of 16 registers, not 8 leaves
  static F loadu(const float* p) { return _mm256_loadu_ps(p); }
  static F load_first(const float* p, int64_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
    const F v = _mm256_maskload_ps(p, m);  // masked lanes are not read
    return _mm256_blendv_ps(_mm256_set1_ps(-std::numeric_limits<float>::infinity()), v,
                            _mm256_castsi256_ps(m));
  }
  using Mask = __m256;  // all-ones lanes
  static Mask make_mask(uint32_t bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i b = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), bit);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, bit));
  }
  static F load_masked(const float* p, Mask m) {  // p's vector is inside the tensor
    return _mm256_blendv_ps(_mm256_set1_ps(-std::numeric_limits<float>::infinity()),
                            _mm256_loadu_ps(p), m);
  }
  static F max_masked(F a, F b, Mask m) { return _mm256_blendv_ps(a, _mm256_max_ps(a, b), m); }
  static F blend(Mask m, F a, F b) { return _mm256_blendv_ps(a, b, m); }
  using Index = __m256i;
  static Index lane_index(const int* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static F permute(F v, Index i) { return _mm256_permutevar8x32_ps(v, i); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F imax(F a, F b) {
    return _mm256_castsi256_ps(_mm256_max_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
  }
  static F imax_masked(F a, F b, Mask m) { return _mm256_blendv_ps(a, imax(a, b), m); }
  static uint32_t positive_bits(F v) {
    const __m256i gt = _mm256_cmpgt_epi32(_mm256_castps_si256(v), _mm256_setzero_si256());
    return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(gt)));
  }
  static constexpr int kNanChains = 0;            // a compare per pair (GfNanSum)
  static F nan_acc(F acc, F) { return acc; }      // not called: no chains
  static F nan_pair(F acc, F, F) { return acc; }  // not called: no chains
  static uint32_t nan_bits(F a, F b) {
    return static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)));
  }
  template <int Level>
  static void merge_parts(F a, F b, F& lo, F& hi) {
    if constexpr (Level == 0) {  // 128-bit halves
      lo = _mm256_permute2f128_ps(a, b, 0x20);
      hi = _mm256_permute2f128_ps(a, b, 0x31);
    } else if constexpr (Level == 1) {  // 64-bit halves of each 128-bit half
      lo = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
      hi = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(a), _mm256_castps_pd(b)));
    } else {  // even / odd floats
      lo = _mm256_shuffle_ps(a, b, 0x88);
      hi = _mm256_shuffle_ps(a, b, 0xdd);
    }
  }
  static uint32_t order_bits(F v, bool flush) {
    if (flush) {
      const F abs = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
      return static_cast<uint32_t>(
          _mm256_movemask_ps(_mm256_cmp_ps(abs, _mm256_set1_ps(FLT_MIN), _CMP_LT_OQ)));
    }
    return static_cast<uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_EQ_OQ)));
  }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
};

// Averages and sums: lane k of an accumulator holds plane k's running sum and
// adds the plane's elements in order e = 0 .. hw-1, as the reference does.
// Four elements of eight planes reach the lanes by 128-bit loads (plane k in
// the low half, plane k + 4 in the high one) and a 4x4 transpose inside the
// halves: 1 insert and 2 shuffles per vector. Two groups of eight planes run
// side by side: two add chains. Measured on 1x2048x7x7 (Zen 5, loaded
// machine, best of many runs): 7.3-7.5 µs against 8.6-9.2 µs for 8x8 (ymm)
// or 16x16 (zmm) transposes of whole rows, which need 3-4 shuffles a vector.

// a + b and a * b with a as the instruction's first source, which decides
// the result when both are NaN (x86_add / x86_mul). Inline asm: GCC treats
// _mm256_add_ps / _mm256_mul_ps as commutative and may swap the operands.
inline __m256 ga_add(__m256 a, __m256 b) {
  __m256 r;
  asm("vaddps %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
  return r;
}
inline __m256 ga_mul(__m256 a, __m256 b) {
  __m256 r;
  asm("vmulps %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
  return r;
}

// Floats e .. e+N-1 of a plane (N < 4: masked, the rest +0 and not read).
template <int N>
inline __m128 ga_quad(const float* p) {
  if constexpr (N == 4) {
    return _mm_loadu_ps(p);
  } else {
    const __m128i m = _mm_setr_epi32(-1, N > 1 ? -1 : 0, N > 2 ? -1 : 0, 0);
    return _mm_maskload_ps(p, m);
  }
}

// Row k of a group of 8 planes (n of them present): plane k | plane k + 4.
template <int N, bool Full>
inline __m256 ga_row(const float* p, int64_t cs, int k, int n) {
  const __m128 lo = Full || k < n ? ga_quad<N>(p + k * cs) : _mm_setzero_ps();
  const __m128 hi = Full || k + 4 < n ? ga_quad<N>(p + (k + 4) * cs) : _mm_setzero_ps();
  return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

// r[i] := element i of the 8 planes (in-lane 4x4 transpose).
inline void ga_transpose(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  r[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  r[1] = _mm256_shuffle_ps(t0, t2, 0xee);
  r[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  r[3] = _mm256_shuffle_ps(t1, t3, 0xee);
}

// Elements [e, e + N) of 16 planes (n present) added to acc[0] (planes 0-7)
// and acc[1] (8-15).
template <int N, bool Full>
inline void ga_step(const float* x, int64_t cs, int64_t e, int n, __m256* acc) {
  __m256 r[2][4];
  for (int g = 0; g < 2; ++g)
    for (int k = 0; k < 4; ++k) r[g][k] = ga_row<N, Full>(x + g * 8 * cs + e, cs, k, n - 8 * g);
  ga_transpose(r[0]);
  ga_transpose(r[1]);
  for (int i = 0; i < N; ++i)
    for (int g = 0; g < 2; ++g) acc[g] = ga_add(acc[g], r[g][i]);
}

// Planes of b with hw % 4 == R, 16 at a time, finished by the rule.
template <int R>
void ga_planes(const F32GlobalPlanes& b, const F32GlobalAvgRule& rule, float* out, int64_t os) {
  const __m256 div = _mm256_set1_ps(static_cast<float>(b.hw)), coeff = _mm256_set1_ps(rule.coeff);
  const auto sums = [&](const float* x, int n, bool full, float* lanes) {
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t e = 0;
    if (full) {
      for (; e + 4 <= b.hw; e += 4) ga_step<4, true>(x, b.cs, e, n, acc);
      if constexpr (R > 0) ga_step<R, true>(x, b.cs, e, n, acc);
    } else {
      for (; e + 4 <= b.hw; e += 4) ga_step<4, false>(x, b.cs, e, n, acc);
      if constexpr (R > 0) ga_step<R, false>(x, b.cs, e, n, acc);
    }
    for (int g = 0; g < 2; ++g)
      _mm256_storeu_ps(lanes + 8 * g,
                       rule.sum ? ga_mul(acc[g], coeff) : _mm256_div_ps(acc[g], div));
  };
  for (int64_t k0 = 0; k0 < b.count; k0 += 16) {
    const int n = static_cast<int>(std::min<int64_t>(16, b.count - k0));
    float lanes[16];
    sums(b.x + k0 * b.cs, n, n == 16, os == 1 && n == 16 ? out + k0 : lanes);
    if (os != 1 || n != 16)
      for (int k = 0; k < n; ++k) out[(k0 + k) * os] = lanes[k];
  }
}

template <int... R>
constexpr auto ga_table(std::integer_sequence<int, R...>) {
  using Fn = void (*)(const F32GlobalPlanes&, const F32GlobalAvgRule&, float*, int64_t);
  return std::array<Fn, sizeof...(R)>{ga_planes<R>...};
}

}  // namespace
}  // namespace npukit::cpu

#include "ops/cpu/f32-globalmax-nchw-body.inc"

namespace npukit::cpu {

void f32_global_max_avx2(const F32GlobalPlanes& b, const F32GlobalMaxRule& r, float* out,
                         uint32_t* redo) {
  gf_planes(b, r, out, redo);
}

void f32_global_avg_avx2(const F32GlobalPlanes& b, const F32GlobalAvgRule& r, float* out,
                         int64_t os) {
  static constexpr auto table = ga_table(std::make_integer_sequence<int, 4>{});
  table[static_cast<size_t>(b.hw % 4)](b, r, out, os);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
