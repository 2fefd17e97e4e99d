// The GEMM form of the integer convolution, shared by every ISA: weights
// packed once into blocks of kQConvRows channels x K quads, per task an im2col
// tile of kTile output pixels as [K4][kTile][4] u8 (x' codes, x_zp' in the
// padding), one micro-kernel call per weight block, then a row store that
// removes the zero points and requantizes. The primed-code algebra is in
// qconv_problem.hpp. Outputs are written by exactly one task each, so results
// do not depend on the thread count.
#include <algorithm>
#include <cstring>

#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_dw_nhwc.hpp"
#include "ops/cpu/qconv_gemm.hpp"
#include "ops/cpu/qconv_nhwc.hpp"
#include "ops/quantized_common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace npukit {

namespace {

uint32_t u32(int64_t v) {
  return static_cast<uint32_t>(static_cast<uint64_t>(v));
}

}  // namespace

std::shared_ptr<const QConvPackedWeights> pack_qconv(const TensorView& w, const QuantParams& wq,
                                                     int64_t groups, bool pairs, DType x_dtype) {
  // Zero points are applied per call (they may be run-time inputs), except
  // in the depthwise channels-last form, which records the ones it used.
  auto pk = std::make_shared<QConvPackedWeights>();
  const int64_t OC = w.dim(0), ICg = w.dim(1), KH = w.dim(2), KW = w.dim(3), OCg = OC / groups;
  pk->pairs = pairs;
  pk->x_primed = !pairs && x_dtype == DType::s8;
  pk->w_dtype = w.dtype();
  pk->w_shape = w.shape();
  pk->groups = groups;
  pk->K = ICg * KH * KW;
  pk->K4 = (pk->K + 3) / 4;
  pk->blocks = (OCg + kQConvRows - 1) / kQConvRows;
  // k order: MLAS's NHWC im2col (kh, kw, ic) for the pair sums, whose
  // saturation depends on which products share a pair; (ic, kh, kw) otherwise.
  for (int64_t k = 0; k < pk->K; ++k) {
    int64_t ic, kh, kw;
    if (pairs) {
      ic = k % ICg, kw = k / ICg % KW, kh = k / (ICg * KW);
    } else {
      kw = k % KW, kh = k / KW % KH, ic = k / (KW * KH);
    }
    pk->k_ic.push_back(static_cast<int32_t>(ic));
    pk->k_kh.push_back(static_cast<int32_t>(kh));
    pk->k_kw.push_back(static_cast<int32_t>(kw));
  }
  const bool flip = !pairs && w.dtype() == DType::u8;  // w' = w - 128 as s8
  pk->w.assign(static_cast<size_t>(groups * pk->blocks * pk->K4 * kQConvRows * 4), 0);
  pk->w_sum.assign(static_cast<size_t>(OC), 0);
  for (int64_t o = 0; o < OC; ++o) {
    const int64_t g = o / OCg, b = (o % OCg) / kQConvRows, r = (o % OCg) % kQConvRows;
    int8_t* dst = pk->w.data() + (g * pk->blocks + b) * pk->K4 * kQConvRows * 4;
    int64_t sum = 0;
    // Contiguous OIHW weights in (ic, kh, kw) order: k is the offset in the filter.
    const bool plain = !pairs && w.is_contiguous();
    const auto* wb = static_cast<const uint8_t*>(w.raw()) + (plain ? o * pk->K : 0);
    for (int64_t k = 0; k < pk->K; ++k) {
      const size_t i = static_cast<size_t>(k);
      int32_t v =
          plain ? (w.dtype() == DType::s8 ? int32_t{static_cast<int8_t>(wb[k])} : int32_t{wb[k]})
                : detail::code_at(w.raw(), w.dtype(),
                                  o * w.stride(0) + pk->k_ic[i] * w.stride(1) +
                                      pk->k_kh[i] * w.stride(2) + pk->k_kw[i] * w.stride(3));
      if (flip) v -= 128;
      dst[((k / 4) * kQConvRows + r) * 4 + k % 4] = static_cast<int8_t>(v);
      sum += v;
    }
    pk->w_sum[static_cast<size_t>(o)] = static_cast<int32_t>(sum);  // |sum| <= 33025 * 128
  }
  // 1x1 too: channels-last x. Pairs: raw s8 codes, for an even channel count.
  if (groups == 1 && (!pairs || ICg % 2 == 0)) qconv::pack_nhwc(w, *pk);
  if (ICg == 1 && OCg == 1) pk->dw_nhwc = qconv::pack_dw_nhwc(w, wq);
  return pk;
}

bool qconv_packed_matches(const QConvPackedWeights& pk, const QConvProblem& p) {
  return pk.pairs == p.pairs && pk.x_primed == (!p.pairs && p.x.dtype() == DType::s8) &&
         pk.w_dtype == p.w.dtype() && pk.w_shape == p.w.shape() && pk.groups == p.groups;
}

const QConvPackedWeights& qconv_weights_for(const QConvProblem& p, bool nhwc,
                                            std::shared_ptr<const QConvPackedWeights>& own) {
  const QConvPackedWeights* pk = p.packed;
  if (pk != nullptr && qconv_packed_matches(*pk, p) && !(nhwc && pk->nhwc_w.empty())) return *pk;
  own = pack_qconv(p.w, p.wq, p.groups, p.pairs, p.x.dtype());
  return *own;
}

namespace qconv {

void gemm_exact_portable(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  const int64_t T = 16 * nvec;
  for (int64_t r = 0; r < kQConvRows; ++r)
    for (int64_t t = 0; t < T; ++t) {
      uint32_t s = 0;  // wrapping, as the SIMD lanes
      for (int64_t q = 0; q < K4; ++q) {
        const uint8_t* xv = x + (q * kTile + t) * 4;
        const int8_t* wv = w + (q * kQConvRows + r) * 4;
        for (int j = 0; j < 4; ++j) s += u32(int32_t{xv[j]} * int32_t{wv[j]});
      }
      c[r * kTile + t] = static_cast<int32_t>(s);
    }
}

void gemm_pairs_portable(const uint8_t* x, const int8_t* w, int64_t K4, int nvec, int32_t* c) {
  auto sat16 = [](int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; };
  const int64_t T = 16 * nvec;
  for (int64_t r = 0; r < kQConvRows; ++r)
    for (int64_t t = 0; t < T; ++t) {
      uint32_t s = 0;
      for (int64_t q = 0; q < K4; ++q) {
        const uint8_t* xv = x + (q * kTile + t) * 4;
        const int8_t* wv = w + (q * kQConvRows + r) * 4;
        s += u32(sat16(xv[0] * wv[0] + xv[1] * wv[1]));
        s += u32(sat16(xv[2] * wv[2] + xv[3] * wv[3]));
      }
      c[r * kTile + t] = static_cast<int32_t>(s);
    }
}

void store_portable(const int32_t* c, int64_t n, const RowStore& s, void* y) {
  const detail::CodeRange range = s.y_s8 ? detail::CodeRange{-128, 127} : detail::CodeRange{0, 255};
  for (int64_t t = 0; t < n; ++t) {
    uint32_t a = u32(c[t]) + u32(s.offset);
    if (s.w_zp != 0) a -= u32(s.w_zp) * u32(s.x_sum[t]);
    const int32_t acc = static_cast<int32_t>(a);
    if (!s.requantize) {
      static_cast<int32_t*>(y)[t] = acc;
      continue;
    }
    const int32_t v =
        detail::requantize_float(acc, s.multiplier, s.y_zp, range, Rounding::half_to_even);
    if (s.y_s8)
      static_cast<int8_t*>(y)[t] = static_cast<int8_t>(v);
    else
      static_cast<uint8_t*>(y)[t] = static_cast<uint8_t>(v);
  }
}

namespace {

// out[(q * kTile + t) * 4 + j] = rows[4q + j][t] for t < kTile.
void interleave4(const uint8_t* const* rows, int64_t K4, uint8_t* out) {
  for (int64_t q = 0; q < K4; ++q) {
    const uint8_t* r0 = rows[4 * q];
    const uint8_t* r1 = rows[4 * q + 1];
    const uint8_t* r2 = rows[4 * q + 2];
    const uint8_t* r3 = rows[4 * q + 3];
    uint8_t* o = out + q * kTile * 4;
#if defined(__SSE2__)
    for (int64_t t = 0; t < kTile; t += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + t));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + t));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r2 + t));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r3 + t));
      const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
      const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
      __m128i* dst = reinterpret_cast<__m128i*>(o + t * 4);
      _mm_storeu_si128(dst + 0, _mm_unpacklo_epi16(ab_lo, cd_lo));
      _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
      _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
      _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
    }
#else
    for (int64_t t = 0; t < kTile; ++t) {
      o[t * 4 + 0] = r0[t];
      o[t * 4 + 1] = r1[t];
      o[t * 4 + 2] = r2[t];
      o[t * 4 + 3] = r3[t];
    }
#endif
  }
}

// Per call: geometry and, per kernel column kw, the output columns whose tap
// lands in the input ([lo, hi), contiguous since a convolution has no zero insertion).
struct Geometry {
  int64_t N, C, H, W, OC, OCg, ICg, OH, OW, P, tiles;
  AxisTaps th, tw;
  std::vector<int64_t> ow_lo, ow_hi;
  uint8_t pad_code;  // x_zp'
  bool primed;       // x' = x ^ 0x80
  bool direct;       // 1x1, stride 1, no pad, plain rows: tile rows point into x
  // One output pixel per image whose im2col row is the image itself (x[n] in
  // k order, as a fully connected layer written as a convolution).
  bool image_rows;
  // Equal strides s (1 to 4): x' is copied once into planes with the padding
  // filled in (x_zp'), each split into s x s phase planes of Hp x Wp (phase
  // (a, b) holds the padded rows = a and columns = b modulo s), so that tap
  // (kh, kw) of output (oh, ow) is pixel (oh + kh*dh / s, ow + kw*dw / s) of
  // phase (kh*dh % s, kw*dw % s). The tiles then run over a grid of OH rows
  // of Wp pixels, and every tap's tile row is a plain pointer into a phase
  // plane. The grid's Wp - OW extra columns are computed and dropped.
  bool padded;
  int64_t s = 1, Hp = 0, Wp = 0, grid_p = 0, tiles_img = 0;
  const uint8_t* planes = nullptr;
};

// Calls f(t, n, pix, len) for each run of a tile's np pixels (from grid pixel
// gp0) that is contiguous in the output: split where one image ends and the
// next begins, or, on the padded grid, into output rows without the extra
// columns.
template <class F>
void for_each_output_run(const Geometry& G, int64_t img, int64_t gp0, int64_t np, F&& f) {
  for (int64_t t = 0; t < np;) {
    int64_t n, pix, len;
    if (G.padded) {
      const int64_t oh = (gp0 + t) / G.Wp, ow = (gp0 + t) % G.Wp;
      if (ow >= G.OW) {
        t += G.Wp - ow;
        continue;
      }
      n = img, pix = oh * G.OW + ow, len = std::min(np - t, G.OW - ow);
    } else {
      n = (gp0 + t) / G.P, pix = (gp0 + t) % G.P, len = std::min(np - t, G.P - pix);
    }
    f(t, n, pix, len);
    t += len;
  }
}

// Fills the phase planes (N * C * s * s of Hp x Wp, then slack) of G.padded.
void fill_planes(const QConvProblem& p, const Geometry& G, uint8_t* planes) {
  const Window2d& win = p.window;
  parallel_for(G.N * G.C, [&](int64_t nc) {
    const int64_t n = nc / G.C, c = nc % G.C;
    const int64_t plane = G.Hp * G.Wp;
    uint8_t* d = planes + nc * G.s * G.s * plane;
    std::memset(d, G.pad_code, static_cast<size_t>(G.s * G.s * plane));
    const uint8_t* src =
        static_cast<const uint8_t*>(p.x.raw()) + n * p.x.stride(0) + c * p.x.stride(1);
    const uint8_t flip = G.primed ? 0x80 : 0;
    for (int64_t h = 0; h < G.H; ++h) {
      const uint8_t* row_in = src + h * p.x.stride(2);
      const int64_t r = h + win.pad_top;
      uint8_t* rows = d + (r % G.s) * G.s * plane + (r / G.s) * G.Wp;  // phase (r % s, 0)
      if (G.s == 1 && p.x.stride(3) == 1) {
        uint8_t* row = rows + win.pad_left;
        std::memcpy(row, row_in, static_cast<size_t>(G.W));
        if (flip)
          for (int64_t w = 0; w < G.W; ++w) row[w] ^= 0x80;
        continue;
      }
      // Phase b holds padded columns qc * s + b (no division per element).
      const int64_t sW = p.x.stride(3);
      for (int64_t b = 0; b < G.s; ++b) {
        uint8_t* dst = rows + b * plane;
        int64_t qc = (win.pad_left - b + G.s - 1) / G.s;  // first with input column >= 0
        if (win.pad_left - b < 0) qc = 0;
        for (int64_t w = qc * G.s + b - win.pad_left; w < G.W; w += G.s, ++qc)
          dst[qc] = static_cast<uint8_t>(row_in[w * sW] ^ flip);
      }
    }
  });
}

// The tile when G.image_rows: pixel t's K codes are x[gp0 + t][0, K).
void image_rows_tile(const QConvProblem& p, const Geometry& G, int64_t K, int64_t K4, int64_t g,
                     int64_t gp0, int64_t np, bool want_sum, uint8_t* tile, int32_t* x_sum) {
  const uint8_t* x0 = static_cast<const uint8_t*>(p.x.raw()) + g * G.ICg * p.x.stride(1);
  const uint8_t flip = G.primed ? 0x80 : 0;
  // Zeros first (pixels past np, k past K), then each of the np pixels'
  // K codes (a classifier at batch 1 has one pixel of kTile).
  std::memset(tile, 0, static_cast<size_t>(K4 * kTile * 4));
  if (want_sum) std::fill(x_sum, x_sum + kTile, 0);
  for (int64_t t = 0; t < np; ++t) {
    const uint8_t* src = x0 + (gp0 + t) * p.x.stride(0);
    uint8_t* d = tile + t * 4;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t v = static_cast<uint8_t>(src[k] ^ flip);
      d[k / 4 * kTile * 4 + k % 4] = v;
      sum += v;
    }
    if (want_sum) x_sum[t] = sum;
  }
}

// One row of the im2col tile (kTile bytes) for tap k of group g; the tile's
// pixels run over (image, oh, ow) from the global pixel index gp0, so small
// images (a fully connected layer as a 1x1 convolution) share tiles.
const uint8_t* tile_row(const QConvProblem& p, const Geometry& G, const QConvPackedWeights& pk,
                        int64_t g, int64_t k, int64_t gp0, int64_t np, uint8_t* buf) {
  const size_t ki = static_cast<size_t>(k);
  const int64_t ic = pk.k_ic[ki], kh = pk.k_kh[ki], kw = pk.k_kw[ki];
  const uint8_t* x0 = static_cast<const uint8_t*>(p.x.raw()) + (g * G.ICg + ic) * p.x.stride(1);
  const int64_t n0 = gp0 / G.P, p0 = gp0 % G.P;
  if (G.direct && np == kTile && p0 + kTile <= G.P) return x0 + n0 * p.x.stride(0) + p0;
  const int64_t sH = p.x.stride(2), sW = p.x.stride(3), sw = p.window.stride_w;
  const int64_t iw_base = kw * p.window.dilation_w - p.window.pad_left;
  const int64_t lo = G.ow_lo[static_cast<size_t>(kw)], hi = G.ow_hi[static_cast<size_t>(kw)];
  int64_t t = 0;
  while (t < np) {
    const int64_t gp = gp0 + t, n = gp / G.P, pix = gp % G.P, oh = pix / G.OW, ow0 = pix % G.OW;
    const int64_t len = std::min(np - t, G.OW - ow0);
    uint8_t* d = buf + t;
    if (G.th.kind_at(oh, kh) != Tap::input) {
      std::memset(d, G.pad_code, static_cast<size_t>(len));
    } else {
      const uint8_t* src = x0 + n * p.x.stride(0) + G.th.index_at(oh, kh) * sH;
      const int64_t a = std::clamp(lo, ow0, ow0 + len), b = std::clamp(hi, a, ow0 + len);
      std::memset(d, G.pad_code, static_cast<size_t>(a - ow0));
      if (sw == 1 && sW == 1) {
        std::memcpy(d + (a - ow0), src + a + iw_base, static_cast<size_t>(b - a));
      } else if (sw == 2 && sW == 1) {
        int64_t ow = a;
#if defined(__SSE2__)
        // 16 columns from 32 bytes: keep the even bytes (never reading past the row).
        const __m128i even = _mm_set1_epi16(0x00FF);
        for (; ow + 16 <= b && ow * 2 + iw_base + 32 <= G.W; ow += 16) {
          const uint8_t* s0 = src + ow * 2 + iw_base;
          const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0));
          const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0 + 16));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (ow - ow0)),
                           _mm_packus_epi16(_mm_and_si128(v0, even), _mm_and_si128(v1, even)));
        }
#endif
        for (; ow < b; ++ow) d[ow - ow0] = src[ow * 2 + iw_base];
      } else {
        for (int64_t ow = a; ow < b; ++ow) d[ow - ow0] = src[(ow * sw + iw_base) * sW];
      }
      if (G.primed)
        for (int64_t ow = a; ow < b; ++ow) d[ow - ow0] ^= 0x80;
      std::memset(d + (b - ow0), G.pad_code, static_cast<size_t>(ow0 + len - b));
    }
    t += len;
  }
  std::memset(buf + np, 0, static_cast<size_t>(kTile - np));
  return buf;
}

struct Scratch {
  std::vector<uint8_t> rows, tile;
  std::vector<const uint8_t*> row_ptr;
  std::vector<int32_t> x_sum;
  alignas(64) int32_t c[kQConvRows * kTile];
  alignas(64) uint8_t codes[kQConvRows * kTile];  // fused codes not written in place
};

// The geometry of p with weights pk: sizes, taps, and which tile source
// applies (direct rows, image rows, phase planes or im2col rows).
Geometry make_geometry(const QConvProblem& p, const QConvPackedWeights& pk) {
  Geometry G;
  G.N = p.x.dim(0), G.C = p.x.dim(1), G.H = p.x.dim(2), G.W = p.x.dim(3);
  G.OC = p.w.dim(0), G.ICg = p.w.dim(1), G.OCg = G.OC / p.groups;
  G.OH = p.y.dim(2), G.OW = p.y.dim(3), G.P = G.OH * G.OW;
  G.tiles = (G.N * G.P + kTile - 1) / kTile;
  G.th = axis_taps(axis_h(p.window, G.H), G.OH);
  G.tw = axis_taps(axis_w(p.window, G.W), G.OW);
  const int64_t KW = p.w.dim(3);
  for (int64_t kw = 0; kw < KW; ++kw) {
    int64_t lo = G.OW, hi = 0;
    for (int64_t ow = 0; ow < G.OW; ++ow)
      if (G.tw.kind_at(ow, kw) == Tap::input) lo = std::min(lo, ow), hi = std::max(hi, ow + 1);
    G.ow_lo.push_back(lo);
    G.ow_hi.push_back(std::max(lo, hi));
  }
  G.primed = pk.x_primed;
  G.pad_code = static_cast<uint8_t>(p.x_zp + (G.primed ? 128 : 0));  // x_zp'
  const Window2d& win = p.window;
  G.direct = !G.primed && p.w.dim(2) == 1 && KW == 1 && win.stride_h == 1 && win.stride_w == 1 &&
             win.pad_top == 0 && win.pad_bottom == 0 && win.pad_left == 0 && win.pad_right == 0 &&
             p.x.stride(3) == 1 && p.x.stride(2) == G.W;
  G.image_rows = G.P == 1;
  for (int64_t k = 0; G.image_rows && k < pk.K; ++k) {
    const size_t i = static_cast<size_t>(k);
    const int64_t kh = pk.k_kh[i], kw = pk.k_kw[i];
    G.image_rows = G.th.kind_at(0, kh) == Tap::input && G.tw.kind_at(0, kw) == Tap::input &&
                   pk.k_ic[i] * p.x.stride(1) + G.th.index_at(0, kh) * p.x.stride(2) +
                           G.tw.index_at(0, kw) * p.x.stride(3) ==
                       k;
  }
  G.padded = !G.direct && !G.image_rows && win.stride_h == win.stride_w && win.stride_h <= 4;
  if (G.padded) {
    G.s = win.stride_h;
    G.Hp = (G.H + win.pad_top + win.pad_bottom + G.s - 1) / G.s;
    G.Wp = (G.W + win.pad_left + win.pad_right + G.s - 1) / G.s;
    G.grid_p = G.OH * G.Wp;
    G.tiles_img = (G.grid_p + kTile - 1) / kTile;
    G.tiles = G.N * G.tiles_img;
  }
  return G;
}

// G.padded: fills the phase planes (into `planes`, kept by the caller) and
// returns each tap's offset within its group's planes.
std::vector<int64_t> prepare_planes(const QConvProblem& p, const QConvPackedWeights& pk,
                                    Geometry& G, std::vector<uint8_t>& planes) {
  // Slack: a tile row starts at most ((KH-1)*dh/s + OH - 1) * Wp + (KW-1)*dw/s
  // + Wp - 1 into its phase plane, where (OH-1) + (KH-1)*dh/s <= Hp - 1, and
  // reads kTile bytes: up to Wp + kTile bytes past the plane.
  const int64_t plane_bytes = G.N * G.C * G.s * G.s * G.Hp * G.Wp;
  planes.resize(static_cast<size_t>(plane_bytes + G.Wp + 2 * kTile));
  std::memset(planes.data() + plane_bytes, 0, static_cast<size_t>(G.Wp + 2 * kTile));
  fill_planes(p, G, planes.data());
  G.planes = planes.data();
  // Each tap's phase plane and start within it, from its group's first plane.
  std::vector<int64_t> tap_offset(static_cast<size_t>(pk.K));
  for (int64_t k = 0; k < pk.K; ++k) {
    const size_t i = static_cast<size_t>(k);
    const int64_t dy = pk.k_kh[i] * p.window.dilation_h, dx = pk.k_kw[i] * p.window.dilation_w;
    tap_offset[i] =
        ((pk.k_ic[i] * G.s + dy % G.s) * G.s + dx % G.s) * G.Hp * G.Wp + dy / G.s * G.Wp + dx / G.s;
  }
  return tap_offset;
}

// x_sum[t] = sum over the first K rows of row_ptr of row[t] (for w_zp' != 0).
void sum_rows(const std::vector<const uint8_t*>& row_ptr, int64_t K, std::vector<int32_t>& x_sum) {
  x_sum.assign(static_cast<size_t>(kTile), 0);
  for (int64_t k = 0; k < K; ++k) {
    const uint8_t* r = row_ptr[static_cast<size_t>(k)];
    for (int64_t t = 0; t < kTile; ++t) x_sum[static_cast<size_t>(t)] += r[t];
  }
}

// The parallel part of run_gemm: task = (group, pixel tile, chunk of weight
// blocks); each builds its tile, then runs every weight block of its chunk.
struct GemmTasks {
  const QConvProblem& p;
  const Geometry& G;
  const QConvPackedWeights& pk;
  const QConvEpilogue& epi;
  GemmFn gemm;
  FusedFn fused;  // null: gemm, then `store` per row
  StoreFn store;
  const int64_t* tap_offset;  // G.padded
  int64_t chunks, per_chunk;

  void run(int64_t task) const {
    const int64_t chunk = task % chunks, rest = task / chunks;
    const int64_t tile = rest % G.tiles, g = rest / G.tiles;
    const int64_t b0 = chunk * per_chunk, b1 = std::min(pk.blocks, b0 + per_chunk);
    if (b0 >= b1) return;
    // Padded grid: tiles stay within one image; otherwise they run across images.
    const int64_t img = G.padded ? tile / G.tiles_img : 0;
    const int64_t gp0 = G.padded ? tile % G.tiles_img * kTile : tile * kTile;
    const int64_t np = std::min(kTile, (G.padded ? G.grid_p : G.N * G.P) - gp0);
    thread_local Scratch s;
    build_tile(g, img, gp0, np, s);
    for (int64_t b = b0; b < b1; ++b) {
      if (fused)
        fused_block(g, b, img, gp0, np, s);
      else
        block_then_store(g, b, img, gp0, np, s);
    }
  }

  // The im2col tile [K4][kTile][4] of (group g, pixels gp0 .. gp0 + np) in
  // s.tile, and s.x_sum when any w_zp' is non-zero.
  void build_tile(int64_t g, int64_t img, int64_t gp0, int64_t np, Scratch& s) const {
    const int64_t K = pk.K, K4 = pk.K4;
    s.rows.resize(static_cast<size_t>((K4 * 4 + 1) * kTile));
    s.tile.resize(static_cast<size_t>(K4 * kTile * 4));
    s.row_ptr.resize(static_cast<size_t>(K4 * 4));
    if (G.image_rows) {
      s.x_sum.resize(static_cast<size_t>(kTile));
      image_rows_tile(p, G, K, K4, g, gp0, np, epi.any_wzp, s.tile.data(), s.x_sum.data());
      return;
    }
    if (G.padded) {
      const uint8_t* group_planes =
          G.planes + (img * G.C + g * G.ICg) * G.s * G.s * G.Hp * G.Wp + gp0;
      uint8_t* zero_row = s.rows.data();
      std::memset(zero_row, 0, kTile);
      for (int64_t k = 0; k < K4 * 4; ++k)
        s.row_ptr[static_cast<size_t>(k)] = k < K ? group_planes + tap_offset[k] : zero_row;
    } else {
      uint8_t* zero_row = s.rows.data() + K4 * 4 * kTile;
      std::memset(zero_row, 0, kTile);
      const int64_t n0 = gp0 / G.P, p0 = gp0 % G.P;
      if (G.direct && np == kTile && p0 + kTile <= G.P) {
        // A 1x1 convolution's whole tile lies in one image: its rows are the
        // input channels' rows (tile_row's first case, without a call per tap).
        const uint8_t* x0 = static_cast<const uint8_t*>(p.x.raw()) + n0 * p.x.stride(0) + p0 +
                            g * G.ICg * p.x.stride(1);
        for (int64_t k = 0; k < K4 * 4; ++k)
          s.row_ptr[static_cast<size_t>(k)] =
              k < K ? x0 + pk.k_ic[static_cast<size_t>(k)] * p.x.stride(1) : zero_row;
      } else {
        for (int64_t k = 0; k < K4 * 4; ++k)
          s.row_ptr[static_cast<size_t>(k)] =
              k < K ? tile_row(p, G, pk, g, k, gp0, np, s.rows.data() + k * kTile) : zero_row;
      }
    }
    interleave4(s.row_ptr.data(), K4, s.tile.data());
    if (epi.any_wzp) sum_rows(s.row_ptr, K, s.x_sum);
  }

  // Weight block b with the requantizing store fused: a tile within one
  // image (not on the padded grid) is one run of contiguous outputs per
  // channel, written in place; otherwise the codes go to s.codes and are
  // copied out per output row or image.
  void fused_block(int64_t g, int64_t b, int64_t img, int64_t gp0, int64_t np, Scratch& s) const {
    const bool in_place = !G.padded && (gp0 % G.P) + np <= G.P;
    FusedStore fs;
    const size_t at = static_cast<size_t>((g * pk.blocks + b) * kQConvRows);
    fs.offset = epi.row_offset.data() + at, fs.w_zp = epi.row_wzp.data() + at;
    fs.multiplier = epi.row_mult.data() + at;
    fs.x_sum = epi.any_wzp ? s.x_sum.data() : nullptr;
    fs.y_zp = p.y_zp, fs.y_s8 = p.y.dtype() == DType::s8, fs.n = np;
    const int64_t n0 = gp0 / G.P, pix0 = gp0 % G.P;
    for (int64_t r = 0; r < kQConvRows; ++r) {
      const int64_t og = b * kQConvRows + r;
      fs.y[r] = s.codes + r * kTile;
      if (in_place && og < G.OCg)
        fs.y[r] = static_cast<uint8_t*>(p.y.raw()) + n0 * p.y.stride(0) +
                  (g * G.OCg + og) * p.y.stride(1) + pix0;
    }
    fused(s.tile.data(), pk.block(g, b), pk.K4, static_cast<int>((np + 15) / 16), fs);
    if (in_place) return;
    for (int64_t r = 0; r < kQConvRows && b * kQConvRows + r < G.OCg; ++r) {
      const int64_t o = g * G.OCg + b * kQConvRows + r;
      for_each_output_run(G, img, gp0, np, [&](int64_t t, int64_t n, int64_t pix, int64_t len) {
        std::memcpy(static_cast<uint8_t*>(p.y.raw()) + n * p.y.stride(0) + o * p.y.stride(1) + pix,
                    s.codes + r * kTile + t, static_cast<size_t>(len));
      });
    }
  }

  // Weight block b's int32 tile, then one row store per channel and output run.
  void block_then_store(int64_t g, int64_t b, int64_t img, int64_t gp0, int64_t np,
                        Scratch& s) const {
    gemm(s.tile.data(), pk.block(g, b), pk.K4, static_cast<int>((np + 15) / 16), s.c);
    const int64_t esize = dtype_size(p.y.dtype());
    for (int64_t r = 0; r < kQConvRows; ++r) {
      const int64_t og = b * kQConvRows + r;
      if (og >= G.OCg) break;
      const int64_t o = g * G.OCg + og;
      const size_t i = static_cast<size_t>(o);
      RowStore st;
      st.offset = epi.offset[i];
      st.w_zp = epi.wzp[i];
      st.requantize = p.requantize;
      st.multiplier = epi.mult[i];
      st.y_zp = p.y_zp;
      st.y_s8 = p.y.dtype() == DType::s8;
      for_each_output_run(G, img, gp0, np, [&](int64_t t, int64_t n, int64_t pix, int64_t len) {
        st.x_sum = epi.any_wzp ? s.x_sum.data() + t : nullptr;
        char* yp =
            static_cast<char*>(p.y.raw()) + esize * (n * p.y.stride(0) + o * p.y.stride(1) + pix);
        store(s.c + r * kTile + t, len, st, yp);
      });
    }
  }
};

}  // namespace

void run_gemm(const QConvProblem& p, const GemmIsa& isa) {
  std::shared_ptr<const QConvPackedWeights> own;
  const QConvPackedWeights& pk = qconv_weights_for(p, false, own);
  // Per output channel: w_zp', the constant part of the zero-point algebra,
  // the multiplier; built at load time when the parameters were constant.
  QConvEpilogue own_epi;
  const QConvEpilogue& epi = qconv_epilogue_for(p, pk, own_epi);
  Geometry G = make_geometry(p, pk);
  // Per calling thread and kept between calls: a first layer's planes exceed
  // malloc's mmap threshold, and a fresh mapping page-faults on every run.
  thread_local std::vector<uint8_t> planes;
  const std::vector<int64_t> tap_offset =
      G.padded ? prepare_planes(p, pk, G, planes) : std::vector<int64_t>();

  // Tasks: (group, pixel tile, channel chunk); chunks only when tiles are few.
  const int64_t base_tasks = p.groups * G.tiles;
  const int64_t want = 4 * std::max(1, num_threads());
  const int64_t chunks = std::clamp((want + base_tasks - 1) / base_tasks, int64_t{1}, pk.blocks);
  const GemmTasks tasks{p, G, pk, epi, p.pairs ? isa.pairs : isa.exact,
                        // The fused epilogue reads kQConvRows values per weight block (row_*).
                        !p.requantize ? nullptr
                        : p.pairs     ? isa.fused_pairs
                                      : isa.fused_exact,
                        isa.store, tap_offset.data(), chunks, (pk.blocks + chunks - 1) / chunks};
  parallel_for(base_tasks * chunks, [&](int64_t task) { tasks.run(task); });
}

}  // namespace qconv
}  // namespace npukit
