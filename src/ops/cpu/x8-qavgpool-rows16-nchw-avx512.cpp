// x8_qavgpool_rows16_nchw_avx512: the lane shim of x8-qavgpool-rows16-nchw.inc
// for AVX-512 (BW): two output rows per register (16 words each). A group's
// window rows come from one masked 64-byte load (bytes of rows off the input
// stay 0, nothing past the tensor is touched), widened, and each tap row of
// both output rows is one two-source word permute; the horizontal taps are
// one-source word permutes with zero masks.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-rows16.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

using Vec = __m512i;
constexpr int kRows = 2;
constexpr bool kOneLoad = true;
constexpr bool kCheckedTail = false;  // calibrated scales: x8-qavgpool-u16-nchw-avx512
constexpr int64_t kLanes = 32;

#include "ops/cpu/x8-qavgpool-lanes16-avx512.inc"

struct Ctx {
  int64_t KW = 1, KH = 1, OH = 0, sH = 0, ysH = 0;
  int64_t pl = 0;  // the tap that is the output's own column
  bool any_even = false;
  __m128i sh;
  Vec K, lo, hi;
  __mmask32 wmask = 0;              // lanes j < W of both rows
  __mmask32 ymask = 0;              // stored bytes j < OW of the first row
  std::vector<uint64_t> load_mask;  // per group: the bytes of its rows on the input
  std::vector<int64_t> load_row;    // per group: the row its load starts at
  std::vector<uint16_t> vidx;       // per tap row: word index into the widened load
  std::vector<uint16_t> hidx;       // per tap column: lane j + dw - pad_left
  std::vector<__mmask32> hmask;     // per tap column: lanes whose tap is in [0, 16)

  Ctx(const QAvgPoolProblem& p, const Rows16Plan& R) {
    const QAvgPlan& P = p.plan;
    KW = P.w.kernel;
    pl = -P.w.start;
    KH = P.h.kernel;
    OH = P.h.out;
    sH = p.x.stride(2);
    ysH = p.y.stride(2);
    any_even = R.any_even;
    sh = _mm_cvtsi32_si128(R.sh);
    K = _mm512_set1_epi16(static_cast<int16_t>(R.K));
    lo = _mm512_set1_epi16(static_cast<int16_t>(P.lo));
    hi = _mm512_set1_epi16(static_cast<int16_t>(P.hi));
    const uint32_t w = (1u << P.W) - 1;
    wmask = w | w << 16;
    ymask = (1u << P.w.out) - 1;
    const int64_t s = P.h.stride, groups = static_cast<int64_t>(R.group_class.size());
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t r0 = g * kRows * s + P.h.start;
      uint64_t m = 0;
      for (int64_t i = 0; i < s + KH; ++i)
        if (r0 + i >= 0 && r0 + i < P.H && i * sH < 64)
          m |= (P.W + i * sH >= 64 ? ~uint64_t{0} : (uint64_t{1} << (P.W + i * sH)) - 1) &
               ~((uint64_t{1} << (i * sH)) - 1);
      load_mask.push_back(m);
      load_row.push_back(r0);
    }
    for (int64_t dh = 0; dh < KH; ++dh)
      for (int64_t x = 0; x < kLanes; ++x)
        vidx.push_back(
            static_cast<uint16_t>(std::min<int64_t>(63, (x / 16 * s + dh) * sH + x % 16)));
    for (int64_t dw = 0; dw < KW; ++dw) {
      const int64_t t = dw + P.w.start;
      __mmask32 m = 0;
      for (int64_t x = 0; x < kLanes; ++x) {
        const int64_t j = x % 16 + t;
        hidx.push_back(static_cast<uint16_t>(j >= 0 && j < 16 ? x / 16 * 16 + j : 0));
        if (j >= 0 && j < 16) m |= __mmask32{1} << x;
      }
      hmask.push_back(m);
    }
  }
};

template <class T>
inline Vec widen(__m256i b) {
  if constexpr (std::is_signed_v<T>) return _mm512_cvtepi8_epi16(b);
  return _mm512_cvtepu8_epi16(b);
}

// The loop constants in locals (y's byte stores may alias anything the Ctx
// points to); KH, KW, PL > 0: the tap index vectors in registers.
template <int KH, int KW, int PL>
struct Taps {
  const Ctx& c;
  int64_t kh, kw, pl, sH, ysH, OH;
  __mmask32 wmask, ymask;
  const uint64_t* load_mask;
  const int64_t* load_row;
  Vec vi[KH > 0 ? KH : 1], hx[KW > 0 ? KW : 1];
  __mmask32 hm[KW > 0 ? KW : 1];

  explicit Taps(const Ctx& ctx)
      : c(ctx),
        kh(KH > 0 ? KH : ctx.KH),
        kw(KW > 0 ? KW : ctx.KW),
        pl(KW > 0 ? PL : ctx.pl),
        sH(ctx.sH),
        ysH(ctx.ysH),
        OH(ctx.OH),
        wmask(ctx.wmask),
        ymask(ctx.ymask),
        load_mask(ctx.load_mask.data()),
        load_row(ctx.load_row.data()) {
    for (int i = 0; i < KH; ++i) vi[i] = load16(ctx.vidx.data() + i * kLanes);
    for (int i = 0; i < KW; ++i) {
      hx[i] = load16(ctx.hidx.data() + i * kLanes);
      hm[i] = ctx.hmask[static_cast<size_t>(i)];
    }
  }

  Vec vidx(int64_t dh) const {
    if constexpr (KH > 0) return vi[dh];
    return load16(c.vidx.data() + dh * kLanes);
  }

  template <class T>
  Vec vertical(const T* xp, int64_t g) const {
    const __m512i b = _mm512_maskz_loadu_epi8(load_mask[g], xp + load_row[g] * sH);
    const Vec lo = widen<T>(_mm512_castsi512_si256(b));
    const Vec hi = widen<T>(_mm512_extracti64x4_epi64(b, 1));
    Vec v = _mm512_maskz_permutex2var_epi16(wmask, lo, vidx(0), hi);
    for (int64_t dh = 1; dh < kh; ++dh)
      v = add16(v, _mm512_maskz_permutex2var_epi16(wmask, lo, vidx(dh), hi));
    return v;
  }

  Vec tap(Vec v, int64_t dw) const {
    if (dw == pl) return v;
    if constexpr (KW > 0) return _mm512_maskz_permutexvar_epi16(hm[dw], hx[dw], v);
    return _mm512_maskz_permutexvar_epi16(c.hmask[static_cast<size_t>(dw)],
                                          load16(c.hidx.data() + dw * kLanes), v);
  }

  Vec horizontal(Vec v) const {
    Vec s = tap(v, 0);
    for (int64_t dw = 1; dw < kw; ++dw) s = add16(s, tap(v, dw));
    return s;
  }

  template <class T>
  void store(Vec codes, T* yp, int64_t oh) const {
    const __m256i b = _mm512_cvtepi16_epi8(codes);  // codes fit the dtype: the low bytes
    _mm256_mask_storeu_epi8(yp + oh * ysH, ymask, b);
    if (oh + 1 < OH) _mm256_mask_storeu_epi8(yp + (oh + 1) * ysH - 16, ymask << 16, b);
  }
};

#include "ops/cpu/x8-qavgpool-rows16-nchw.inc"

}  // namespace

void x8_qavgpool_rows16_nchw_avx512(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    rows16_nchw<int8_t>(p);
  else
    rows16_nchw<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
