// x8-qavgpool-k3s2-nchw-avx512vbmi: 3x3 stride-2 8-bit averages with one
// pixel of padding before the first row and column, on NCHW rows, with ONNX
// Runtime's final steps (qavgpool-k3s2.hpp). Strips of 64 outputs
// (two blocks of 32 lanes) walk down a plane: each input row's three-tap
// sums are formed once (vpmaddubsw of the column pairs plus the column
// before), the row shared by two windows is kept in a register, and one
// vpermt2b narrows both blocks into one store. Integer sums are exact in any
// order, and the final steps are the reference's (the integer one) or
// checked against it (the float one): the codes are the reference's bit for
// bit.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-k3s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512vbmi-begin.inc"

namespace npukit::cpu {
namespace {

#include "ops/cpu/x8-qavgpool-vbmi-common.inc"

// The final step's fields of 32 lanes (A, m, e).
struct Fields {
  __m512i a, m, e;
};

inline Fields fields_at(const uint16_t* f, int64_t L) {
  return {_mm512_loadu_si512(f), _mm512_loadu_si512(f + L), _mm512_loadu_si512(f + 2 * L)};
}

// Codes of 32 lanes from their window sums s (qavgpool-k3s2.hpp).
template <bool Even>
inline __m512i codes16(__m512i s, const Fields& F, __m512i k, __m512i lo, __m512i hi) {
  const __m512i nh = _mm512_add_epi16(s, F.a);
  __m512i q = _mm512_srli_epi16(_mm512_mulhi_epu16(nh, F.m), 1);
  if constexpr (Even) {
    const __m512i q2 = _mm512_srli_epi16(_mm512_mulhi_epu16(_mm512_sub_epi16(nh, F.e), F.m), 1);
    q = _mm512_add_epi16(q2, _mm512_and_si512(_mm512_sub_epi16(q, q2), q2));
  }
  return _mm512_min_epi16(_mm512_max_epi16(_mm512_sub_epi16(q, k), lo), hi);
}

// The three-tap sums (columns 2j - 1, 2j, 2j + 1) of one input row for the
// 32 outputs of a block: `at` holds columns 64b.., `before` columns 64b - 1..
// (the column-pair words shifted by one byte: the low byte is 2j - 1).
template <class T>
inline __m512i row_sums(__m512i at, __m512i before) {
  if constexpr (std::is_signed_v<T>)
    return _mm512_add_epi16(_mm512_maddubs_epi16(_mm512_set1_epi8(1), at),
                            _mm512_srai_epi16(_mm512_slli_epi16(before, 8), 8));
  else
    return _mm512_add_epi16(_mm512_maddubs_epi16(at, _mm512_set1_epi8(1)),
                            _mm512_and_si512(before, _mm512_set1_epi16(0xff)));
}

// One strip (outputs [64t, 64t + n), n <= 64) of a plane, every output row.
template <class T, bool Even, bool Checked>
void strip(const K3s2Plan& K, const QAvgPlan& P, const T* x, int64_t xp, T* y, int64_t yp,
           int64_t t) {
  const int64_t L = K.blocks * 32, n = std::min<int64_t>(64, K.OW - 64 * t);
  // Block b's columns: [0, 2 n_b) from 64b, the same from 64b - 1 but column -1.
  const __mmask64 at0 = first_bytes(2 * n), at1 = first_bytes(2 * n - 64);
  const __mmask64 before0 = t == 0 ? at0 & ~__mmask64(1) : at0, out = first_bytes(n);
  const T* xs = x + 128 * t;
  auto sums = [&](const T* row, int b) {
    const T* at = row + 64 * b;
    return row_sums<T>(_mm512_maskz_loadu_epi8(b ? at1 : at0, at),
                       _mm512_maskz_loadu_epi8(b ? at1 : before0, at - 1));
  };
  const __m512i idx = low_bytes_index(32), k = _mm512_set1_epi16(static_cast<int16_t>(K.K));
  const __m512i lo = _mm512_set1_epi16(static_cast<int16_t>(std::is_signed_v<T> ? -128 : 0));
  const __m512i hi = _mm512_set1_epi16(static_cast<int16_t>(std::is_signed_v<T> ? 127 : 255));
  const uint16_t* f0 = Checked ? nullptr : K.fields.data() + 64 * t;  // row class 0
  const uint16_t* f1 = Checked ? nullptr : f0 + 3 * L;                // the other rows
  const Fields r0 = Checked ? Fields{} : fields_at(f1, L);
  const Fields r1 = Checked ? Fields{} : fields_at(f1 + 32, L);
  const FloatRegs FR = float_regs(P);
  __m512i carry0 = _mm512_setzero_si512(), carry1 = carry0;  // row 2i - 1
  for (int64_t i = 0; i < K.OH; ++i) {
    const T* a = xs + 2 * i * xp;
    const __m512i b0 = sums(a + xp, 0), b1 = sums(a + xp, 1);
    const __m512i s0 = _mm512_add_epi16(_mm512_add_epi16(carry0, sums(a, 0)), b0);
    const __m512i s1 = _mm512_add_epi16(_mm512_add_epi16(carry1, sums(a, 1)), b1);
    carry0 = b0, carry1 = b1;
    __m512i q0, q1;
    if constexpr (Checked) {
      const size_t c = i == 0 ? 0 : static_cast<size_t>(L), o = static_cast<size_t>(64 * t);
      __mmask32 redo0, redo1;
      const int32_t* off = K.offsets.data() + c + o;
      const float* mul = K.multipliers.data() + c + o;
      q0 = checked_codes(s0, _mm512_loadu_si512(off), _mm512_loadu_si512(off + 16),
                         _mm512_loadu_ps(mul), _mm512_loadu_ps(mul + 16), FR, &redo0);
      q1 = checked_codes(s1, _mm512_loadu_si512(off + 32), _mm512_loadu_si512(off + 48),
                         _mm512_loadu_ps(mul + 32), _mm512_loadu_ps(mul + 48), FR, &redo1);
      T* yr = y + i * yp + 64 * t;
      _mm512_mask_storeu_epi8(yr, out, _mm512_permutex2var_epi8(q0, idx, q1));
      const uint64_t redo = (redo0 | uint64_t{redo1} << 32) & out;
      for (uint64_t m = redo; m != 0; m &= m - 1) {
        const int j = __builtin_ctzll(m);
        yr[j] = redo_output(P, x, xp, i, 64 * t + j);
      }
      continue;
    }
    if (i == 0) {
      q0 = codes16<Even>(s0, fields_at(f0, L), k, lo, hi);
      q1 = codes16<Even>(s1, fields_at(f0 + 32, L), k, lo, hi);
    } else {
      q0 = codes16<Even>(s0, r0, k, lo, hi);
      q1 = codes16<Even>(s1, r1, k, lo, hi);
    }
    _mm512_mask_storeu_epi8(y + i * yp + 64 * t, out, _mm512_permutex2var_epi8(q0, idx, q1));
  }
}

template <class T, bool Even, bool Checked>
void run(const QAvgPoolProblem& p, const K3s2Plan& K) {
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  const int64_t C = p.x.dim(1), strips = K.blocks / 2;
  for_ranges(p.x.dim(0) * C, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const T* xs = x + s / C * p.x.stride(0) + s % C * p.x.stride(1);
      T* ys = y + s / C * p.y.stride(0) + s % C * p.y.stride(1);
      for (int64_t t = 0; t < strips; ++t)
        strip<T, Even, Checked>(K, p.plan, xs, p.x.stride(2), ys, p.y.stride(2), t);
    }
  });
}

template <class T>
void run_any(const QAvgPoolProblem& p, const K3s2Plan& K) {
  if (K.checked)
    run<T, false, true>(p, K);
  else if (K.any_even)
    run<T, true, false>(p, K);
  else
    run<T, false, false>(p, K);
}

}  // namespace

void x8_qavgpool_k3s2_nchw_avx512vbmi(const QAvgPoolProblem& p) {
  K3s2Plan K;
  k3s2_build(p, &K);
  if (p.plan.dtype == DType::s8)
    run_any<int8_t>(p, K);
  else
    run_any<uint8_t>(p, K);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
