// x8-qavgpool-k3s2-nchw-avx2: the AVX2 twin of
// x8-qavgpool-k3s2-nchw-avx512vbmi (3x3 stride-2 8-bit averages with one
// pixel of padding before the first row and column, ONNX Runtime's final
// steps; plan in qavgpool-k3s2.hpp). Strips of 16 outputs walk down a plane:
// each input row's three-tap sums are one vpmaddubsw of the 32 bytes from
// column 2c plus the low bytes of the 32 bytes from column 2c - 1 (for the
// first strip, the first load shifted by one byte: column -1 is padding), the
// row shared by two windows stays in a register, and one vpackuswb/vpacksswb
// and vpermq narrow the codes. AVX2 has no byte-masked loads: the last strip
// starts at OW - 16 and overlaps the one before (the same outputs, computed
// the same way), so no load leaves the row and rows need OW >= 16.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-k3s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

#include "ops/cpu/x8-qavgpool-avx2-checked.inc"

// The final step's fields of 16 lanes (A, m, e).
struct Fields {
  __m256i a, m, e;
};

inline __m256i load(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

inline Fields fields_at(const uint16_t* f, int64_t L) {
  return {load(f), load(f + L), load(f + 2 * L)};
}

// Codes of 16 lanes from their window sums s (the AVX-512 kernel's codes16).
template <bool Even>
inline __m256i codes16(__m256i s, const Fields& F, __m256i k, __m256i lo, __m256i hi) {
  const __m256i nh = _mm256_add_epi16(s, F.a);
  __m256i q = _mm256_srli_epi16(_mm256_mulhi_epu16(nh, F.m), 1);
  if constexpr (Even) {
    const __m256i q2 = _mm256_srli_epi16(_mm256_mulhi_epu16(_mm256_sub_epi16(nh, F.e), F.m), 1);
    q = _mm256_add_epi16(q2, _mm256_and_si256(_mm256_sub_epi16(q, q2), q2));
  }
  return _mm256_min_epi16(_mm256_max_epi16(_mm256_sub_epi16(q, k), lo), hi);
}

// The three-tap sums (columns 2j - 1, 2j, 2j + 1) of one input row for 16
// outputs: `at` holds columns 2c.., `before` columns 2c - 1.. (the low byte
// of each word is column 2j - 1).
template <class T>
inline __m256i row_sums(__m256i at, __m256i before) {
  if constexpr (std::is_signed_v<T>)
    return _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), at),
                            _mm256_srai_epi16(_mm256_slli_epi16(before, 8), 8));
  else
    return _mm256_add_epi16(_mm256_maddubs_epi16(at, _mm256_set1_epi8(1)),
                            _mm256_and_si256(before, _mm256_set1_epi16(0xff)));
}

// at's bytes one place later, a zero first (column -1: padding).
inline __m256i shifted_in_zero(__m256i at) {
  return _mm256_alignr_epi8(at, _mm256_permute2x128_si256(at, at, 0x08), 15);
}

// The strip of outputs [c, c + 16) of a plane, every output row.
template <class T, bool Even, bool Checked>
void strip(const K3s2Plan& K, const QAvgPlan& P, const T* x, int64_t xp, T* y, int64_t yp,
           int64_t c) {
  const int64_t L = K.blocks * 32;
  const T* xs = x + 2 * c;
  auto sums = [&](const T* row) {
    const __m256i at = load(row);
    return row_sums<T>(at, c == 0 ? shifted_in_zero(at) : load(row - 1));
  };
  const __m256i k = _mm256_set1_epi16(static_cast<int16_t>(K.K));
  const __m256i lo = _mm256_set1_epi16(static_cast<int16_t>(std::is_signed_v<T> ? -128 : 0));
  const __m256i hi = _mm256_set1_epi16(static_cast<int16_t>(std::is_signed_v<T> ? 127 : 255));
  const uint16_t* f0 = Checked ? nullptr : K.fields.data() + c;  // row class 0
  const Fields f1 = Checked ? Fields{} : fields_at(f0 + 3 * L, L);
  const CheckedRegs FR = checked_regs(P);
  __m256i carry = _mm256_setzero_si256();  // row 2i - 1
  for (int64_t i = 0; i < K.OH; ++i) {
    const T* a = xs + 2 * i * xp;
    const __m256i b = sums(a + xp);
    const __m256i s = _mm256_add_epi16(_mm256_add_epi16(carry, sums(a)), b);
    carry = b;
    T* yr = y + i * yp + c;
    int redo = 0;
    __m256i q;
    if constexpr (Checked) {
      const size_t o = static_cast<size_t>((i == 0 ? 0 : L) + c);
      const int32_t* off = K.offsets.data() + o;
      const float* mul = K.multipliers.data() + o;
      q = checked16(s, load(off), load(off + 8), _mm256_loadu_ps(mul), _mm256_loadu_ps(mul + 8), FR,
                    &redo);
    } else {
      q = codes16<Even>(s, i == 0 ? fields_at(f0, L) : f1, k, lo, hi);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(yr), _mm256_castsi256_si128(narrow<T>(q, q)));
    if (Checked && redo != 0) redo_outputs(P, x, xp, i, c, redo, yr);
  }
}

template <class T, bool Even, bool Checked>
void run(const QAvgPoolProblem& p, const K3s2Plan& K) {
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  const int64_t C = p.x.dim(1), OW = K.OW;
  for_ranges(p.x.dim(0) * C, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const T* xs = x + s / C * p.x.stride(0) + s % C * p.x.stride(1);
      T* ys = y + s / C * p.y.stride(0) + s % C * p.y.stride(1);
      for (int64_t c = 0; c < OW; c += 16)
        strip<T, Even, Checked>(K, p.plan, xs, p.x.stride(2), ys, p.y.stride(2),
                                std::min(c, OW - 16));
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

void x8_qavgpool_k3s2_nchw_avx2(const QAvgPoolProblem& p) {
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
