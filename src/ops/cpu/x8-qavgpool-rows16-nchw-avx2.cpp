// x8_qavgpool_rows16_nchw_avx2: the lane shim of x8-qavgpool-rows16-nchw.inc
// for AVX2: one output row per register (16 words). Each window row on the
// input is one 16-byte load, widened (a row whose 16 bytes would end past the
// tensor is copied first: AVX2 has no byte masks), its lanes >= W cleared
// once per output row; the horizontal taps are lane shifts (alignr across
// the two 128-bit halves).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-rows16.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

using Vec = __m256i;
constexpr int kRows = 1;
constexpr int64_t kLanes = 16;

inline Vec add16(Vec a, Vec b) {
  return _mm256_add_epi16(a, b);
}
inline Vec sub16(Vec a, Vec b) {
  return _mm256_sub_epi16(a, b);
}
inline Vec and16(Vec a, Vec b) {
  return _mm256_and_si256(a, b);
}
inline Vec mulhi16(Vec a, Vec b) {
  return _mm256_mulhi_epu16(a, b);
}
inline Vec srl16(Vec a, __m128i n) {
  return _mm256_srl_epi16(a, n);
}
inline Vec min16(Vec a, Vec b) {
  return _mm256_min_epi16(a, b);
}
inline Vec max16(Vec a, Vec b) {
  return _mm256_max_epi16(a, b);
}
inline Vec load16(const uint16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const Vec*>(p));
}

struct Ctx {
  int64_t KW = 1, KH = 1, pl = 0, H = 0, W = 0, OH = 0, OW = 0, sH = 0, ysH = 0;
  int64_t sh_rows = 1, top = 0;    // stride and first window row of output row 0
  const uint8_t* x_end = nullptr;  // one past the last byte of x
  bool any_even = false;
  __m128i sh;
  Vec K, lo, hi, wmask;

  Ctx(const QAvgPoolProblem& p, const Rows16Plan& R) {
    const QAvgPlan& P = p.plan;
    KW = P.w.kernel;
    KH = P.h.kernel;
    pl = -P.w.start;
    H = P.H;
    W = P.W;
    OH = P.h.out;
    OW = P.w.out;
    sH = p.x.stride(2);
    ysH = p.y.stride(2);
    sh_rows = P.h.stride;
    top = P.h.start;
    int64_t end = 1;
    for (int d = 0; d < 4; ++d) end += (p.x.dim(d) - 1) * p.x.stride(d);
    x_end = static_cast<const uint8_t*>(p.x.raw()) + end;
    any_even = R.any_even;
    sh = _mm_cvtsi32_si128(R.sh);
    K = _mm256_set1_epi16(static_cast<int16_t>(R.K));
    lo = _mm256_set1_epi16(static_cast<int16_t>(P.lo));
    hi = _mm256_set1_epi16(static_cast<int16_t>(P.hi));
    alignas(32) int16_t m[16];
    for (int64_t j = 0; j < 16; ++j) m[j] = j < W ? -1 : 0;
    wmask = _mm256_load_si256(reinterpret_cast<const Vec*>(m));
  }
};

// The 16 bytes from p, or the row's W bytes then zeros where 16 bytes would
// read past the tensor.
inline __m128i load_row(const Ctx& c, const uint8_t* p) {
  if (p + 16 <= c.x_end) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  alignas(16) uint8_t buf[16] = {};
  std::memcpy(buf, p, static_cast<size_t>(c.W));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
}

template <class T>
inline Vec vertical(const Ctx& c, const T* xp, int64_t oh) {
  const int64_t r0 = oh * c.sh_rows + c.top;
  const int64_t a = std::max<int64_t>(0, -r0), b = std::min<int64_t>(c.KH, c.H - r0);
  Vec v = _mm256_setzero_si256();
  for (int64_t dh = a; dh < b; ++dh) {
    const __m128i row = load_row(c, reinterpret_cast<const uint8_t*>(xp + (r0 + dh) * c.sH));
    v = add16(v, std::is_signed_v<T> ? _mm256_cvtepi8_epi16(row) : _mm256_cvtepu8_epi16(row));
  }
  return and16(v, c.wmask);
}

// Lane j + t of v in lane j (0 outside the 16 lanes), |t| <= 7.
template <int t>
inline Vec shift_words(Vec v) {
  if constexpr (t > 0) {
    return _mm256_alignr_epi8(_mm256_permute2x128_si256(v, v, 0x81), v, 2 * t);
  } else if constexpr (t < 0) {
    return _mm256_alignr_epi8(v, _mm256_permute2x128_si256(v, v, 0x08), 16 + 2 * t);
  }
  return v;
}

inline Vec shift(const Ctx& c, Vec v, int64_t dw) {
  switch (dw - c.pl) {
#define NPUKIT_SHIFT_CASE(t) \
  case t:                    \
    return shift_words<t>(v);
    NPUKIT_SHIFT_CASE(-7)
    NPUKIT_SHIFT_CASE(-6)
    NPUKIT_SHIFT_CASE(-5)
    NPUKIT_SHIFT_CASE(-4)
    NPUKIT_SHIFT_CASE(-3)
    NPUKIT_SHIFT_CASE(-2)
    NPUKIT_SHIFT_CASE(-1)
    NPUKIT_SHIFT_CASE(1)
    NPUKIT_SHIFT_CASE(2)
    NPUKIT_SHIFT_CASE(3)
    NPUKIT_SHIFT_CASE(4)
    NPUKIT_SHIFT_CASE(5)
    NPUKIT_SHIFT_CASE(6)
    NPUKIT_SHIFT_CASE(7)
#undef NPUKIT_SHIFT_CASE
    default:
      return v;  // t == 0 (rows16_build keeps |t| <= 7)
  }
}

// Stores the first n (<= 16) codes: one 16-byte store when its excess lands
// on later rows of the same plane (rows contiguous), else overlapping copies.
template <class T>
inline void store(const Ctx& c, Vec codes, T* yp, int64_t oh) {
  const __m128i l = _mm256_castsi256_si128(codes), h = _mm256_extracti128_si256(codes, 1);
  const __m128i b = std::is_signed_v<T> ? _mm_packs_epi16(l, h) : _mm_packus_epi16(l, h);
  auto* out = reinterpret_cast<uint8_t*>(yp + oh * c.ysH);
  const int64_t n = c.OW;
  if (n == 16 || (c.ysH == n && oh * n + 16 <= c.OH * n)) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), b);
    return;
  }
  alignas(16) uint8_t buf[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf), b);
  const auto u = static_cast<size_t>(n);
  if (u >= 8) {
    std::memcpy(out, buf, 8);
    std::memcpy(out + u - 8, buf + u - 8, 8);
  } else if (u >= 4) {
    std::memcpy(out, buf, 4);
    std::memcpy(out + u - 4, buf + u - 4, 4);
  } else {
    for (size_t i = 0; i < u; ++i) out[i] = buf[i];
  }
}

#include "ops/cpu/x8-qavgpool-rows16-nchw.inc"

}  // namespace

void x8_qavgpool_rows16_nchw_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    rows16_nchw<int8_t>(p);
  else
    rows16_nchw<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
