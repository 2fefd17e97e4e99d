// x8_qavgpool_flat3x3_nchw_avx512: k3s1p1 over a dense NCHW tensor as one
// flat stream of 32-position chunks (qavgpool-flat3x3.hpp). Per chunk: the
// row sums of three taps from three masked byte loads at offsets -1, 0, +1
// (a lane without a left or right neighbour loads 0), then the window sums as
// the chunk's row sums plus those W positions before and after it (two-source
// word permutes of the previous, current and next chunk, zeroed for lanes on
// the plane's first or last row), then rows16's integer final step. Integer
// sums are exact in any order, so every output is the reference's.
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

inline __m256i ld(const void* a) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(a));
}

template <class T>
inline Vec widen(__mmask32 k, __m256i b) {
  if constexpr (std::is_signed_v<T>) return _mm512_maskz_cvtepi8_epi16(k, b);
  return _mm512_maskz_cvtepu8_epi16(k, b);
}

// The stream's constants; the kernel copies them into locals (y's byte
// stores may alias anything it reaches through a pointer).
struct Stream {
  const uint32_t* masks;
  const uint16_t* fields;
  int64_t cpp, chunks, tail;  // tail: positions in the last chunk (1..32)
  int64_t plane, ext;         // the field tables: offset (32 * c) % plane, stride ext
  Vec up, down;               // permute indices: lane j - W and j + W

  explicit Stream(const Flat3x3Plan& F)
      : masks(F.masks.data()),
        fields(F.fields.data()),
        cpp(F.cpp),
        chunks((F.positions + 31) / 32),
        tail(F.positions - 32 * (chunks - 1)),
        plane(F.ext - 32),
        ext(F.ext) {
    alignas(64) uint16_t u[32], d[32];
    for (int j = 0; j < 32; ++j) {
      u[j] = static_cast<uint16_t>(32 + j - F.W);
      d[j] = static_cast<uint16_t>(j + F.W);
    }
    up = _mm512_load_si512(u);
    down = _mm512_load_si512(d);
  }

  __mmask32 valid(int64_t c) const {
    if (c < 0 || c >= chunks) return 0;
    return c + 1 < chunks ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << tail) - 1);
  }

  // The sums of each position's three taps on its row (chunk c, pattern pc).
  // Interior: 0 < c < chunks - 1, every byte from x + 32c - 1 to x + 32c + 32
  // is in the tensor, so plain loads; else masked loads that touch nothing
  // outside it.
  template <bool Interior, class T>
  Vec row_sums(const T* x, int64_t c, int64_t pc) const {
    const T* p = x + 32 * c;
    const uint32_t* m = masks + 4 * pc;
    if constexpr (Interior) {
      return add16(add16(widen<T>(m[0], ld(p - 1)), widen<T>(~__mmask32{0}, ld(p))),
                   widen<T>(m[1], ld(p + 1)));
    }
    const __mmask32 v = valid(c);
    if (!v) return _mm512_setzero_si512();
    return add16(add16(widen<T>(v & m[0], _mm256_maskz_loadu_epi8(v & m[0], p - 1)),
                       widen<T>(v, _mm256_maskz_loadu_epi8(v, p))),
                 widen<T>(v & m[1], _mm256_maskz_loadu_epi8(v & m[1], p + 1)));
  }
};

template <bool Even, class T>
void flat_chunks(const Stream& stream, int sh_count, int K_value, const QAvgPlan& P, const T* x,
                 T* y, int64_t begin, int64_t end) {
  const Stream s = stream;
  const __m128i sh = _mm_cvtsi32_si128(sh_count);
  const Vec K = _mm512_set1_epi16(static_cast<int16_t>(K_value)),
            lo = _mm512_set1_epi16(static_cast<int16_t>(P.lo)),
            hi = _mm512_set1_epi16(static_cast<int16_t>(P.hi));
  int64_t pc = begin % s.cpp, o = begin * 32 % s.plane;
  Vec prev = s.row_sums<false>(x, begin - 1, pc == 0 ? s.cpp - 1 : pc - 1);
  Vec cur = s.row_sums<false>(x, begin, pc);
  // Chunk c's output from prev, cur and next (the row sums of c - 1, c, c + 1).
  const auto step = [&](int64_t c, int64_t pn, Vec next) {
    const uint32_t* m = s.masks + 4 * pc;
    const Vec above = _mm512_maskz_permutex2var_epi16(m[2], prev, s.up, cur);
    const Vec below = _mm512_maskz_permutex2var_epi16(m[3], cur, s.down, next);
    const Vec sum = add16(add16(above, cur), below);
    const __m256i b = _mm512_cvtepi16_epi8(
        rows16_codes<Even>(sum, s.fields + o, s.ext, sh, K, lo, hi));  // codes fit the dtype
    if (c + 1 < s.chunks)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 32 * c), b);
    else
      _mm256_mask_storeu_epi8(y + 32 * c, s.valid(c), b);
    prev = cur, cur = next, pc = pn;
    for (o += 32; o >= s.plane;) o -= s.plane;
  };
  // next = chunk c + 1 is interior while c + 2 < chunks.
  const int64_t interior_end = std::min(end, s.chunks - 2);
  int64_t c = begin;
  for (; c < interior_end; ++c) {
    const int64_t pn = pc + 1 == s.cpp ? 0 : pc + 1;
    step(c, pn, s.row_sums<true>(x, c + 1, pn));
  }
  for (; c < end; ++c) {
    const int64_t pn = pc + 1 == s.cpp ? 0 : pc + 1;
    step(c, pn, s.row_sums<false>(x, c + 1, pn));
  }
}

template <class T>
void flat3x3(const QAvgPoolProblem& p) {
  Flat3x3Plan F;
  if (flat3x3_build(p, &F)) return;  // unreachable: the list's declines took p
  const Stream s(F);
  const T* x = static_cast<const T*>(p.x.raw());
  T* y = static_cast<T*>(p.y.raw());
  // 128 chunks (4 KiB of input) per piece of a thread's work.
  parallel_ranges(s.chunks, 128, [&](int64_t begin, int64_t end) {
    if (F.any_even)
      flat_chunks<true, T>(s, F.sh, F.K, p.plan, x, y, begin, end);
    else
      flat_chunks<false, T>(s, F.sh, F.K, p.plan, x, y, begin, end);
  });
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
