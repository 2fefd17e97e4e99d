// The channels-last integer convolution (qconv_nhwc.hpp): packing, the
// padded NHWC copy of x', the task split, the NCHW transpose of the codes,
// and the portable micro-kernel. Every output is computed by exactly one
// task, so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "npukit/kernels.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_nhwc.hpp"
#include "ops/quantized_common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace npukit::qconv {

namespace {

// dst[i][j] = src[j * src_stride + i] ^ flip for i, j < 16 (bytes).
void transpose16(const uint8_t* src, int64_t src_stride, uint8_t* const* dst, uint8_t flip) {
#if defined(__SSE2__)
  __m128i r[16], t[16];
  for (int j = 0; j < 16; ++j)
    r[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j * src_stride));
  // Four rounds of interleaving pairs of rows: bytes, words, dwords, qwords.
  for (int j = 0; j < 8; ++j) {
    t[2 * j] = _mm_unpacklo_epi8(r[2 * j], r[2 * j + 1]);
    t[2 * j + 1] = _mm_unpackhi_epi8(r[2 * j], r[2 * j + 1]);
  }
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 2; ++k) {
      r[4 * j + k] = _mm_unpacklo_epi16(t[4 * j + k], t[4 * j + 2 + k]);
      r[4 * j + 2 + k] = _mm_unpackhi_epi16(t[4 * j + k], t[4 * j + 2 + k]);
    }
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < 4; ++k) {
      t[8 * j + k] = _mm_unpacklo_epi32(r[8 * j + k], r[8 * j + 4 + k]);
      t[8 * j + 4 + k] = _mm_unpackhi_epi32(r[8 * j + k], r[8 * j + 4 + k]);
    }
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm_unpacklo_epi64(t[k], t[8 + k]);
    r[8 + k] = _mm_unpackhi_epi64(t[k], t[8 + k]);
  }
  // r[m] now holds column i(m) of src; i(m) undoes the rounds' interleaving.
  static constexpr int kColumn[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  for (int m = 0; m < 16; ++m)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[kColumn[m]]), _mm_xor_si128(r[m], f));
#else
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) dst[i][j] = src[j * src_stride + i] ^ flip;
#endif
}

int64_t quads(int64_t c) {
  return (c + 3) / 4;
}
int64_t oc_blocks(int64_t oc) {
  return (oc + kNhwcOcBlock - 1) / kNhwcOcBlock;
}
uint32_t u32(int64_t v) {
  return static_cast<uint32_t>(static_cast<uint64_t>(v));
}

// A first layer's 1-4 channels (planes sC apart, unit column step) as one u32
// per pixel: channel c in byte c, 0 in the pad channel. Byte stores of
// every lane, so that the compiler vectorizes the interleave.
void pixels_of_planes4(const uint8_t* src, int64_t sC, int64_t C, int64_t W, uint8_t flip,
                       uint8_t* dst) {
  const uint8_t* s1 = src + (C > 1 ? sC : 0);
  const uint8_t* s2 = src + (C > 2 ? 2 * sC : 0);
  const uint8_t* s3 = src + (C > 3 ? 3 * sC : 0);
  const uint8_t m1 = C > 1 ? 0xff : 0, m2 = C > 2 ? 0xff : 0, m3 = C > 3 ? 0xff : 0;
  for (int64_t w = 0; w < W; ++w) {
    dst[4 * w] = src[w] ^ flip;
    dst[4 * w + 1] = (s1[w] ^ flip) & m1;
    dst[4 * w + 2] = (s2[w] ^ flip) & m2;
    dst[4 * w + 3] = (s3[w] ^ flip) & m3;
  }
}

}  // namespace

void pack_nhwc(const TensorView& w, QConvPackedWeights& pk) {
  const int64_t OC = w.dim(0), C = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const int64_t C4 = quads(C), taps = KH * KW, OB = oc_blocks(OC);
  pk.nhwc_w.resize(static_cast<size_t>(OB * taps * C4 * kNhwcOcBlock * 4));
  const uint8_t flip = w.dtype() == DType::u8 ? 0x80 : 0;  // u8 w - 128 as s8 bits
  const auto* base = static_cast<const uint8_t*>(w.raw());
  // In the packed order (writes in sequence): [ob][tap][quad][lane][j], 0
  // past OC and C.
  int8_t* d = pk.nhwc_w.data();
  for (int64_t ob = 0; ob < OB; ++ob)
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t tap_at = t / KW * w.stride(2) + t % KW * w.stride(3);
      for (int64_t q = 0; q < C4; ++q)
        for (int64_t lane = 0; lane < kNhwcOcBlock; ++lane)
          for (int64_t j = 0; j < 4; ++j, ++d) {
            const int64_t o = ob * kNhwcOcBlock + lane, c = q * 4 + j;
            *d = o < OC && c < C
                     ? static_cast<int8_t>(base[o * w.stride(0) + c * w.stride(1) + tap_at] ^ flip)
                     : int8_t{0};
          }
    }
  // Hosts (or caps) whose channels-last GEMM is the AVX2 one.
  if (!pk.pairs && kernel_allowed(Isa::avx2, false) && !kernel_allowed(Isa::avx512_vnni, false))
    widen_nhwc(pk.nhwc_w, pk.nhwc_w16);
}

void widen_nhwc(const std::vector<int8_t>& w, std::vector<int16_t>& w16) {
  w16.resize(w.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(w.data());  // s8 codes as their bits
  const int64_t chunk = kNhwcOcBlock * 4;                          // one quad of a block
  for (int64_t at = 0; at < static_cast<int64_t>(w.size()); at += chunk)
    for (int64_t lane = 0; lane < kNhwcOcBlock; ++lane)
      for (int64_t j = 0; j < 4; ++j) {
        const int b = bytes[at + lane * 4 + j];
        w16[static_cast<size_t>(at + j % 2 * kNhwcOcBlock * 2 + lane * 2 + j / 2)] =
            static_cast<int16_t>(b >= 128 ? b - 256 : b);  // sign-extended
      }
}

namespace {

// nhwc_declines but for the accumulation.
const char* declines_any_accumulation(const QConvProblem& p) {
  if (p.depthwise) return "depthwise (its own kernels)";
  if (p.groups != 1) return "grouped";
  if (!p.requantize) return "int32 outputs (ConvInteger)";
  // With x and y NCHW, 1x1 and the first layer's 3 channels go to the NCHW
  // GEMM (it reads 1x1 x without a copy; quad padding and byte-wise copies
  // cost more than its phase planes); a channels-last operand comes here.
  const bool nchw = !is_channels_last(p.x) && !is_channels_last(p.y);
  if (p.w.dim(2) * p.w.dim(3) == 1 && nchw) return "1x1 on NCHW x and y";
  if (p.x.dim(1) < 16 && nchw) return "fewer than 16 input channels on NCHW x and y";
  if (!weights_symmetric(p)) return "a weight zero point is not 0 (s8) or 128 (u8)";
  const Window2d& w = p.window;
  if (w.pad_top < 0 || w.pad_bottom < 0 || w.pad_left < 0 || w.pad_right < 0)
    return "negative pads";
  if (!is_channels_last(p.y) && (p.y.stride(3) != 1 || p.y.stride(2) != p.y.dim(3)))
    return "output rows are not contiguous and y is not channels-last";
  if (p.rounding != Rounding::half_to_even) return "rounding is not half_to_even";
  if (!qconv_multipliers_finite(p)) return "a requantization multiplier is not finite";
  return nullptr;
}

}  // namespace

const char* nhwc_declines(const QConvProblem& p) {
  return p.pairs ? "int16-pair accumulation" : declines_any_accumulation(p);
}

const char* nhwc_declines_channels_last(const QConvProblem& p) {
  if (!is_channels_last(p.x) && !is_channels_last(p.y)) return "NCHW x and y (the NCHW GEMM's)";
  return nhwc_declines(p);
}

const char* nhwc_pairs_declines(const QConvProblem& p) {
  if (!p.pairs) return "exact accumulation";
  if (!is_channels_last(p.x) && !is_channels_last(p.y)) return "NCHW x and y (the NCHW GEMM's)";
  if (p.x.dim(1) % 2 != 0) return "odd input channel count (pairs would span two taps)";
  return declines_any_accumulation(p);
}

void nhwc_block_portable(const NhwcBlock& b, int R) {
  const detail::CodeRange range = b.y_s8 ? detail::CodeRange{-128, 127} : detail::CodeRange{0, 255};
  for (int r = 0; r < R; ++r)
    for (int64_t o = 0; o < b.lanes; ++o) {
      uint32_t s = 0;  // wrapping, as the SIMD lanes (the true sum fits int32)
      for (int64_t t = 0; t < b.taps; ++t) {
        const uint8_t* x = b.px[r] + b.tap_off[t];
        const int8_t* w = b.w + (t * b.C4 * kNhwcOcBlock + o) * 4;
        for (int64_t q = 0; q < b.C4; ++q)
          for (int j = 0; j < 4; ++j)
            s += u32(int32_t{x[q * 4 + j]} * int32_t{w[q * kNhwcOcBlock * 4 + j]});
      }
      const int32_t acc = static_cast<int32_t>(s + u32(b.offset[o]));
      const int32_t v =
          detail::requantize_float(acc, b.multiplier[o], b.y_zp, range, Rounding::half_to_even);
      b.y[r * b.y_stride + o] = static_cast<uint8_t>(v);  // s8 codes as their bits
    }
}

namespace {

// The sizes run_gemm_nhwc's steps share.
struct NhwcShape {
  int64_t N, C, H, W, OC, KH, KW, OH, OW, P;
  int64_t C4, Cp, OB, taps, Hp, Wp;  // channel quads and padded channels, oc blocks, padded map
  explicit NhwcShape(const QConvProblem& p)
      : N(p.x.dim(0)),
        C(p.x.dim(1)),
        H(p.x.dim(2)),
        W(p.x.dim(3)),
        OC(p.w.dim(0)),
        KH(p.w.dim(2)),
        KW(p.w.dim(3)),
        OH(p.y.dim(2)),
        OW(p.y.dim(3)),
        P(OH * OW),
        C4(quads(C)),
        Cp(C4 * 4),
        OB(oc_blocks(OC)),
        taps(KH * KW),
        Hp(H + p.window.pad_top + p.window.pad_bottom),
        Wp(W + p.window.pad_left + p.window.pad_right) {}
};

// The padded NHWC copy of x' (u8; s8 codes flipped), x_zp' in the padding (a
// padding tap then contributes (x_zp' - x_zp') * w' = 0 to the sum).
class PaddedInput {
 public:
  PaddedInput(const QConvProblem& p, const NhwcShape& S, uint8_t* xw)
      : p_(p),
        S_(S),
        xw_(xw),
        flip_(p.x.dtype() == DType::s8 ? 0x80 : 0),
        xz_(static_cast<uint8_t>(p.x_zp + (flip_ ? 128 : 0))),
        x_cl_(is_channels_last(p.x) && S.C > 1),
        sC_(p.x.stride(1)),
        sH_(p.x.stride(2)),
        sW_(p.x.stride(3)),
        C16_(sW_ == 1 ? S.C / 16 * 16 : 0),
        flat_(!x_cl_ && sW_ == 1 && sH_ == S.W && S.W < 16) {}

  void fill() const {
    parallel_for(S_.N * S_.Hp, [&](int64_t nh) { row(nh); });
    if (flat_) {
      const int64_t groups = (S_.H * S_.W + 15) / 16;
      parallel_for(S_.N * groups, [&](int64_t task) { flat_pixels(task / groups, task % groups); });
    }
  }

 private:
  // Padded row nh (image n, row hp): borders and channel padding, then the
  // interior unless flat_ (flat_pixels fills it).
  void row(int64_t nh) const {
    const Window2d& win = p_.window;
    const int64_t Cp = S_.Cp, W = S_.W, C = S_.C;
    const int64_t n = nh / S_.Hp, h = nh % S_.Hp - win.pad_top;
    uint8_t* row = xw_ + nh * S_.Wp * Cp;
    if (h < 0 || h >= S_.H) {
      std::memset(row, xz_, static_cast<size_t>(S_.Wp * Cp));
      return;
    }
    std::memset(row, xz_, static_cast<size_t>(win.pad_left * Cp));
    std::memset(row + (win.pad_left + W) * Cp, xz_, static_cast<size_t>(win.pad_right * Cp));
    uint8_t* dst = row + win.pad_left * Cp;
    const auto* src = static_cast<const uint8_t*>(p_.x.raw()) + n * p_.x.stride(0) + h * sH_;
    if (Cp == 4 && sW_ == 1 && !x_cl_ && !flat_)  // a first layer's 3-4 channels
      return pixels_of_planes4(src, sC_, C, W, flip_, dst);
    for (int64_t c = C; c < Cp; ++c)  // channel padding meets zero weights
      for (int64_t w = 0; w < W; ++w) dst[w * Cp + c] = 0;
    if (flat_) return;
    if (x_cl_) {  // a pixel's channels are contiguous: plain copies
      for (int64_t w = 0; w < W; ++w) {
        if (flip_ == 0)
          std::memcpy(dst + w * Cp, src + w * sW_, static_cast<size_t>(C));
        else
          for (int64_t c = 0; c < C; ++c) dst[w * Cp + c] = src[w * sW_ + c] ^ flip_;
      }
      return;
    }
    nchw_row(src, dst);
  }

  // One NCHW row into padded pixels: 16 x 16 blocks of (channel, column), then the tails.
  void nchw_row(const uint8_t* src, uint8_t* dst) const {
    const int64_t Cp = S_.Cp, W = S_.W, C = S_.C;
    const int64_t W16 = W / 16 * 16;
    uint8_t* to[16];
    for (int64_t w = 0; w < W16; w += 16) {
      for (int i = 0; i < 16; ++i) to[i] = dst + (w + i) * Cp;
      for (int64_t c = 0; c < C16_; c += 16) {
        transpose16(src + c * sC_ + w, sC_, to, flip_);
        for (int i = 0; i < 16; ++i) to[i] += 16;
      }
    }
    // The rest byte by byte, pixel-major (writes in sequence): channels past
    // the 16-channel blocks on every column, all channels past W16.
    for (int64_t w = 0; w < W; ++w) {
      uint8_t* d = dst + w * Cp;
      const uint8_t* s = src + w * sW_;
      for (int64_t c = w < W16 ? C16_ : 0; c < C; ++c) d[c] = s[c * sC_] ^ flip_;
    }
  }

  // Maps narrower than 16 columns (7x7, 14x14) with contiguous planes take
  // their 16 x 16 blocks over (channel, pixel of the flattened plane): image
  // n's pixels 16 * group .. + 16.
  void flat_pixels(int64_t n, int64_t group) const {
    const Window2d& win = p_.window;
    const int64_t f0 = group * 16, np = std::min<int64_t>(16, S_.H * S_.W - f0);
    const auto* src = static_cast<const uint8_t*>(p_.x.raw()) + n * p_.x.stride(0) + f0;
    uint8_t* to[16];
    for (int64_t i = 0; i < np; ++i) {
      const int64_t h = (f0 + i) / S_.W, w = (f0 + i) % S_.W;
      to[i] = xw_ + ((n * S_.Hp + h + win.pad_top) * S_.Wp + w + win.pad_left) * S_.Cp;
    }
    const int64_t cb = np == 16 ? C16_ : 0;  // whole blocks of 16 pixels only
    for (int64_t c = 0; c < cb; c += 16) {
      uint8_t* at[16];
      for (int i = 0; i < 16; ++i) at[i] = to[i] + c;
      transpose16(src + c * sC_, sC_, at, flip_);
    }
    for (int64_t c = cb; c < S_.C; ++c)
      for (int64_t i = 0; i < np; ++i) to[i][c] = src[c * sC_ + i] ^ flip_;
  }

  const QConvProblem& p_;
  const NhwcShape& S_;
  uint8_t* xw_;
  uint8_t flip_, xz_;
  bool x_cl_;
  int64_t sC_, sH_, sW_, C16_;
  bool flat_;
};

// What compute_codes reads besides the shape.
struct NhwcCodes {
  NhwcBlock proto;  // the fields common to every block
  const int8_t* w;
  const int16_t* w16;  // null: fn reads w
  const int32_t* offset;
  const float* multiplier;
  const uint8_t* x;  // padded x' (or x in place), images x_img bytes apart
  int64_t x_img;
  uint8_t* y;  // codes, pixel-major, images y_img bytes apart
  int64_t y_img;
  bool y_cl;  // y is the output itself (store OC lanes of the last block)
};

// Every (image, oc block, pixel block) through fn.
void compute_codes(const NhwcShape& S, const Window2d& win, const NhwcCodes& c, NhwcFn fn) {
  // Tasks: near-equal ranges of the (image, oc block, pixel block) sequence,
  // one per 8 blocks rounded up to a whole number per thread, at most 8 per
  // thread (one per chunk of the pool). Runs of 8 blocks per oc block left
  // 7x7 maps runs of 8 + 1 blocks and 14x14 maps five runs, so a second
  // thread waited on the first. Each pixel block is computed alone, so the
  // ranges do not change any result.
  const int64_t PB = (S.P + kNhwcPixels - 1) / kNhwcPixels;
  const int64_t total = S.N * S.OB * PB, threads = std::max(1, num_threads());
  const int64_t tasks = std::max<int64_t>(
      1,
      std::min(total, std::min(8 * threads, ((total + 7) / 8 + threads - 1) / threads * threads)));
  const int64_t wblock = S.taps * S.C4 * kNhwcOcBlock * 4;
  const int64_t step_w = win.stride_w * S.Cp, step_h = win.stride_h * S.Wp * S.Cp;
  const int64_t ys = c.proto.y_stride;
  // The first total % tasks ranges take one block more: threads taking
  // ranges in turn then end together (alternating sizes left one thread a
  // block behind at every turn).
  const int64_t share = total / tasks, longer = total % tasks;
  const auto begin_of = [&](int64_t t) { return t * share + std::min(t, longer); };
  parallel_for(tasks, [&](int64_t task) {
    const int64_t end = begin_of(task + 1);
    NhwcBlock b = c.proto;
    // One oc block's pixel blocks [pb0, pb1) at a time.
    for (int64_t at = begin_of(task); at < end;) {
      const int64_t pb0 = at % PB, ob = at / PB % S.OB, n = at / PB / S.OB;
      const int64_t pb1 = std::min(PB, pb0 + (end - at));
      at += pb1 - pb0;
      b.w = c.w + ob * wblock;
      if (c.w16) b.w16 = c.w16 + ob * wblock;
      b.offset = c.offset + ob * kNhwcOcBlock;
      b.multiplier = c.multiplier + ob * kNhwcOcBlock;
      // Channels past OC are neither stored nor transposed: not computed (an
      // 8-channel layer into NCHW y ran 4x the passes).
      b.lanes = static_cast<int>(std::min(kNhwcOcBlock, S.OC - ob * kNhwcOcBlock));
      // The output pixel (oh, ow) walks in raster order (no division per pixel).
      int64_t oh = pb0 * kNhwcPixels / S.OW, ow = pb0 * kNhwcPixels % S.OW;
      for (int64_t pb = pb0; pb < pb1; ++pb) {
        const int64_t pix0 = pb * kNhwcPixels;
        const int R = static_cast<int>(std::min<int64_t>(kNhwcPixels, S.P - pix0));
        for (int r = 0; r < R; ++r) {
          b.px[r] = c.x + n * c.x_img + oh * step_h + ow * step_w;
          if (++ow == S.OW) ow = 0, ++oh;
        }
        b.y = c.y + n * c.y_img + pix0 * ys + ob * kNhwcOcBlock;
        fn(b, R);
      }
    }
  });
}

// The NHWC codes (pixel-major, ys bytes per pixel) into NCHW y: 16 x 16
// (channel, pixel) blocks transposed at a time, the last pixels one byte at a time.
void transpose_codes(const QConvProblem& p, const NhwcShape& S, const uint8_t* yp, int64_t ys) {
  const int64_t OC = S.OC, P = S.P;
  const int64_t OB16 = (OC + 15) / 16, P16 = P / 16 * 16;
  parallel_for(S.N * OB16, [&](int64_t task) {
    const int64_t n = task / OB16, o0 = task % OB16 * 16, o1 = std::min(OC, o0 + 16);
    auto* dst = static_cast<uint8_t*>(p.y.raw()) + n * p.y.stride(0);
    const uint8_t* src = yp + n * P * ys;
    const int64_t sO = p.y.stride(1);
    // A last group of fewer than 16 channels is transposed as 16 (the staging
    // row holds whole 64-channel blocks), its rows past OC into scratch.
    uint8_t* to[16];
    uint8_t scratch[16][16];
    for (int64_t i = 0; i < P16; i += 16) {
      for (int k = 0; k < 16; ++k) to[k] = o0 + k < o1 ? dst + (o0 + k) * sO + i : scratch[k];
      transpose16(src + i * ys + o0, ys, to, 0);
    }
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = P16; i < P; ++i) dst[o * sO + i] = src[i * ys + o];
  });
}

// Per channel, padded to whole blocks: the constant part of the zero-point
// algebra (here w_zp' = 0) and the multiplier, as run_gemm's: the pack's
// epilogue when it matches, else only these two fields of `own` (a whole
// epilogue per call cost ~3 us more on a 7x7 map with 960 channels).
const QConvEpilogue& offsets_and_multipliers(const QConvProblem& p, const QConvPackedWeights& pk,
                                             QConvEpilogue& own) {
  if (const QConvEpilogue* e = qconv_packed_epilogue(&pk, p)) return *e;
  const int64_t OC = p.w.dim(0), padded = oc_blocks(OC) * kNhwcOcBlock;
  const int32_t xz = p.x_zp + (p.x.dtype() == DType::s8 ? 128 : 0);  // x_zp'
  own.offset.assign(static_cast<size_t>(padded), 0);
  own.mult.assign(static_cast<size_t>(padded), 1.0f);
  for (int64_t o = 0; o < OC; ++o) {
    const size_t i = static_cast<size_t>(o);
    const int64_t b =
        p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[o * p.bias.stride(0)] : 0;
    own.offset[i] = static_cast<int32_t>(u32(b) - u32(xz) * u32(pk.w_sum[i]));
    own.mult[i] = p.multiplier(o);
  }
  return own;
}

}  // namespace

void run_gemm_nhwc(const QConvProblem& p, NhwcFn fn, bool int16_weights) {
  const NhwcShape S(p);
  const Window2d& win = p.window;
  std::shared_ptr<const QConvPackedWeights> own;
  const QConvPackedWeights& pk = qconv_weights_for(p, true, own);
  std::vector<int16_t> w16_here;  // a pack made before a cap changed, or on a VNNI host
  const int16_t* w16 = pk.nhwc_w16.empty() ? nullptr : pk.nhwc_w16.data();
  if (int16_weights && w16 == nullptr) {
    widen_nhwc(pk.nhwc_w, w16_here);
    w16 = w16_here.data();
  }
  QConvEpilogue own_epi;
  const QConvEpilogue& epi = offsets_and_multipliers(p, pk, own_epi);

  // x': channels-last u8 x without padding is read where it is (C % 4 == 0:
  // no quad padding), else copied.
  const bool in_place = is_channels_last(p.x) && S.C > 1 && p.x.dtype() == DType::u8 &&
                        S.C == S.Cp && S.Hp == S.H && S.Wp == S.W;
  const int64_t img = in_place ? p.x.stride(0) : S.Hp * S.Wp * S.Cp;  // bytes per image
  thread_local std::vector<uint8_t> xn;  // per calling thread: runs may overlap
  if (!in_place) {
    xn.resize(static_cast<size_t>(S.N * S.Hp * S.Wp * S.Cp));
    PaddedInput(p, S, xn.data()).fill();
  }
  const uint8_t* xp = in_place ? static_cast<const uint8_t*>(p.x.raw()) : xn.data();

  std::vector<int64_t> tap_off(static_cast<size_t>(S.taps));
  for (int64_t kh = 0; kh < S.KH; ++kh)
    for (int64_t kw = 0; kw < S.KW; ++kw)
      tap_off[static_cast<size_t>(kh * S.KW + kw)] =
          (kh * win.dilation_h * S.Wp + kw * win.dilation_w) * S.Cp;

  // Codes in NHWC (pixel-major, OB * 64 per pixel), then transposed into y;
  // straight into a channels-last y.
  const bool y_cl = is_channels_last(p.y) && S.OC > 1;
  const int64_t ys = y_cl ? S.OC : S.OB * kNhwcOcBlock;
  const int64_t y_img = y_cl ? p.y.stride(0) : S.P * ys;
  thread_local std::vector<uint8_t> yn;
  if (!y_cl) yn.resize(static_cast<size_t>(S.N * S.P * ys));
  uint8_t* yp = y_cl ? static_cast<uint8_t*>(p.y.raw()) : yn.data();
  NhwcCodes c{};
  c.proto.tap_off = tap_off.data();
  c.proto.taps = S.taps, c.proto.C4 = S.C4;
  c.proto.y_zp = p.y_zp, c.proto.y_s8 = p.y.dtype() == DType::s8;
  c.proto.y_stride = ys;
  c.w = pk.nhwc_w.data(), c.w16 = int16_weights ? w16 : nullptr;
  c.offset = epi.offset.data(), c.multiplier = epi.mult.data();
  c.x = xp, c.x_img = img, c.y = yp, c.y_img = y_img, c.y_cl = y_cl;
  compute_codes(S, win, c, fn);
  if (!y_cl) transpose_codes(p, S, yp, ys);
}

}  // namespace npukit::qconv
