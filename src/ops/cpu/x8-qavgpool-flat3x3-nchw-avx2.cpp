// x8_qavgpool_flat3x3_nchw_avx2: the flat k3s1p1 stream of
// x8-qavgpool-flat3x3-nchw-avx512 on AVX2 hosts, even W only (the plan's
// row-tap weights; qavgpool-flat3x3.hpp). AVX2 has no two-source word
// permute and no mask registers, so per 64-position chunk (two 32-byte halves)
// the row sums of the rows above and below are formed again from loads W
// positions away (the same weights: same columns) and cleared by the plan's
// row words on a plane's first and last row, instead of being moved over from
// the neighbouring chunks. Chunks whose reads would leave the tensor read a
// zero-padded copy. Integer sums are exact in any order, so every output is
// the reference's.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-flat3x3.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

#include "ops/cpu/x8-qavgpool-lanes16x2-avx2.inc"
#include "ops/cpu/x8-qavgpool-rows16-codes.inc"

inline __m256i ld(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// Sum over word lane i of the byte pair (2i, 2i+1) of x times w's:
// vpmaddubsw takes its unsigned operand first.
template <class T>
inline __m256i pairs(__m256i x, __m256i w) {
  if constexpr (std::is_signed_v<T>) return _mm256_maddubs_epi16(w, x);
  return _mm256_maddubs_epi16(x, w);
}

// The row sums of 32 positions at q (even and odd lanes): each lane's byte
// pair (2i, 2i+1), plus the even lane's left tap (weights wl: 0 where it is
// off the row) or the odd lane's right tap (wo). Even W: an even position's
// right tap and an odd one's left tap are always on its row.
template <class T>
inline void row(const uint8_t* q, __m256i wl, __m256i wo, __m256i& e, __m256i& o) {
  const __m256i s = pairs<T>(ld(q), _mm256_set1_epi16(0x0101));
  e = _mm256_add_epi16(s, pairs<T>(ld(q - 1), wl));
  o = _mm256_add_epi16(s, pairs<T>(ld(q + 1), wo));
}

// The window sums of the 32 positions at q (half h of chunk pattern pc).
template <class T>
inline void half(const Flat3x3Plan& F, const uint8_t* q, int64_t pc, int h, __m256i& e,
                 __m256i& o) {
  const uint8_t* w = F.weights() + 128 * pc + 32 * h;
  const uint16_t* rw = F.row_words() + 64 * pc + 16 * h;
  // The plan's weights of the load at -1 are (left tap, 1) per pair: keep the first.
  const __m256i wm = _mm256_and_si256(ld(w), _mm256_set1_epi16(0x00ff)), wo = ld(w + 64);
  const __m256i up = ld(rw), down = ld(rw + 32);
  __m256i ea, oa, eb, ob;
  row<T>(q, wm, wo, e, o);
  row<T>(q - F.W, wm, wo, ea, oa);
  row<T>(q + F.W, wm, wo, eb, ob);
  e = _mm256_add_epi16(e, _mm256_add_epi16(_mm256_and_si256(ea, up), _mm256_and_si256(eb, down)));
  o = _mm256_add_epi16(o, _mm256_add_epi16(_mm256_and_si256(oa, up), _mm256_and_si256(ob, down)));
}

// Codes (ce & 0xff) | co << 8 of one half: the codes fit the dtype.
inline __m256i interleave(__m256i ce, __m256i co) {
  return _mm256_or_si256(_mm256_and_si256(ce, _mm256_set1_epi16(0x00ff)), _mm256_slli_epi16(co, 8));
}

template <bool Even, bool Clamp, class T>
void flat_chunks(const Flat3x3Plan& F, const QAvgPlan& P, const T* xt, T* yt, int64_t begin,
                 int64_t end) {
  const auto* x = reinterpret_cast<const uint8_t*>(xt);
  auto* y = reinterpret_cast<uint8_t*>(yt);
  const int64_t W = F.W, positions = F.positions, chunks = (positions + 63) / 64;
  const __m128i sh = _mm_cvtsi32_si128(F.sh);
  const Vec K = splat16(F.K), lo = splat16(P.lo), hi = splat16(P.hi);
  const __m256i K8 = _mm256_set1_epi8(static_cast<char>(F.K));
  // A chunk's reads reach W + 1 positions before and after it (W <= 16).
  alignas(32) uint8_t stage[64 + 2 * 17];
  alignas(32) uint8_t out[64];
  int64_t pc = begin % F.cpp;
  for (int64_t c = begin; c < end; ++c, pc = pc + 1 == F.cpp ? 0 : pc + 1) {
    const int64_t at = 64 * c, from = at - W - 1, to = at + 64 + W + 1;
    const uint8_t* base = x + at;
    if (from < 0 || to > positions) {  // a zero-padded copy of [from, to)
      std::memset(stage, 0, sizeof stage);
      const int64_t a = std::max<int64_t>(0, from), b = std::min(positions, to);
      std::memcpy(stage + (a - from), x + a, static_cast<size_t>(b - a));
      base = stage + W + 1;
    }
    Vec e, o;
    half<T>(F, base, pc, 0, e.a, o.a);
    half<T>(F, base + 32, pc, 1, e.b, o.b);
    const uint16_t* f = F.fields() + 192 * pc;
    __m256i b0, b1;
    if constexpr (Clamp) {
      const Vec ce = rows16_codes<Even>(e, f, 32, sh, K, lo, hi);
      const Vec co = rows16_codes<Even>(o, f + 96, 32, sh, K, lo, hi);
      b0 = interleave(ce.a, co.a), b1 = interleave(ce.b, co.b);
    } else {  // every q - K is a code: the low bytes of q, less K's
      const Vec qe = rows16_quotients<Even>(e, f, 32, sh);
      const Vec qo = rows16_quotients<Even>(o, f + 96, 32, sh);
      b0 = _mm256_sub_epi8(interleave(qe.a, qo.a), K8);
      b1 = _mm256_sub_epi8(interleave(qe.b, qo.b), K8);
    }
    uint8_t* yc = c + 1 < chunks ? y + at : out;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(yc), b0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(yc + 32), b1);
    if (yc == out) std::memcpy(y + at, out, static_cast<size_t>(positions - at));
  }
}

template <class T>
void flat3x3(const QAvgPoolProblem& p) {
  const char* why = nullptr;
  const std::shared_ptr<const Flat3x3Plan> plan = flat3x3_plan(p, &why);
  if (!plan || plan->W % 2 != 0) return;  // unreachable: the list's declines took p
  const Flat3x3Plan& F = *plan;
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  using Run = void (*)(const Flat3x3Plan&, const QAvgPlan&, const T*, T*, int64_t, int64_t);
  static constexpr Run runs[4] = {flat_chunks<false, false, T>, flat_chunks<false, true, T>,
                                  flat_chunks<true, false, T>, flat_chunks<true, true, T>};
  const Run run = runs[2 * F.any_even + !F.clamp_free];
  // 64 chunks (4 KiB of input) per piece of a thread's work.
  parallel_ranges((F.positions + 63) / 64, 64,
                  [&](int64_t begin, int64_t end) { run(F, p.plan, x, y, begin, end); });
}

}  // namespace

void x8_qavgpool_flat3x3_nchw_avx2(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    flat3x3<int8_t>(p);
  else
    flat3x3<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
