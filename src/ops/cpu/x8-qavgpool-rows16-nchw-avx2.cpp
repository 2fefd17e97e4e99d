// x8_qavgpool_rows16_nchw_avx2: the lane shim of x8-qavgpool-rows16-nchw.inc
// for AVX2: two output rows per step, one per register (16 words). Each
// window row on the input is one 16-byte load, widened (a row whose 16 bytes
// would end past the tensor is copied first: AVX2 has no byte masks) and, with
// stride_h 1, shared by both output rows; lanes >= W are cleared once per
// output row; the horizontal taps are lane shifts (alignr across the two
// 128-bit halves). Calibrated scales take the checked float tail of the
// k2s2/k3s2 kernels (x8-qavgpool-avx2-checked.inc) on the same sums.
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

#include "ops/cpu/x8-qavgpool-avx2-checked.inc"
#include "ops/cpu/x8-store-codes16-avx2.inc"

// Output rows oh (a) and oh + 1 (b).
#include "ops/cpu/x8-qavgpool-lanes16x2-avx2.inc"
constexpr int kRows = 2;
constexpr bool kOneLoad = false;
constexpr int64_t kLanes = 32;
constexpr bool kCheckedTail = true;

struct Ctx {
  int64_t KW = 1, KH = 1, pl = 0, H = 0, W = 0, OH = 0, OW = 0, sH = 0, ysH = 0;
  int64_t sh_rows = 1, top = 0;    // stride and first window row of output row 0
  const uint8_t* x_end = nullptr;  // one past the last byte of x
  bool any_even = false;
  __m128i sh;
  Vec K, lo, hi;
  __m256i wmask;
  const QAvgPlan* plan = nullptr;
  CheckedRegs fr;

  Ctx(const QAvgPoolProblem& p, const Rows16Plan& R) : plan(&p.plan), fr(checked_regs(p.plan)) {
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
    K = splat16(R.K);
    lo = splat16(P.lo);
    hi = splat16(P.hi);
    alignas(32) int16_t m[16];
    for (int64_t j = 0; j < 16; ++j) m[j] = j < W ? -1 : 0;
    wmask = _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
  }
};

inline __m256i load8(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Lane j + t of v in lane j (0 outside the 16 lanes), |t| <= 7.
template <int t>
inline __m256i shift_words(__m256i v) {
  if constexpr (t > 0) {
    return _mm256_alignr_epi8(_mm256_permute2x128_si256(v, v, 0x81), v, 2 * t);
  } else if constexpr (t < 0) {
    return _mm256_alignr_epi8(v, _mm256_permute2x128_si256(v, v, 0x08), 16 + 2 * t);
  }
  return v;
}

inline __m256i shift_any(__m256i v, int64_t t) {
  switch (t) {
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

// Taps dw in [DW, KW) of the horizontal sum, shifts fixed at compile time.
template <int KW, int PL, int DW = 0>
inline __m256i hsum(__m256i v) {
  const __m256i t = shift_words<DW - PL>(v);
  if constexpr (DW + 1 < KW) return _mm256_add_epi16(t, hsum<KW, PL, DW + 1>(v));
  return t;
}

// The loop constants in locals (y's byte stores may alias anything the Ctx
// points to); KW, PL > 0: the shifts fixed at compile time.
template <int KH, int KW, int PL>
struct Taps {
  int64_t kh, kw, pl, H, W, OH, OW, sH, ysH, sh_rows, top;
  const uint8_t* x_end;
  __m256i wmask;
  const QAvgPlan* plan;
  CheckedRegs fr;

  explicit Taps(const Ctx& c)
      : kh(KH > 0 ? KH : c.KH),
        kw(KW > 0 ? KW : c.KW),
        pl(KW > 0 ? PL : c.pl),
        H(c.H),
        W(c.W),
        OH(c.OH),
        OW(c.OW),
        sH(c.sH),
        ysH(c.ysH),
        sh_rows(c.sh_rows),
        top(c.top),
        x_end(c.x_end),
        wmask(c.wmask),
        plan(c.plan),
        fr(c.fr) {}

  // The 16 bytes from p, or the row's W bytes then zeros where 16 bytes
  // would read past the tensor.
  __m128i load_row(const uint8_t* p) const {
    if (p + 16 <= x_end) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    alignas(16) uint8_t buf[16] = {};
    std::memcpy(buf, p, static_cast<size_t>(W));
    return _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
  }

  // Window row r of the plane, widened (0 off the input).
  template <class T>
  __m256i row(const T* xp, int64_t r) const {
    if (r < 0 || r >= H) return _mm256_setzero_si256();
    const __m128i b = load_row(reinterpret_cast<const uint8_t*>(xp + r * sH));
    return std::is_signed_v<T> ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
  }

  // Group g: output rows 2g (a) and 2g + 1 (b); with stride_h 1 they share
  // KH - 1 window rows.
  template <class T>
  Vec vertical(const T* xp, int64_t g) const {
    const int64_t r0 = 2 * g * sh_rows + top;
    Vec v{_mm256_setzero_si256(), _mm256_setzero_si256()};
    if (sh_rows == 1) {
      for (int64_t i = 0; i <= kh; ++i) {
        const __m256i r = row(xp, r0 + i);
        if (i < kh) v.a = _mm256_add_epi16(v.a, r);
        if (i > 0) v.b = _mm256_add_epi16(v.b, r);
      }
    } else {
      for (int64_t i = 0; i < kh; ++i) {
        v.a = _mm256_add_epi16(v.a, row(xp, r0 + i));
        v.b = _mm256_add_epi16(v.b, row(xp, r0 + sh_rows + i));
      }
    }
    return Vec{_mm256_and_si256(v.a, wmask), _mm256_and_si256(v.b, wmask)};
  }

  __m256i horizontal1(__m256i v) const {
    if constexpr (KW > 0) return hsum<KW, PL>(v);
    __m256i s = shift_any(v, -pl);
    for (int64_t dw = 1; dw < kw; ++dw) s = _mm256_add_epi16(s, shift_any(v, dw - pl));
    return s;
  }

  Vec horizontal(Vec v) const { return Vec{horizontal1(v.a), horizontal1(v.b)}; }

  template <class T>
  void store(Vec codes, T* yp, int64_t oh) const {
    store1(codes.a, yp, oh);
    if (oh + 1 < OH) store1(codes.b, yp, oh + 1);
  }

  // The checked tail's codes of the sums s of output rows oh (a) and oh + 1
  // (b), with the lanes' offsets and multipliers (32 each); the outputs it
  // cannot decide are redone by the reference's chain after the store.
  template <class T>
  void store_checked(Vec s, const int32_t* off, const float* m, const T* xp, T* yp,
                     int64_t oh) const {
    int redo_a = 0, redo_b = 0;
    const Vec codes{checked16(s.a, load8(off), load8(off + 8), _mm256_loadu_ps(m),
                              _mm256_loadu_ps(m + 8), fr, &redo_a),
                    checked16(s.b, load8(off + 16), load8(off + 24), _mm256_loadu_ps(m + 16),
                              _mm256_loadu_ps(m + 24), fr, &redo_b)};
    store<T>(codes, yp, oh);
    const int stored = (1 << OW) - 1;  // lanes >= OW are not outputs
    if ((redo_a &= stored) != 0) redo_outputs(*plan, xp, sH, oh, 0, redo_a, yp + oh * ysH);
    if ((redo_b &= stored) != 0 && oh + 1 < OH)
      redo_outputs(*plan, xp, sH, oh + 1, 0, redo_b, yp + (oh + 1) * ysH);
  }

  // Stores the OW codes: one 16-byte store when its excess lands on later
  // rows of the same plane (rows contiguous), else overlapping copies.
  template <class T>
  void store1(__m256i codes, T* yp, int64_t oh) const {
    const __m128i l = _mm256_castsi256_si128(codes), h = _mm256_extracti128_si256(codes, 1);
    const __m128i b = std::is_signed_v<T> ? _mm_packs_epi16(l, h) : _mm_packus_epi16(l, h);
    auto* out = reinterpret_cast<uint8_t*>(yp + oh * ysH);
    const int64_t n = OW;
    if (n == 16 || (ysH == n && oh * n + 16 <= OH * n)) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), b);
      return;
    }
    store_codes16(out, b, n);
  }
};

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
