// x8-qavgpool-k2s2-nchw-avx512vbmi: 2x2 stride-2 8-bit averages on NCHW rows
// with an integer final step (qavgpool-k2s2.hpp). Per 32 outputs: one
// 64-byte load per window row, one vpmaddubsw each against ones (the
// column pairs' sums in 16-bit lanes), their sum, the rounding quotient by 4
// as a few shifts and adds, and one vpermt2b that takes the low bytes of two
// such registers into one 64-byte store. Calibrated scales take the checked
// float tail instead of the integer quotient (x8-qavgpool-vbmi-common.inc).
// Integer sums are exact in any order and the final steps are the
// reference's or checked against it: the codes are the reference's bit for
// bit.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-k2s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512vbmi-begin.inc"

namespace npukit::cpu {
namespace {

using Corr = K2s2Plan::Corr;

#include "ops/cpu/x8-qavgpool-vbmi-common.inc"

// The 32 window sums of two input rows' 64 bytes a, b (column pairs 2j,
// 2j + 1 of output j): vpmaddubsw multiplies unsigned bytes by signed ones,
// so u8 codes go in as the unsigned operand and s8 codes as the signed one.
template <class T>
inline __m512i window_sums(__m512i a, __m512i b) {
  const __m512i ones = _mm512_set1_epi8(1);
  if constexpr (std::is_signed_v<T>)
    return _mm512_add_epi16(_mm512_maddubs_epi16(ones, a), _mm512_maddubs_epi16(ones, b));
  else
    return _mm512_add_epi16(_mm512_maddubs_epi16(a, ones), _mm512_maddubs_epi16(b, ones));
}

// Per-call constants of the final step (as locals of each loop: registers).
struct FinalRegs {
  __m512i add, offset4, lo, hi;
};

inline FinalRegs final_regs(const K2s2Plan& K) {
  return {_mm512_set1_epi16(static_cast<int16_t>(K.add)),
          _mm512_set1_epi16(static_cast<int16_t>(4 * K.offset)),
          _mm512_set1_epi16(static_cast<int16_t>(K.lo)),
          _mm512_set1_epi16(static_cast<int16_t>(K.hi))};
}

// R((s + 4 offset) / 4), clamped when Clamp (offset != 0; proof of the rules
// at set_rule in qavgpool-k2s2.cpp). |s + 4 offset| <= 2040 fits the 16-bit
// lanes. Half to even (A = 1): n + 1 + b is n - ~b, b = bit 2 of n.
template <Corr Cr, bool Clamp>
inline __m512i codes16(__m512i s, const FinalRegs& F) {
  const __m512i n = Clamp ? _mm512_add_epi16(s, F.offset4) : s;
  __m512i v;
  if constexpr (Cr == Corr::bit2) {
    const __m512i one = _mm512_set1_epi16(1);
    v = _mm512_sub_epi16(n, _mm512_ternarylogic_epi32(_mm512_srli_epi16(n, 2), one, one, 0x3f));
  } else {
    v = _mm512_add_epi16(n, F.add);
    if constexpr (Cr == Corr::neg_one) v = _mm512_add_epi16(v, _mm512_srai_epi16(n, 15));
    if constexpr (Cr == Corr::neg_plus) v = _mm512_add_epi16(v, _mm512_srli_epi16(n, 15));
    if constexpr (Cr == Corr::neg_three)
      v = _mm512_add_epi16(v, _mm512_and_si512(_mm512_srai_epi16(n, 15), _mm512_set1_epi16(3)));
  }
  v = _mm512_srai_epi16(v, 2);
  if constexpr (Clamp) v = _mm512_min_epi16(_mm512_max_epi16(v, F.lo), F.hi);
  return v;
}

// The final steps as policies: codes (16-bit lanes) of 32 window sums, and
// the lanes left undecided (the checked float tail only).
template <Corr Cr, bool Clamp>
struct IntCodes {
  static constexpr bool kChecked = false;
  FinalRegs F;
  __m512i operator()(__m512i s, __mmask32*) const { return codes16<Cr, Clamp>(s, F); }
};

struct CheckedCodes {  // every lane: D = s - 4 x_zp, the multiplier of divisor 4
  static constexpr bool kChecked = true;
  FloatRegs F;
  __m512i offset;
  __m512 multiplier;
  __m512i operator()(__m512i s, __mmask32* redo) const {
    return checked_codes(s, offset, offset, multiplier, multiplier, F, redo);
  }
};

// Redoes the outputs of the set bits b of redo, stored at y[b]: bit b is
// output (r + b / row, col + b % row) of a segment whose planes have K.OH
// rows (stacked: row i of the segment is row i % OH of plane i / OH).
template <class T>
__attribute__((noinline)) void redo_bits(const QAvgPlan& P, const K2s2Plan& K, const T* x,
                                         uint64_t redo, int64_t r, int64_t col, int64_t row, T* y) {
  for (; redo != 0; redo &= redo - 1) {
    const int b = __builtin_ctzll(redo);
    const int64_t i = r + b / row, plane = i / K.OH;
    y[b] = redo_output(P, x + plane * 2 * K.OH * K.x_pitch, K.x_pitch, i % K.OH, col + b % row);
  }
}

// Stores the codes of window sums s0 (bytes [0, L0) of y) and s1 (after
// them) under mask `out`, then redoes the undecided ones: byte b is output
// (r + b / row, col + b % row) of the segment (redo_bits).
template <bool Second, class T, class Codes>
inline void store_codes(const Codes& f, __m512i s0, __m512i s1, __m512i idx, __mmask64 out,
                        const QAvgPlan& P, const K2s2Plan& K, const T* x, int64_t r, int64_t col,
                        int64_t L0, int64_t row, T* y) {
  __mmask32 redo0 = 0, redo1 = 0;
  const __m512i q0 = f(s0, &redo0);
  const __m512i q1 = Second ? f(s1, &redo1) : q0;
  _mm512_mask_storeu_epi8(y, out, _mm512_permutex2var_epi8(q0, idx, q1));
  if constexpr (Codes::kChecked) {
    const uint64_t redo = ((redo0 & first_bytes(L0)) | uint64_t{redo1} << L0) & out;
    if (redo) redo_bits(P, K, x, redo, r, col, row, y);
  }
}

// Output rows [r0, r1) of a segment whose rows are at most 32 wide and back
// to back in y: two rows per step, 2 * OW codes in one store.
template <class T, class Codes>
void rows_pairs(const QAvgPlan& P, const K2s2Plan& K, const Codes& codes, const T* x, T* y,
                int64_t r0, int64_t r1) {
  const int64_t OW = K.OW, xp = K.x_pitch;
  const __mmask64 two = first_bytes(2 * OW), one = first_bytes(OW);  // 2 * OW: a row pair's bytes
  const __m512i idx = low_bytes_index(OW);
  const Codes f = codes;
  const T* xr = x + 2 * r0 * xp;
  T* yr = y + r0 * OW;
  int64_t r = r0;
  auto sums = [&](const T* a) {
    return window_sums<T>(_mm512_maskz_loadu_epi8(two, a), _mm512_maskz_loadu_epi8(two, a + xp));
  };
  for (; r + 2 <= r1; r += 2, xr += 4 * xp, yr += 2 * OW)
    store_codes<true>(f, sums(xr), sums(xr + 2 * xp), idx, two, P, K, x, r, 0, OW, OW, yr);
  if (r < r1) {
    const __m512i s0 = sums(xr);
    store_codes<false>(f, s0, s0, idx, one, P, K, x, r, 0, OW, OW, yr);
  }
}

// Output rows [r0, r1) one at a time, 64 outputs per step (a masked step for
// the last OW % 64).
template <class T, class Codes>
void rows_single(const QAvgPlan& P, const K2s2Plan& K, const Codes& codes, const T* x, T* y,
                 int64_t r0, int64_t r1) {
  const int64_t OW = K.OW, xp = K.x_pitch, yp = K.y_pitch, full = OW / 64, n = OW % 64;
  const __mmask64 load0 = first_bytes(2 * n), load1 = first_bytes(2 * n - 64), out = first_bytes(n);
  const __m512i idx = low_bytes_index(32);
  const Codes f = codes;
  for (int64_t r = r0; r < r1; ++r) {
    const T* a = x + 2 * r * xp;
    const T* b = a + xp;
    T* yr = y + r * yp;
    for (int64_t i = 0; i < full; ++i, a += 128, b += 128, yr += 64)
      store_codes<true>(f, window_sums<T>(_mm512_loadu_si512(a), _mm512_loadu_si512(b)),
                        window_sums<T>(_mm512_loadu_si512(a + 64), _mm512_loadu_si512(b + 64)), idx,
                        ~__mmask64(0), P, K, x, r, 64 * i, 32, 64, yr);
    if (n == 0) continue;
    const __m512i s0 =
        window_sums<T>(_mm512_maskz_loadu_epi8(load0, a), _mm512_maskz_loadu_epi8(load0, b));
    if (n > 32)
      store_codes<true>(f, s0,
                        window_sums<T>(_mm512_maskz_loadu_epi8(load1, a + 64),
                                       _mm512_maskz_loadu_epi8(load1, b + 64)),
                        idx, out, P, K, x, r, 64 * full, 32, 64, yr);
    else
      store_codes<false>(f, s0, s0, idx, out, P, K, x, r, 64 * full, 32, 64, yr);
  }
}

template <class T, class Codes>
void run(const QAvgPoolProblem& p, const K2s2Plan& K, const Codes& codes) {
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  const int64_t C = p.x.dim(1);
  auto rows = [&](const T* xs, T* ys, int64_t r0, int64_t r1) {
    if (K.pairs)
      rows_pairs<T>(p.plan, K, codes, xs, ys, r0, r1);
    else
      rows_single<T>(p.plan, K, codes, xs, ys, r0, r1);
  };
  if (K.stacked) {
    for_ranges(K.seg_rows, 2, [&](int64_t r0, int64_t r1) { rows(x, y, r0, r1); });
    return;
  }
  for_ranges(K.segments, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t n = s / C, c = s % C;
      rows(x + n * p.x.stride(0) + c * p.x.stride(1), y + n * p.y.stride(0) + c * p.y.stride(1), 0,
           K.seg_rows);
    }
  });
}

template <class T, Corr Cr>
void run_clamp(const QAvgPoolProblem& p, const K2s2Plan& K) {
  if (K.offset != 0)
    run<T>(p, K, IntCodes<Cr, true>{final_regs(K)});
  else
    run<T>(p, K, IntCodes<Cr, false>{final_regs(K)});
}

template <class T>
void run_rule(const QAvgPoolProblem& p, const K2s2Plan& K) {
  if (K.checked)
    return run<T>(p, K,
                  CheckedCodes{float_regs(p.plan), _mm512_set1_epi32(-4 * p.plan.x_zp),
                               _mm512_set1_ps(fmean_check_multiplier(p.plan, 4))});
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

void x8_qavgpool_k2s2_nchw_avx512vbmi(const QAvgPoolProblem& p) {
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
