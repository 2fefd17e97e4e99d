// x8_qavgpool_flat3x3_nchw_avx512: k3s1p1 over a dense NCHW tensor as one
// flat stream of 64-position chunks split by parity (qavgpool-flat3x3.hpp).
// Per chunk: the row sums of the even and the odd positions (32 words each)
// from three masked 64-byte loads at offsets -1, 0, +1 (the masks leave out
// the taps beyond a row's ends) and four vpmaddubsw of byte pairs; then the window sums as
// those row sums plus the ones W positions before and after (two-source word
// permutes of the previous, current and next chunk's sums of the parity W
// positions away, zeroed for lanes on the plane's first or last row); then
// rows16's integer final step per parity and the codes stored as E | O << 8.
// Integer sums are exact in any order, so every output is the reference's.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool-flat3x3.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512-begin.inc"

namespace npukit::cpu {
namespace {

using Vec = __m512i;
#include "ops/cpu/x8-qavgpool-lanes16-avx512.inc"
#include "ops/cpu/x8-qavgpool-rows16-codes.inc"

// Sum over word lane i of the byte pair (2i, 2i+1) of x times w's:
// vpmaddubsw takes its unsigned operand first.
template <class T>
inline Vec pairs(Vec x, Vec w) {
  if constexpr (std::is_signed_v<T>) return _mm512_maddubs_epi16(w, x);
  return _mm512_maddubs_epi16(x, w);
}

// The permute indices of the vertical neighbours of one parity: lane i's
// upper neighbour is lane i + up of the stream of the parity W positions away
// (up < 0: from the previous and current chunk), the lower one lane i + down
// (from the current and next chunk).
Vec lane_index(int64_t first) {
  alignas(64) uint16_t v[32];
  for (int i = 0; i < 32; ++i) v[i] = static_cast<uint16_t>(first + i);
  return _mm512_load_si512(v);
}

// Row sums of one chunk, both parities.
struct Rows {
  Vec e, o;
};

// The stream's constants; the kernel copies them into locals (y's byte
// stores may alias anything it reaches through a pointer).
struct Stream {
  const uint64_t* byte_masks;
  const uint8_t* weights;
  const uint32_t* lane_masks;
  const uint16_t* fields;
  int64_t cpp, chunks, positions;
  Vec e_up, e_down, o_up, o_down;  // permute indices (lane_index)
  Vec ones, low, high;             // pair weights (1, 1), (1, 0), (0, 1)

  explicit Stream(const Flat3x3Plan& F)
      : byte_masks(F.byte_masks.data()),
        weights(F.weights()),
        lane_masks(F.lane_masks.data()),
        fields(F.fields()),
        cpp(F.cpp),
        chunks((F.positions + 63) / 64),
        positions(F.positions) {
    // Position 2i + p - W has parity q = (p + W) % 2 and is lane i + (p - W - q) / 2
    // of parity q; 2i + p + W is lane i + (p + W - q) / 2.
    const int64_t W = F.W, qe = W % 2, qo = (1 + W) % 2;
    e_up = lane_index(32 + (0 - W - qe) / 2);
    e_down = lane_index((0 + W - qe) / 2);
    o_up = lane_index(32 + (1 - W - qo) / 2);
    o_down = lane_index((1 + W - qo) / 2);
    ones = _mm512_set1_epi16(0x0101);
    low = _mm512_set1_epi16(0x0001);
    high = _mm512_set1_epi16(0x0100);
  }

  // Bytes k of a 64-byte read at stream position `at` that lie in the tensor.
  __mmask64 inside(int64_t at) const {
    const int64_t a = std::max<int64_t>(0, -at), b = std::min<int64_t>(64, positions - at);
    if (b <= a) return 0;
    const __mmask64 upto = b == 64 ? ~__mmask64{0} : (__mmask64{1} << b) - 1;
    return upto & ~((__mmask64{1} << a) - 1);
  }

  // The row sums of chunk c (pattern pc). Interior: every byte from x + 64c
  // - 1 to x + 64c + 64 is in the tensor; else the loads also leave out the
  // bytes outside it (lanes past the tensor are never used).
  // W even: rows start on even positions, so every odd position has a left
  // neighbour and every even one a right one (Flat3x3Plan::weights).
  template <bool Interior, bool OddW, class T>
  Rows row_sums(const T* x, int64_t c, int64_t pc) const {
    const T* p = x + 64 * c;
    if constexpr (!OddW) {  // the weights leave out the taps beyond a row's ends
      Vec m, z, r;
      if constexpr (Interior) {
        m = _mm512_loadu_si512(p - 1), z = _mm512_loadu_si512(p), r = _mm512_loadu_si512(p + 1);
      } else {
        if (c < 0 || c >= chunks) return {_mm512_setzero_si512(), _mm512_setzero_si512()};
        m = _mm512_maskz_loadu_epi8(inside(64 * c - 1), p - 1);
        z = _mm512_maskz_loadu_epi8(inside(64 * c), p);
        r = _mm512_maskz_loadu_epi8(inside(64 * c + 1), p + 1);
      }
      const uint8_t* w = weights + 128 * pc;
      return {add16(pairs<T>(m, _mm512_load_si512(w)), pairs<T>(r, low)),
              add16(pairs<T>(z, ones), pairs<T>(r, _mm512_load_si512(w + 64)))};
    }
    const uint64_t* b = byte_masks + 3 * pc;
    __mmask64 km = b[0], kz = b[1], kp = b[2];
    if constexpr (!Interior) {
      if (c < 0 || c >= chunks) return {_mm512_setzero_si512(), _mm512_setzero_si512()};
      km &= inside(64 * c - 1), kz &= inside(64 * c), kp &= inside(64 * c + 1);
    }
    const Vec m = _mm512_maskz_loadu_epi8(km, p - 1), z = _mm512_maskz_loadu_epi8(kz, p),
              r = _mm512_maskz_loadu_epi8(kp, p + 1);
    return {add16(pairs<T>(m, ones), pairs<T>(r, low)),
            add16(pairs<T>(z, ones), pairs<T>(r, high))};
  }
};

// Window sums of one parity: the chunk's row sums plus the masked vertical
// neighbours from the parity W positions away (prev, cur, next).
inline Vec window(Vec own, __mmask32 up, __mmask32 down, Vec prev, Vec cur, Vec next, Vec iu,
                  Vec id) {
  const Vec above = _mm512_maskz_permutex2var_epi16(up, prev, iu, cur);
  const Vec below = _mm512_maskz_permutex2var_epi16(down, cur, id, next);
  return add16(add16(above, own), below);
}

template <bool Even, bool OddW, bool Clamp, class T>
void flat_chunks(const Stream& stream, int sh_count, int K_value, const QAvgPlan& P, const T* x,
                 T* y, int64_t begin, int64_t end) {
  const Stream s = stream;
  const __m128i sh = _mm_cvtsi32_si128(sh_count);
  const Vec K = _mm512_set1_epi16(static_cast<int16_t>(K_value)),
            lo = _mm512_set1_epi16(static_cast<int16_t>(P.lo)),
            hi = _mm512_set1_epi16(static_cast<int16_t>(P.hi)),
            low_bytes = _mm512_set1_epi16(0x00ff),
            K8 = _mm512_set1_epi8(static_cast<char>(K_value));
  int64_t pc = begin % s.cpp;
  Rows prev = s.row_sums<false, OddW>(x, begin - 1, pc == 0 ? s.cpp - 1 : pc - 1);
  Rows cur = s.row_sums<false, OddW>(x, begin, pc);
  // Chunk c's codes from prev, cur and next (the row sums of c - 1, c, c + 1).
  const auto step = [&](int64_t c, int64_t pn, Rows next) {
    const uint32_t* m = s.lane_masks + 4 * pc;
    // W odd: the vertical neighbours of even positions are odd ones and back.
    // W even: lanes i of both parities lie on one row, so share its masks.
    const __mmask32 up = m[0], down = m[1];
    const Vec e = window(cur.e, up, down, OddW ? prev.o : prev.e, OddW ? cur.o : cur.e,
                         OddW ? next.o : next.e, s.e_up, s.e_down);
    const Vec od = window(cur.o, OddW ? m[2] : up, OddW ? m[3] : down, OddW ? prev.e : prev.o,
                          OddW ? cur.e : cur.o, OddW ? next.e : next.o, s.o_up, s.o_down);
    const uint16_t* f = s.fields + 192 * pc;
    Vec b;
    if constexpr (Clamp) {
      const Vec ce = rows16_codes<Even>(e, f, 32, sh, K, lo, hi);
      const Vec co = rows16_codes<Even>(od, f + 96, 32, sh, K, lo, hi);
      // (ce & 0xff) | co << 8: the codes fit the dtype, so their low bytes are them.
      b = _mm512_ternarylogic_epi32(ce, low_bytes, _mm512_slli_epi16(co, 8), 0xea);
    } else {
      // Every q - K is a code: the low bytes of q, less K's, are the codes' bytes.
      const Vec qe = rows16_quotients<Even>(e, f, 32, sh);
      const Vec qo = rows16_quotients<Even>(od, f + 96, 32, sh);
      b = _mm512_sub_epi8(_mm512_ternarylogic_epi32(qe, low_bytes, _mm512_slli_epi16(qo, 8), 0xea),
                          K8);
    }
    if (c + 1 < s.chunks)
      _mm512_storeu_si512(y + 64 * c, b);
    else
      _mm512_mask_storeu_epi8(y + 64 * c, s.inside(64 * c), b);
    prev = cur, cur = next, pc = pn;
  };
  // next = chunk c + 1 is interior while 64 (c + 1) + 65 <= positions.
  const int64_t interior_end = std::min(end, (s.positions - 65) / 64);
  int64_t c = begin;
  for (; c < interior_end; ++c) {
    const int64_t pn = pc + 1 == s.cpp ? 0 : pc + 1;
    step(c, pn, s.row_sums<true, OddW>(x, c + 1, pn));
  }
  for (; c < end; ++c) {
    const int64_t pn = pc + 1 == s.cpp ? 0 : pc + 1;
    step(c, pn, s.row_sums<false, OddW>(x, c + 1, pn));
  }
}

template <class T>
void flat3x3(const QAvgPoolProblem& p) {
  const char* why = nullptr;
  const std::shared_ptr<const Flat3x3Plan> plan = flat3x3_plan(p, &why);
  if (!plan) return;  // unreachable: the list's declines took p
  const Flat3x3Plan& F = *plan;
  const Stream s(F);
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  // One instantiation per (even divisors, odd W, clamp) for the call.
  using Run = void (*)(const Stream&, int, int, const QAvgPlan&, const T*, T*, int64_t, int64_t);
  static constexpr Run runs[8] = {
      flat_chunks<false, false, false, T>, flat_chunks<false, false, true, T>,
      flat_chunks<false, true, false, T>,  flat_chunks<false, true, true, T>,
      flat_chunks<true, false, false, T>,  flat_chunks<true, false, true, T>,
      flat_chunks<true, true, false, T>,   flat_chunks<true, true, true, T>};
  const Run run = runs[4 * F.any_even + 2 * (F.W % 2) + !F.clamp_free];
  // 64 chunks (4 KiB of input) per piece of a thread's work.
  parallel_ranges(s.chunks, 64,
                  [&](int64_t begin, int64_t end) { run(s, F.sh, F.K, p.plan, x, y, begin, end); });
}

}  // namespace

void x8_qavgpool_flat3x3_nchw_avx512(const QAvgPoolProblem& p) {
  if (p.plan.dtype == DType::s8)
    flat3x3<int8_t>(p);
  else
    flat3x3<uint8_t>(p);
}

}  // namespace npukit::cpu

#include "ops/cpu/isa-end.inc"
#endif
