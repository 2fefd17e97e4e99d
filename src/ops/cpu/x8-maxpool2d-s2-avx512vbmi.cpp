// AVX-512 VBMI stride-2 s8/u8 max pooling of NCHW rows (x8-maxpool2d-s2.hpp,
// x8_s2_vbmi_declines): the window's rows are maxed first, one 64-column
// vector at a time (each input byte loaded once per window row), then two
// byte permutes (vpermt2b) of a pair of such vectors pick the even and the
// odd columns, so output j sees column 2j (even), 2j + 1 (odd) and 2j - 1 (the
// odd vector moved up one lane, a third permute). Max is order-free, so this
// is the reference's set of taps in another order: exact.
// Rows of at most 64 outputs' worth of columns (2 * OW <= 64) put two output
// rows into one permute pair (row oh in lanes [0, OW), row oh + 1 after it).
// Lanes past the row hold the padding value where the right padding is, the
// lowest code past it; column -1 (pad_left 1) is the padding value.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "x8-maxpool2d-s2.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/cpu/isa-avx512vbmi-begin.inc"

namespace npukit::cpu {
namespace {

// Columns [col, col + 64) of every row of a plane.
// Plain bytes: std::vector does not keep a __m512i member aligned here.
struct Seg {
  uint8_t fill[64];  // 0 on the row's lanes; right padding: the pad value; past it: lowest
  __mmask64 valid;   // lanes on the row
  int64_t col;
  bool exact;      // every lane on the row: plain loads
  bool fill_read;  // an output that is stored reads a lane past the row
};

struct Plan {
  const uint8_t *x_begin, *x_end;
  uint8_t* y_begin;
  int64_t C, xs0, xs1, ys0, ys1;  // image and plane strides
  int64_t rs, H, W, OH, OW, y_rs, kh, sh, pad_top, pad_bottom;
  int64_t first, last;  // output rows whose window rows are all on the input
  bool tap_m1, tap_0, tap_p1;
  // Planes back to back in x and y whose windows start at their first row
  // and never reach past their last: consecutive planes are one taller plane.
  bool stacked;
  bool pair;              // two output rows per permute pair (segs: one, at column 0)
  std::vector<Seg> segs;  // else two per chunk of 64 outputs
  // Byte vectors as plain bytes (a __m512i member would make the implicit
  // copy constructor, defined outside the target region, use AVX-512).
  uint8_t pad, low;
  uint8_t idx_even[64], idx_odd[64], idx_shift[64], idx_down[64];
  __m512i vpad() const { return _mm512_set1_epi8(static_cast<char>(pad)); }
  __m512i vlow() const { return _mm512_set1_epi8(static_cast<char>(low)); }
};

__m512i bytes(const uint8_t (&b)[64]) {
  return _mm512_loadu_si512(b);
}

#define NPUKIT_X8S2V_INLINE inline __attribute__((always_inline))

template <class T>
NPUKIT_X8S2V_INLINE __m512i vmax(__m512i a, __m512i b) {
  return std::is_signed_v<T> ? _mm512_max_epi8(a, b) : _mm512_max_epu8(a, b);
}

__mmask64 lanes_below(int64_t n) {
  return n >= 64 ? ~__mmask64{0} : n <= 0 ? 0 : (__mmask64{1} << n) - 1;
}

// The window's column maxima at one Seg's columns for any output row, with
// the plan's fields in locals (y's byte stores may alias the plan, so reads
// through it would repeat after every store). Plain: whole-vector loads.
template <class T, int KH, bool Plain>
struct Columns {
  const uint8_t* p;  // the plane's row 0 at the Seg's column
  int64_t rs, sh, pad_top, kh, H, pad_bottom, first, last;
  __mmask64 valid;
  __m512i fill, vpad, vlow;

  Columns(const Plan& pl, const Seg& s, const uint8_t* xp)
      : p(xp + s.col),
        rs(pl.rs),
        sh(pl.sh),
        pad_top(pl.pad_top),
        kh(pl.kh),
        H(pl.H),
        pad_bottom(pl.pad_bottom),
        first(pl.first),
        last(pl.last),
        valid(s.valid),
        fill(Plain ? pl.vlow() : _mm512_loadu_si512(s.fill)),
        vpad(pl.vpad()),
        vlow(pl.vlow()) {}

  NPUKIT_X8S2V_INLINE __m512i load(const uint8_t* q) const {
    if constexpr (Plain) return _mm512_loadu_si512(q);
    return _mm512_or_si512(_mm512_maskz_loadu_epi8(valid, q), fill);
  }
  NPUKIT_X8S2V_INLINE __m512i operator()(int64_t oh) const {
    return oh >= first && oh < last ? interior(oh) : edge(oh * sh - pad_top);
  }
  // Every window row on the input.
  NPUKIT_X8S2V_INLINE __m512i interior(int64_t oh) const {
    const uint8_t* q = p + (oh * sh - pad_top) * rs;
    __m512i acc = load(q);
    if constexpr (KH > 0) {
#pragma GCC unroll 8
      for (int i = 1; i < KH; ++i) acc = vmax<T>(acc, load(q + i * rs));
    } else {
      for (int64_t i = 1; i < kh; ++i) acc = vmax<T>(acc, load(q + i * rs));
    }
    return acc;
  }
  // Rows clipped to the input; a window row in the padding adds the padding
  // value to every output.
  __m512i edge(int64_t r0) const {
    const int64_t lo = std::max<int64_t>(0, r0), hi = std::min(H, r0 + kh);
    __m512i acc = vlow;
    for (int64_t r = lo; r < hi; ++r) acc = vmax<T>(acc, load(p + r * rs));
    const bool with_pad = std::max<int64_t>(r0, -pad_top) < std::min<int64_t>(r0 + kh, 0) ||
                          std::max<int64_t>(r0, H) < std::min<int64_t>(r0 + kh, H + pad_bottom);
    return with_pad ? vmax<T>(acc, vpad) : acc;
  }
};

// The column taps present: d = -1 (the odd columns moved up one lane), 0
// (even), +1 (odd). M: kM1 | k0 | kP1 at compile time, 0: the plan's.
enum : int { kM1 = 1, k0 = 2, kP1 = 4 };

template <int M>
struct Taps {
  bool m1_, z_, p1_;
  __m512i idx_even, idx_odd, idx_shift, vlow;
  explicit Taps(const Plan& pl)
      : m1_(pl.tap_m1),
        z_(pl.tap_0),
        p1_(pl.tap_p1),
        idx_even(bytes(pl.idx_even)),
        idx_odd(bytes(pl.idx_odd)),
        idx_shift(bytes(pl.idx_shift)),
        vlow(pl.vlow()) {}
  bool m1() const { return M ? (M & kM1) != 0 : m1_; }
  bool z() const { return M ? (M & k0) != 0 : z_; }
  bool p1() const { return M ? (M & kP1) != 0 : p1_; }
  // Outputs of d = 0 and +1 from the column maxima a (columns 0-63) and b (64-127).
  template <class T>
  NPUKIT_X8S2V_INLINE __m512i even_odd(__m512i a, __m512i b, __m512i& odd) const {
    odd = _mm512_permutex2var_epi8(a, idx_odd, b);
    const __m512i r = z() ? _mm512_permutex2var_epi8(a, idx_even, b) : vlow;
    return p1() ? vmax<T>(r, odd) : r;
  }
};

// Two output rows per permute pair (2 * OW <= 64, one Seg at column 0); the
// plan's fields in registers across planes.
template <class T, int KH, int M, bool Plain>
struct PairRows {
  Columns<T, KH, Plain> col;
  Taps<M> tp;
  __m512i vpad, vlow, idx_down;
  int64_t OH, OW, y_rs, first, last, whole_end;
  __mmask64 both, one;
  bool dense;

  explicit PairRows(const Plan& pl)
      : col(pl, pl.segs[0], pl.x_begin),
        tp(pl),
        vpad(pl.vpad()),
        vlow(pl.vlow()),
        idx_down(bytes(pl.idx_down)),
        OH(pl.OH),
        OW(pl.OW),
        y_rs(pl.y_rs),
        first(pl.first),
        last(pl.last),
        // Dense y: a whole-vector store whose excess lands in later rows of
        // the plane (written after it) up to output row whole_end.
        whole_end(pl.y_rs == pl.OW && pl.OH * pl.OW >= 64 ? (pl.OH * pl.OW - 64) / pl.OW : -1),
        both(lanes_below(2 * pl.OW)),
        one(lanes_below(pl.OW)),
        dense(pl.y_rs == pl.OW) {}

  NPUKIT_X8S2V_INLINE __m512i outputs(__m512i a, __m512i b) const {
    __m512i odd;
    const __m512i r = tp.template even_odd<T>(a, b, odd);
    // Lanes 0 and OW take column -1: the padding value.
    return tp.m1() ? vmax<T>(r, _mm512_permutex2var_epi8(odd, tp.idx_shift, vpad)) : r;
  }
  void store(uint8_t* yp, int64_t oh, __m512i r, bool two) const {
    uint8_t* y0 = yp + oh * y_rs;
    if (oh <= whole_end) {
      _mm512_storeu_si512(y0, r);
    } else if (!two) {
      _mm512_mask_storeu_epi8(y0, one, r);
    } else if (dense) {
      _mm512_mask_storeu_epi8(y0, both, r);
    } else {
      _mm512_mask_storeu_epi8(y0, one, r);
      _mm512_mask_storeu_epi8(y0 + y_rs, one, _mm512_permutexvar_epi8(idx_down, r));
    }
  }
  void any_pair(uint8_t* yp, int64_t oh) const {
    const bool two = oh + 1 < OH;
    store(yp, oh, outputs(col(oh), two ? col(oh + 1) : vlow), two);
  }
  // One plane: x's plane at xp (col reads there), y's at yp.
  NPUKIT_X8S2V_INLINE void plane(const uint8_t* xp, uint8_t* yp) {
    col.p = xp;  // the Seg is at column 0
    int64_t oh = 0;
    for (; oh < first && oh < OH; oh += 2) any_pair(yp, oh);
    // Both rows' windows on the input, whole-vector stores.
    const int64_t whole_pairs_end = std::min(last - 1, whole_end + 1);
    for (; oh < whole_pairs_end; oh += 2)
      _mm512_storeu_si512(yp + oh * y_rs, outputs(col.interior(oh), col.interior(oh + 1)));
    for (; oh < OH; oh += 2) any_pair(yp, oh);
  }
};

// Chunks of 64 outputs, each from two Segs (128 columns), chunk after chunk
// along each row; the odd columns of the previous chunk give column -1.
template <class T, int KH, int M, bool Plain>
NPUKIT_X8S2V_INLINE void chunk_plane(const Plan& pl, const uint8_t* xp, uint8_t* yp) {
  const Taps<M> tp(pl);
  const __m512i vpad = pl.vpad();
  const int64_t OH = pl.OH, OW = pl.OW, y_rs = pl.y_rs;
  const int64_t nseg = static_cast<int64_t>(pl.segs.size());
  const Seg* segs = pl.segs.data();
  // Outputs [o0, o0 + 64) of row oh from the column maxima a and b.
  auto finish = [&](__m512i a, __m512i b, int64_t oh, int64_t o0, __m512i& prev_odd) {
    __m512i odd;
    __m512i r = tp.template even_odd<T>(a, b, odd);
    if (tp.m1()) r = vmax<T>(r, _mm512_permutex2var_epi8(prev_odd, tp.idx_shift, odd));
    prev_odd = odd;
    uint8_t* y = yp + oh * y_rs + o0;
    const int64_t n = OW - o0;
    if (n >= 64)
      _mm512_storeu_si512(y, r);
    else
      _mm512_mask_storeu_epi8(y, lanes_below(n), r);
  };
  auto chunk = [&](const Columns<T, KH, Plain>& ca, const Columns<T, KH, Plain>& cb, int64_t oh,
                   int64_t o0, __m512i& prev_odd) { finish(ca(oh), cb(oh), oh, o0, prev_odd); };
  if (nseg == 2) {  // rows of up to 64 outputs: the Segs' fields stay in registers
    const Columns<T, KH, Plain> ca(pl, segs[0], xp), cb(pl, segs[1], xp);
    int64_t oh = 0;
    if (KH == 3 && pl.sh == 2) {
      // 3-row windows 2 rows apart (k3s2p1): an interior window's last row
      // is the next one's first, loaded once.
      for (; oh < pl.first; ++oh) {
        __m512i prev_odd = vpad;
        chunk(ca, cb, oh, 0, prev_odd);
      }
      const int64_t last = pl.last, rs = pl.rs;
      if (oh < last) {
        // Dense y: whole-vector stores whose excess lands in the next rows
        // (written after them) up to output row whole_end.
        const int64_t whole_end = y_rs == OW && OH * OW >= 64 ? (OH * OW - 64) / OW : -1;
        const __mmask64 m = lanes_below(OW);
        // Locals, not the Taps' members: kept in registers across y's stores.
        // The taps are all three (KH == 3 is chosen with M == kM1 | k0 | kP1).
        static_assert(KH != 3 || M == (kM1 | k0 | kP1));
        const __m512i idx_even = tp.idx_even, idx_odd = tp.idx_odd, idx_shift = tp.idx_shift;
        const uint8_t* qa = ca.p + (oh * 2 - pl.pad_top) * rs;
        const uint8_t* qb = cb.p + (oh * 2 - pl.pad_top) * rs;
        uint8_t* y = yp + oh * y_rs;
        __m512i top_a = ca.load(qa), top_b = cb.load(qb);
        for (; oh < last; ++oh, qa += 2 * rs, qb += 2 * rs, y += y_rs) {
          const __m512i bot_a = ca.load(qa + 2 * rs), bot_b = cb.load(qb + 2 * rs);
          const __m512i a = vmax<T>(vmax<T>(top_a, ca.load(qa + rs)), bot_a);
          const __m512i b = vmax<T>(vmax<T>(top_b, cb.load(qb + rs)), bot_b);
          top_a = bot_a;
          top_b = bot_b;
          const __m512i odd = _mm512_permutex2var_epi8(a, idx_odd, b);
          __m512i r = vmax<T>(_mm512_permutex2var_epi8(a, idx_even, b), odd);
          r = vmax<T>(r, _mm512_permutex2var_epi8(vpad, idx_shift, odd));
          if (oh <= whole_end)
            _mm512_storeu_si512(y, r);
          else
            _mm512_mask_storeu_epi8(y, m, r);
        }
      }
    }
    for (; oh < OH; ++oh) {
      __m512i prev_odd = vpad;  // its lane 63 is column -1
      chunk(ca, cb, oh, 0, prev_odd);
    }
    return;
  }
  for (int64_t oh = 0; oh < OH; ++oh) {
    __m512i prev_odd = vpad;
    for (int64_t k = 0; k < nseg; k += 2) {
      const Columns<T, KH, Plain> ca(pl, segs[k], xp), cb(pl, segs[k + 1], xp);
      chunk(ca, cb, oh, 32 * k, prev_odd);
    }
  }
}

// Plain loads of the partial vectors for the plane at xp: no stored output
// reads past the row and the plane's last row stays inside x.
bool plain_plane(const Plan& pl, const uint8_t* xp) {
  const bool tail_inside = xp + (pl.H - 1) * pl.rs + pl.segs.back().col + 64 <= pl.x_end;
  bool plain = true;
  for (const Seg& s : pl.segs) plain = plain && (s.exact || (!s.fill_read && tail_inside));
  return plain;
}

// Planes [begin, end) of N * C. KH, M: kernel_h and the column taps at
// compile time (0: the plan's).
template <class T, int KH, int M>
void planes(const Plan& pl, int64_t begin, int64_t end) {
  if (pl.stacked) {
    // The range is one plane of (end - begin) * H rows: one set-up, and the
    // two-row path's pairs and whole-vector stores run across plane ends.
    Plan tall = pl;
    tall.H = pl.H * (end - begin);
    tall.OH = pl.OH * (end - begin);
    tall.first = 0;
    tall.last = tall.OH;
    const uint8_t* xp = pl.x_begin + begin * pl.xs1;
    uint8_t* yp = pl.y_begin + begin * pl.ys1;
    const bool plain = plain_plane(tall, xp);
    if (pl.pair && plain)
      PairRows<T, KH, M, true>(tall).plane(xp, yp);
    else if (pl.pair)
      PairRows<T, KH, M, false>(tall).plane(xp, yp);
    else if (plain)
      chunk_plane<T, KH, M, true>(tall, xp, yp);
    else
      chunk_plane<T, KH, M, false>(tall, xp, yp);
    return;
  }
  const int64_t C = pl.C;
  int64_t n = begin / C, c = begin % C;  // advanced without divisions
  auto each = [&](auto&& body) {
    for (int64_t nc = begin; nc < end; ++nc) {
      body(pl.x_begin + n * pl.xs0 + c * pl.xs1, pl.y_begin + n * pl.ys0 + c * pl.ys1);
      if (++c == C) c = 0, ++n;
    }
  };
  if (pl.pair) {
    PairRows<T, KH, M, true> plain(pl);
    PairRows<T, KH, M, false> masked(pl);
    each([&](const uint8_t* xp, uint8_t* yp) {
      if (plain_plane(pl, xp))
        plain.plane(xp, yp);
      else
        masked.plane(xp, yp);
    });
  } else {
    each([&](const uint8_t* xp, uint8_t* yp) {
      plain_plane(pl, xp) ? chunk_plane<T, KH, M, true>(pl, xp, yp)
                          : chunk_plane<T, KH, M, false>(pl, xp, yp);
    });
  }
}

template <class T>
void run(const Pool2dProblem& pr) {
  const TensorView &x = pr.x, &y = pr.y;
  const Window2d& w = pr.p.window;
  const T lowest = std::numeric_limits<T>::lowest();
  const auto low = static_cast<uint8_t>(lowest);
  const auto pad = static_cast<uint8_t>(pr.p.pad_value == PadValue::zero ? T(0) : lowest);
  Plan pl;
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
  pl.W = x.dim(3);
  pl.OH = y.dim(2);
  pl.OW = y.dim(3);
  pl.y_rs = y.stride(2);
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
  pl.pair = 2 * pl.OW <= 64;
  const bool images_dense = x.dim(0) == 1 || (x.stride(0) == x.dim(1) * x.stride(1) &&
                                              y.stride(0) == y.dim(1) * y.stride(1));
  pl.stacked = w.pad_top == 0 && pl.H == pl.OH * pl.sh && pl.kh <= pl.sh &&
               x.stride(1) == pl.H * pl.rs && y.stride(1) == pl.OH * pl.y_rs && images_dense;
  pl.pad = pad;
  pl.low = low;
  for (int j = 0; j < 64; ++j) {
    const int ow = static_cast<int>(pl.OW);
    // Pair: lanes [0, OW) from a's columns, [OW, 2 OW) from b's.
    const int col = pl.pair && j >= ow ? 64 + 2 * (j - ow) : 2 * j;
    pl.idx_even[j] = static_cast<uint8_t>(col & 127);
    pl.idx_odd[j] = static_cast<uint8_t>((col + 1) & 127);
    // Pair: (odd, pad) -> lane j takes odd lane j - 1, lanes 0 and OW the pad
    // (index 64). Chunks: (prev_odd, odd) -> lane 0 takes prev_odd's lane 63.
    pl.idx_shift[j] =
        static_cast<uint8_t>(pl.pair ? (j == 0 || j == ow ? 64 : j - 1) : (j == 0 ? 63 : 63 + j));
    pl.idx_down[j] = static_cast<uint8_t>((j + ow) & 63);
  }
  // Vectors: the pair path one (columns 0-63), else two per 64 outputs.
  const int64_t nseg = pl.pair ? 1 : 2 * ((pl.OW + 63) / 64);
  const int64_t last_col = 2 * (pl.OW - 1) + d_hi;  // the rightmost column any output reads
  for (int64_t k = 0; k < nseg; ++k) {
    Seg s;
    s.col = 64 * k;
    const int64_t on_row = pl.W - s.col;
    s.valid = lanes_below(on_row);
    s.exact = on_row >= 64;
    // Lanes [W, last_col] are read (pair: row oh + 1 reads row oh's columns).
    s.fill_read = std::max(pl.W, s.col) <= std::min(last_col, s.col + 63);
    for (int i = 0; i < 64; ++i) {
      const int64_t c = s.col + i;
      s.fill[i] = c < pl.W ? 0 : c < pl.W + w.pad_right ? pad : low;
    }
    pl.segs.push_back(s);
  }
  const int64_t C = x.dim(1);
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, pl.H * pl.W));
  using Fn = void (*)(const Plan&, int64_t, int64_t);
  // The race's windows at compile time: k2s2 (taps 2j, 2j + 1; two rows),
  // k3s2p1 (2j - 1 .. 2j + 1; three rows).
  const int m = (pl.tap_m1 ? kM1 : 0) | (pl.tap_0 ? k0 : 0) | (pl.tap_p1 ? kP1 : 0);
  const Fn kernel = w.kernel_h == 2 && m == (k0 | kP1)         ? planes<T, 2, k0 | kP1>
                    : w.kernel_h == 3 && m == (kM1 | k0 | kP1) ? planes<T, 3, kM1 | k0 | kP1>
                                                               : planes<T, 0, 0>;
  parallel_ranges(x.dim(0) * C, grain, [&](int64_t begin, int64_t end) { kernel(pl, begin, end); });
}

}  // namespace

void max_pool2d_x8_s2_avx512vbmi(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::s8)
    run<int8_t>(pr);
  else
    run<uint8_t>(pr);
}

}  // namespace npukit::cpu

#undef NPUKIT_X8S2V_INLINE

#include "ops/cpu/isa-end.inc"
#endif
