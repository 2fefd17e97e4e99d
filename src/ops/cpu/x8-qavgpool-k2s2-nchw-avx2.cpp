// x8-qavgpool-k2s2-nchw-avx2: the AVX2 twin of
// x8-qavgpool-k2s2-nchw-avx512vbmi (2x2 stride-2 8-bit averages on NCHW rows,
// plan and rounding proof in qavgpool-k2s2.hpp/.cpp). Per 16 outputs: one
// 32-byte load per window row, one vpmaddubsw each against ones (the column
// pairs' sums in 16-bit lanes), their sum and the quotient by 4 as a few
// shifts and adds; two such chunks are narrowed by one vpackuswb/vpacksswb
// and one vpermq and stored as two 16-byte halves. AVX2 has no byte-masked
// loads: a row's last chunk starts at OW - 16 and overlaps the one before
// (the same outputs, computed the same way, written twice), so no load
// leaves the row and rows need OW >= 16. Calibrated scales take the checked
// float tail (the x8-qavgpool-u16-nchw-avx2 kernel's fp32 operations) and
// redo the undecided outputs in the reference's order.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-k2s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

using Corr = K2s2Plan::Corr;

#include "ops/cpu/x8-qavgpool-avx2-checked.inc"

// The 16 window sums of two input rows' 32 bytes at a and b (u8 codes as the
// unsigned operand of vpmaddubsw, s8 codes as the signed one).
template <class T>
inline __m256i window_sums(const T* a, const T* b) {
  const __m256i ones = _mm256_set1_epi8(1);
  const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  if constexpr (std::is_signed_v<T>)
    return _mm256_add_epi16(_mm256_maddubs_epi16(ones, va), _mm256_maddubs_epi16(ones, vb));
  else
    return _mm256_add_epi16(_mm256_maddubs_epi16(va, ones), _mm256_maddubs_epi16(vb, ones));
}

// R((s + 4 offset) / 4), clamped when Clamp (offset != 0), as the AVX-512
// kernel's codes16: (n + A + corr(n)) >> 2 (proof at set_rule in
// qavgpool-k2s2.cpp); half to even is (n - ~(n >> 2 & 1)) >> 2.
template <Corr Cr, bool Clamp>
struct IntCodes {
  static constexpr bool kChecked = false;
  __m256i add, offset4, lo, hi;
  explicit IntCodes(const K2s2Plan& K)
      : add(_mm256_set1_epi16(static_cast<int16_t>(K.add))),
        offset4(_mm256_set1_epi16(static_cast<int16_t>(4 * K.offset))),
        lo(_mm256_set1_epi16(static_cast<int16_t>(K.lo))),
        hi(_mm256_set1_epi16(static_cast<int16_t>(K.hi))) {}
  __m256i operator()(__m256i s, int*) const {
    const __m256i n = Clamp ? _mm256_add_epi16(s, offset4) : s;
    __m256i v;
    if constexpr (Cr == Corr::bit2) {
      const __m256i bit = _mm256_and_si256(_mm256_srli_epi16(n, 2), _mm256_set1_epi16(1));
      v = _mm256_sub_epi16(n, _mm256_xor_si256(bit, _mm256_set1_epi16(-1)));  // n + 1 + bit
    } else {
      v = _mm256_add_epi16(n, add);
      if constexpr (Cr == Corr::neg_one) v = _mm256_add_epi16(v, _mm256_srai_epi16(n, 15));
      if constexpr (Cr == Corr::neg_plus) v = _mm256_add_epi16(v, _mm256_srli_epi16(n, 15));
      if constexpr (Cr == Corr::neg_three)
        v = _mm256_add_epi16(v, _mm256_and_si256(_mm256_srai_epi16(n, 15), _mm256_set1_epi16(3)));
    }
    v = _mm256_srai_epi16(v, 2);
    if constexpr (Clamp) v = _mm256_min_epi16(_mm256_max_epi16(v, lo), hi);
    return v;
  }
};

// Calibrated scales: every lane has D = s - 4 x_zp and the multiplier of
// divisor 4.
struct CheckedCodes {
  static constexpr bool kChecked = true;
  CheckedRegs F;
  __m256i offset;
  __m256 multiplier;
  explicit CheckedCodes(const QAvgPlan& P)
      : F(checked_regs(P)),
        offset(_mm256_set1_epi32(-4 * P.x_zp)),
        multiplier(_mm256_set1_ps(fmean_check_multiplier(P, 4))) {}
  __m256i operator()(__m256i s, int* redo) const {
    return checked16(s, offset, offset, multiplier, multiplier, F, redo);
  }
};

// Output rows [r0, r1) of a segment: chunks of 16 outputs at columns 0, 16,
// ... and OW - 16, two per narrowing.
template <class T, class Codes>
void rows(const QAvgPlan& P, const K2s2Plan& K, const Codes& codes, const T* x, T* y, int64_t r0,
          int64_t r1) {
  const int64_t OW = K.OW, xp = K.x_pitch, yp = K.y_pitch;
  const Codes f = codes;
  for (int64_t r = r0; r < r1; ++r) {
    const T* a = x + 2 * r * xp;
    T* yr = y + r * yp;
    auto two = [&](int64_t j0, int64_t j1) {
      int redo0 = 0, redo1 = 0;
      const __m256i q0 = f(window_sums(a + 2 * j0, a + xp + 2 * j0), &redo0);
      const __m256i q1 = f(window_sums(a + 2 * j1, a + xp + 2 * j1), &redo1);
      const __m256i b = narrow<T>(q0, q1);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yr + j0), _mm256_castsi256_si128(b));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yr + j1), _mm256_extracti128_si256(b, 1));
      if constexpr (Codes::kChecked) {
        if ((redo0 | redo1) == 0) return;
        const T* plane = x + r / K.OH * 2 * K.OH * xp;
        redo_outputs(P, plane, xp, r % K.OH, j0, redo0, yr + j0);
        redo_outputs(P, plane, xp, r % K.OH, j1, redo1, yr + j1);
      }
    };
    int64_t j = 0;
    for (; j + 32 <= OW; j += 32) two(j, j + 16);
    if (j < OW) two(std::min(j, OW - 16), OW - 16);
  }
}

template <class T, class Codes>
void run(const QAvgPoolProblem& p, const K2s2Plan& K, const Codes& codes) {
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  if (K.stacked) {
    for_ranges(K.seg_rows,
               [&](int64_t r0, int64_t r1) { rows<T>(p.plan, K, codes, x, y, r0, r1); });
    return;
  }
  const int64_t C = p.x.dim(1);
  for_ranges(K.segments, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t n = s / C, c = s % C;
      rows<T>(p.plan, K, codes, x + n * p.x.stride(0) + c * p.x.stride(1),
              y + n * p.y.stride(0) + c * p.y.stride(1), 0, K.seg_rows);
    }
  });
}

template <class T, Corr Cr>
void run_clamp(const QAvgPoolProblem& p, const K2s2Plan& K) {
  if (K.offset != 0)
    run<T>(p, K, IntCodes<Cr, true>(K));
  else
    run<T>(p, K, IntCodes<Cr, false>(K));
}

template <class T>
void run_rule(const QAvgPoolProblem& p, const K2s2Plan& K) {
  if (K.checked) return run<T>(p, K, CheckedCodes(p.plan));
  switch (K.corr) {
    case Corr::none:
      return run_clamp<T, Corr::none>(p, K);
    case Corr::bit2:
      return run_clamp<T, Corr::bit2>(p, K);
    case Corr::neg_one:
      return run_clamp<T, Corr::neg_one>(p, K);
    case Corr::neg_plus:
      return run_clamp<T, Corr::neg_plus>(p, K);
    case Corr::neg_three:
      return run_clamp<T, Corr::neg_three>(p, K);
  }
}

}  // namespace

void x8_qavgpool_k2s2_nchw_avx2(const QAvgPoolProblem& p) {
  K2s2Plan K;
  k2s2_build(p, &K);
  if (p.plan.dtype == DType::s8)
    run_rule<int8_t>(p, K);
  else
    run_rule<uint8_t>(p, K);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
