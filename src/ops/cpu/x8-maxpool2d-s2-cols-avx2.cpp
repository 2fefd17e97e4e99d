// AVX2 stride-2 s8/u8 max pooling of NCHW rows whose column taps lie in
// [2j - 1, 2j + 1] (x8_s2_cols_declines: k3s2p1, k2s2, k1s2): the window's
// rows are maxed first, 32 columns per register (each input byte loaded once
// per window row), then the column maxima become 16-bit words (low byte even
// column 2i, high byte odd column 2i + 1): the even column is the word masked,
// the odd one the word shifted right by 8, column 2i - 1 the odd words moved up
// one word across the register; vpackuswb + vpermq put 32 outputs back in
// order. s8 goes through the same unsigned words with its sign bit flipped
// (after the vertical max), so the lowest code is 0 in both. Max is order-free:
// the reference's set of taps in another order, exact. Lanes past the row hold
// the padding value where the right padding is, the lowest code past it;
// column -1 (pad_left 1) is the padding value.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "x8-maxpool2d-s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx2-begin.inc"

namespace npukit::cpu {
namespace {

// Columns [col, col + 32) of every row of a plane. Plain bytes: a std::vector
// built outside this target region holds them.
struct Seg {
  alignas(32) uint8_t keep[32];  // 0xff on the row's lanes
  alignas(32) uint8_t fill[32];  // 0 on the row; right padding: the pad value; past it: lowest
  int64_t col = 0;
  int32_t valid = 0;       // lanes on the row
  bool exact = false;      // every lane on the row: plain loads
  bool fill_read = false;  // a stored output reads a lane past the row
};

struct Plan {
  const uint8_t *x_begin, *x_end;
  uint8_t* y_begin;
  int64_t C, xs0, xs1, ys0, ys1;  // image and plane strides
  int64_t rs, H, OH, OW, y_rs, kh, sh, pad_top, pad_bottom;
  int64_t first, last;  // output rows whose window rows are all on the input
  bool tap_m1, tap_0, tap_p1;
  bool dense_y;  // y's rows back to back: a whole store's excess lands in later rows
  uint8_t pad, low;
  std::vector<Seg> segs;  // two per chunk of 32 outputs
};

#define NPUKIT_X8S2C_INLINE inline __attribute__((always_inline))

template <class T>
NPUKIT_X8S2C_INLINE __m256i vmax(__m256i a, __m256i b) {
  return std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}

NPUKIT_X8S2C_INLINE __m256i load(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

NPUKIT_X8S2C_INLINE __m256i splat(uint8_t v) {
  return _mm256_set1_epi8(static_cast<char>(v));
}

// One window row of a Seg: Plain, a whole load; else the row's lanes from
// memory (a whole load when it stays inside x, else a copy of the valid
// bytes) and the fill elsewhere.
template <bool Plain>
NPUKIT_X8S2C_INLINE __m256i load_seg(const Seg& s, const uint8_t* p, const uint8_t* x_end) {
  if constexpr (Plain) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if (s.exact || (!s.fill_read && p + 32 <= x_end))
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  __m256i raw;
  if (p + 32 <= x_end) {
    raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  } else {
    alignas(32) uint8_t copy[32] = {};
    if (s.valid > 0) std::memcpy(copy, p, static_cast<size_t>(s.valid));
    raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(copy));
  }
  const __m256i keep = _mm256_load_si256(reinterpret_cast<const __m256i*>(s.keep));
  const __m256i fill = _mm256_load_si256(reinterpret_cast<const __m256i*>(s.fill));
  return _mm256_or_si256(_mm256_and_si256(raw, keep), fill);
}

// The column maxima of output row oh at one Seg (p: the plane's row 0 at the
// Seg's column). KH: kernel_h at compile time (0: the plan's).
template <class T, int KH, bool Plain>
NPUKIT_X8S2C_INLINE __m256i columns(const Plan& pl, const Seg& s, const uint8_t* p, int64_t oh) {
  const int64_t r0 = oh * pl.sh - pl.pad_top, rs = pl.rs;
  if (oh >= pl.first && oh < pl.last) {
    const uint8_t* q = p + r0 * rs;
    __m256i acc = load_seg<Plain>(s, q, pl.x_end);
    if constexpr (KH > 0) {
#pragma GCC unroll 8
      for (int i = 1; i < KH; ++i) acc = vmax<T>(acc, load_seg<Plain>(s, q + i * rs, pl.x_end));
    } else {
      for (int64_t i = 1; i < pl.kh; ++i)
        acc = vmax<T>(acc, load_seg<Plain>(s, q + i * rs, pl.x_end));
    }
    return acc;
  }
  // Rows clipped to the input; a window row in the padding adds the padding
  // value to every output.
  const int64_t lo = std::max<int64_t>(0, r0), hi = std::min(pl.H, r0 + pl.kh);
  __m256i acc = splat(pl.low);
  for (int64_t r = lo; r < hi; ++r) acc = vmax<T>(acc, load_seg<false>(s, p + r * rs, pl.x_end));
  const bool with_pad =
      std::max<int64_t>(r0, -pl.pad_top) < std::min<int64_t>(r0 + pl.kh, 0) ||
      std::max<int64_t>(r0, pl.H) < std::min<int64_t>(r0 + pl.kh, pl.H + pl.pad_bottom);
  return with_pad ? vmax<T>(acc, splat(pl.pad)) : acc;
}

// The column taps present: d = -1, 0 (even), +1 (odd). M: kM1 | k0 | kP1 at
// compile time, 0: the plan's.
enum : int { kM1 = 1, k0 = 2, kP1 = 4 };

// 16 outputs in words from the unsigned column maxima v (32 columns) and
// prev_odd (the odd columns of the 32 columns before, word 15 used).
template <int M>
NPUKIT_X8S2C_INLINE __m256i words(const Plan& pl, __m256i v, __m256i& prev_odd) {
  const bool m1 = M ? (M & kM1) != 0 : pl.tap_m1;
  const bool z = M ? (M & k0) != 0 : pl.tap_0;
  const bool p1 = M ? (M & kP1) != 0 : pl.tap_p1;
  const __m256i odd = _mm256_srli_epi16(v, 8);
  __m256i r = z ? _mm256_and_si256(v, _mm256_set1_epi16(0xff)) : _mm256_setzero_si256();
  if (p1) r = _mm256_max_epi16(r, odd);
  if (m1) {
    // Word i takes odd word i - 1; word 0 prev_odd's word 15.
    const __m256i prev = _mm256_permute2x128_si256(prev_odd, odd, 0x21);
    r = _mm256_max_epi16(r, _mm256_alignr_epi8(odd, prev, 14));
  }
  prev_odd = odd;
  return r;
}

template <class T, int KH, int M, bool Plain>
void plane(const Plan& pl, const uint8_t* xp, uint8_t* yp) {
  // s8 in the unsigned order: the sign bit flipped.
  const __m256i flip = splat(std::is_signed_v<T> ? 0x80 : 0);
  // Column -1 (pad_left 1) in word 15 of the first prev_odd.
  const __m256i pad_odd =
      _mm256_set1_epi16(static_cast<uint8_t>(pl.pad ^ (std::is_signed_v<T> ? 0x80 : 0)));
  const int64_t nseg = static_cast<int64_t>(pl.segs.size());
  const Seg* segs = pl.segs.data();
  const int64_t OH = pl.OH, OW = pl.OW, y_rs = pl.y_rs, plane_bytes = OH * OW;
  // 32 outputs from the column maxima a and b (64 columns, s8 not yet flipped).
  auto outputs = [&](__m256i a, __m256i b, __m256i & prev_odd) __attribute__((always_inline)) {
    const __m256i wa = words<M>(pl, _mm256_xor_si256(a, flip), prev_odd);
    const __m256i wb = words<M>(pl, _mm256_xor_si256(b, flip), prev_odd);
    // packus interleaves the 128-bit lanes: a.lo b.lo a.hi b.hi -> a b.
    return _mm256_xor_si256(_mm256_permute4x64_epi64(_mm256_packus_epi16(wa, wb), 0xd8), flip);
  };
  // Dense y: a whole store whose excess lands in later rows of the plane
  // (written after it) for outputs starting at o <= plane_bytes - 32.
  auto store = [&](uint8_t * y, int64_t o, int64_t n, __m256i out) __attribute__((always_inline)) {
    if (n >= 32 || (pl.dense_y && o + 32 <= plane_bytes)) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), out);
    } else {
      alignas(32) uint8_t tmp[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), out);
      std::memcpy(y, tmp, static_cast<size_t>(n));
    }
  };
  auto any_row = [&](int64_t oh) {
    __m256i prev_odd = pad_odd;
    for (int64_t k = 0; k < nseg; k += 2) {
      const Seg &sa = segs[k], &sb = segs[k + 1];
      const __m256i out = outputs(columns<T, KH, Plain>(pl, sa, xp + sa.col, oh),
                                  columns<T, KH, Plain>(pl, sb, xp + sb.col, oh), prev_odd);
      const int64_t o0 = 16 * k;
      store(yp + oh * y_rs + o0, oh * OW + o0, OW - o0, out);
    }
  };
  int64_t oh = 0;
  if constexpr (Plain) {
    // Rows whose windows lie on the input: plain loads at running pointers,
    // no edge checks.
    for (; oh < pl.first; ++oh) any_row(oh);
    const int64_t last = pl.last, rs = pl.rs, step = pl.sh * rs;
    const uint8_t* q = xp + (oh * pl.sh - pl.pad_top) * rs;
    uint8_t* y = yp + oh * y_rs;
    // 3-row windows 2 rows apart (k3s2p1) on rows of up to 32 or 64
    // outputs: an interior window's last row is the next one's first,
    // loaded once (NS vectors of it kept in registers).
    auto shared_rows = [&](auto ns) __attribute__((always_inline)) {
      constexpr int NS = decltype(ns)::value;
      __m256i top[NS];
      if (oh < last)
        for (int k = 0; k < NS; ++k) top[k] = load(q + 32 * k);
      for (; oh < last; ++oh, q += step, y += y_rs) {
        __m256i prev_odd = pad_odd;
#pragma GCC unroll 4
        for (int k = 0; k < NS; k += 2) {
          const __m256i bot_a = load(q + 2 * rs + 32 * k), bot_b = load(q + 2 * rs + 32 * k + 32);
          const __m256i a = vmax<T>(vmax<T>(top[k], load(q + rs + 32 * k)), bot_a);
          const __m256i b = vmax<T>(vmax<T>(top[k + 1], load(q + rs + 32 * k + 32)), bot_b);
          top[k] = bot_a;
          top[k + 1] = bot_b;
          store(y + 16 * k, oh * OW + 16 * k, OW - 16 * k, outputs(a, b, prev_odd));
        }
      }
    };
    if (KH == 3 && pl.sh == 2 && nseg == 2) {
      shared_rows(std::integral_constant<int, 2>{});
    } else if (KH == 3 && pl.sh == 2 && nseg == 4) {
      shared_rows(std::integral_constant<int, 4>{});
    } else {
      // Column maxima of the window's rows at q.
      auto colmax = [&](const uint8_t* c) __attribute__((always_inline)) {
        __m256i v = load(c);
        if constexpr (KH > 0) {
#pragma GCC unroll 8
          for (int i = 1; i < KH; ++i) v = vmax<T>(v, load(c + i * rs));
        } else {
          for (int64_t i = 1; i < pl.kh; ++i) v = vmax<T>(v, load(c + i * rs));
        }
        return v;
      };
      // Rows of at most 32 outputs whose whole 32-byte store stays in the
      // plane (k2s2 on 56x56: 28 outputs): no segment loop, no store
      // checks, the s8 flip a constant (the generic loop below reloads it
      // and tests every store; its scalar work was half of this row's time).
      const int64_t whole_rows = nseg != 2          ? 0
                                 : OW >= 32         ? OH
                                 : !pl.dense_y      ? 0
                                 : plane_bytes < 32 ? 0
                                                    : (plane_bytes - 32) / OW + 1;
      const int64_t fast_end = std::min(last, whole_rows);
      for (; oh < fast_end; ++oh, q += step, y += y_rs) {
        __m256i prev_odd = pad_odd;
        __m256i a = colmax(q), b = colmax(q + 32);
        if constexpr (std::is_signed_v<T>) {
          a = _mm256_xor_si256(a, splat(0x80));
          b = _mm256_xor_si256(b, splat(0x80));
        }
        const __m256i wa = words<M>(pl, a, prev_odd), wb = words<M>(pl, b, prev_odd);
        __m256i out = _mm256_permute4x64_epi64(_mm256_packus_epi16(wa, wb), 0xd8);
        if constexpr (std::is_signed_v<T>) out = _mm256_xor_si256(out, splat(0x80));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), out);
      }
      for (; oh < last; ++oh, q += step, y += y_rs) {
        __m256i prev_odd = pad_odd;
        for (int64_t k = 0; k < nseg; k += 2) {
          const __m256i out = outputs(colmax(q + 32 * k), colmax(q + 32 * k + 32), prev_odd);
          store(y + 16 * k, oh * OW + 16 * k, OW - 16 * k, out);
        }
      }
    }
  }
  for (; oh < OH; ++oh) any_row(oh);
}

// Plain loads for the plane at xp: no stored output reads past the row and
// the plane's last row stays inside x.
bool plain_plane(const Plan& pl, const uint8_t* xp) {
  const bool tail_inside = xp + (pl.H - 1) * pl.rs + pl.segs.back().col + 32 <= pl.x_end;
  bool plain = true;
  for (const Seg& s : pl.segs) plain = plain && (s.exact || (!s.fill_read && tail_inside));
  return plain;
}

// Planes [begin, end) of N * C.
template <class T, int KH, int M>
void planes(const Plan& pl, int64_t begin, int64_t end) {
  int64_t n = begin / pl.C, c = begin % pl.C;  // advanced without divisions
  for (int64_t nc = begin; nc < end; ++nc) {
    const uint8_t* xp = pl.x_begin + n * pl.xs0 + c * pl.xs1;
    uint8_t* yp = pl.y_begin + n * pl.ys0 + c * pl.ys1;
    if (plain_plane(pl, xp))
      plane<T, KH, M, true>(pl, xp, yp);
    else
      plane<T, KH, M, false>(pl, xp, yp);
    if (++c == pl.C) c = 0, ++n;
  }
}

template <class T>
void run(const Pool2dProblem& pr) {
  const TensorView &x = pr.x, &y = pr.y;
  const Window2d& w = pr.p.window;
  const T lowest = std::numeric_limits<T>::lowest();
  Plan pl;
  pl.low = static_cast<uint8_t>(lowest);
  pl.pad = static_cast<uint8_t>(pr.p.pad_value == PadValue::zero ? T(0) : lowest);
  const auto* xbase = static_cast<const uint8_t*>(x.raw());
  int64_t span = 1;
  for (int d = 0; d < 4; ++d) span += (x.dim(d) - 1) * x.stride(d);
  pl.x_begin = xbase;
  pl.x_end = xbase + span;
  pl.y_begin = static_cast<uint8_t*>(y.raw());
  pl.C = x.dim(1);
  pl.xs0 = x.stride(0);
  pl.xs1 = x.stride(1);
  pl.ys0 = y.stride(0);
  pl.ys1 = y.stride(1);
  pl.rs = x.stride(2);
  pl.H = x.dim(2);
  const int64_t W = x.dim(3);
  pl.OH = y.dim(2);
  pl.OW = y.dim(3);
  pl.y_rs = y.stride(2);
  pl.dense_y = pl.y_rs == pl.OW;
  pl.kh = w.kernel_h;
  pl.sh = w.stride_h;
  pl.pad_top = w.pad_top;
  pl.pad_bottom = w.pad_bottom;
  pl.first = w.pad_top <= 0 ? 0 : std::min(pl.OH, (w.pad_top + w.stride_h - 1) / w.stride_h);
  const int64_t room = pl.H - w.kernel_h + w.pad_top;  // last r0 + pad_top that fits
  pl.last = room < 0 ? pl.first : std::max(pl.first, std::min(pl.OH, room / w.stride_h + 1));
  // Column taps of output j: 2j + d, d in [-pad_left, kernel_w - 1 - pad_left] within [-1, 1].
  const int64_t d_lo = -w.pad_left, d_hi = w.kernel_w - 1 - w.pad_left;
  pl.tap_m1 = d_lo <= -1;
  pl.tap_0 = d_lo <= 0 && d_hi >= 0;
  pl.tap_p1 = d_hi >= 1;
  const int64_t nseg = 2 * ((pl.OW + 31) / 32);
  const int64_t last_col = 2 * (pl.OW - 1) + d_hi;  // the rightmost column a stored output reads
  for (int64_t k = 0; k < nseg; ++k) {
    Seg s;
    s.col = 32 * k;
    const int64_t on_row = W - s.col;
    s.valid = static_cast<int32_t>(std::clamp<int64_t>(on_row, 0, 32));
    s.exact = on_row >= 32;
    s.fill_read = std::max(W, s.col) <= std::min(last_col, s.col + 31);
    for (int i = 0; i < 32; ++i) {
      const int64_t c = s.col + i;
      s.keep[i] = c < W ? 0xff : 0;
      s.fill[i] = c < W ? 0 : c < W + w.pad_right ? pl.pad : pl.low;
    }
    pl.segs.push_back(s);
  }
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, pl.H * W));
  using Fn = void (*)(const Plan&, int64_t, int64_t);
  // The race's windows at compile time: k2s2 (taps 2j, 2j + 1; two rows),
  // k3s2p1 (2j - 1 .. 2j + 1; three rows).
  const int m = (pl.tap_m1 ? kM1 : 0) | (pl.tap_0 ? k0 : 0) | (pl.tap_p1 ? kP1 : 0);
  const Fn kernel = w.kernel_h == 2 && m == (k0 | kP1)         ? planes<T, 2, k0 | kP1>
                    : w.kernel_h == 3 && m == (kM1 | k0 | kP1) ? planes<T, 3, kM1 | k0 | kP1>
                                                               : planes<T, 0, 0>;
  parallel_ranges(x.dim(0) * pl.C, grain,
                  [&](int64_t begin, int64_t end) { kernel(pl, begin, end); });
}

}  // namespace

void max_pool2d_x8_s2_cols_avx2(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    run<int8_t>(pr);
  else
    run<uint8_t>(pr);
}

}  // namespace npukit::cpu

#undef NPUKIT_X8S2C_INLINE

#include "ops/cpu/isa-end.inc"
#endif
