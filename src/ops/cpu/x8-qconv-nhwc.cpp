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
  if (kernel_allowed(Isa::avx2, false) && !kernel_allowed(Isa::avx512_vnni, false))
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
        w16[static_cast<size_t>(at + j / 2 * kNhwcOcBlock * 2 + lane * 2 + j % 2)] =
            static_cast<int16_t>(b >= 128 ? b - 256 : b);  // sign-extended
      }
}

const char* nhwc_declines(const QConvProblem& p) {
  if (p.depthwise) return "depthwise (its own kernels)";
  if (p.groups != 1) return "grouped";
  if (p.pairs) return "int16-pair accumulation";
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

const char* nhwc_declines_channels_last(const QConvProblem& p) {
  if (!is_channels_last(p.x) && !is_channels_last(p.y)) return "NCHW x and y (the NCHW GEMM's)";
  return nhwc_declines(p);
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

void run_gemm_nhwc(const QConvProblem& p, NhwcFn fn, bool int16_weights) {
  const int64_t N = p.x.dim(0), C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const int64_t OC = p.w.dim(0), KH = p.w.dim(2), KW = p.w.dim(3);
  const int64_t OH = p.y.dim(2), OW = p.y.dim(3), P = OH * OW;
  const Window2d& win = p.window;
  const int64_t C4 = quads(C), Cp = C4 * 4, OB = oc_blocks(OC), taps = KH * KW;
  const int64_t Hp = H + win.pad_top + win.pad_bottom, Wp = W + win.pad_left + win.pad_right;

  // Weights: the runner's pack, else one made here.
  std::shared_ptr<const QConvPackedWeights> own;
  const QConvPackedWeights* pk = p.packed;
  if (pk == nullptr || !qconv_packed_matches(*pk, p) || pk->nhwc_w.empty()) {
    own = pack_qconv(p.w, p.wq, p.groups, false, p.x.dtype());
    pk = own.get();
  }
  std::vector<int16_t> w16_here;  // a pack made before a cap changed, or on a VNNI host
  const int16_t* w16 = pk->nhwc_w16.empty() ? nullptr : pk->nhwc_w16.data();
  if (int16_weights && w16 == nullptr) {
    widen_nhwc(pk->nhwc_w, w16_here);
    w16 = w16_here.data();
  }

  // x' (u8; s8 codes flipped) in padded NHWC, x_zp' in the padding (a
  // padding tap then contributes (x_zp' - x_zp') * w' = 0 to the sum).
  const uint8_t flip = p.x.dtype() == DType::s8 ? 0x80 : 0;
  const int32_t xz = p.x_zp + (flip ? 128 : 0);
  const bool x_cl = is_channels_last(p.x) && C > 1, y_cl = is_channels_last(p.y) && OC > 1;
  // Channels-last u8 x without padding is read where it is (C % 4 == 0: no quad padding).
  const bool in_place = x_cl && flip == 0 && C == Cp && Hp == H && Wp == W;
  const int64_t img = in_place ? p.x.stride(0) : Hp * Wp * Cp;  // bytes per image
  thread_local std::vector<uint8_t> xn;  // per calling thread: runs may overlap
  if (!in_place) xn.resize(static_cast<size_t>(N * Hp * Wp * Cp));
  uint8_t* xw = xn.data();  // (the workers' own thread_local copies are other vectors)
  const uint8_t* xp = in_place ? static_cast<const uint8_t*>(p.x.raw()) : xw;
  const int64_t sC = p.x.stride(1), sH = p.x.stride(2), sW = p.x.stride(3);
  const int64_t C16 = sW == 1 ? C / 16 * 16 : 0;
  // Maps narrower than 16 columns (7x7, 14x14) with contiguous planes take
  // their 16 x 16 blocks over (channel, pixel of the flattened plane).
  const bool flat = !x_cl && sW == 1 && sH == W && W < 16;
  if (!in_place)
    parallel_for(N * Hp, [&](int64_t nh) {
      const int64_t n = nh / Hp, hp = nh % Hp, h = hp - win.pad_top;
      uint8_t* row = xw + nh * Wp * Cp;
      if (h < 0 || h >= H) {
        std::memset(row, xz, static_cast<size_t>(Wp * Cp));
        return;
      }
      std::memset(row, xz, static_cast<size_t>(win.pad_left * Cp));
      std::memset(row + (win.pad_left + W) * Cp, xz, static_cast<size_t>(win.pad_right * Cp));
      uint8_t* dst = row + win.pad_left * Cp;
      const auto* src = static_cast<const uint8_t*>(p.x.raw()) + n * p.x.stride(0) + h * sH;
      if (Cp == 4 && sW == 1 && !x_cl && !flat)  // a first layer's 3-4 channels
        return pixels_of_planes4(src, sC, C, W, flip, dst);
      for (int64_t c = C; c < Cp; ++c)  // channel padding meets zero weights
        for (int64_t w = 0; w < W; ++w) dst[w * Cp + c] = 0;
      if (flat) return;  // the interior comes below
      if (x_cl) {        // a pixel's channels are contiguous: plain copies
        for (int64_t w = 0; w < W; ++w) {
          if (flip == 0)
            std::memcpy(dst + w * Cp, src + w * sW, static_cast<size_t>(C));
          else
            for (int64_t c = 0; c < C; ++c) dst[w * Cp + c] = src[w * sW + c] ^ flip;
        }
        return;
      }
      // 16 x 16 blocks of (channel, column), then the tails one byte at a time.
      const int64_t W16 = W / 16 * 16;
      uint8_t* to[16];
      for (int64_t w = 0; w < W16; w += 16) {
        for (int i = 0; i < 16; ++i) to[i] = dst + (w + i) * Cp;
        for (int64_t c = 0; c < C16; c += 16) {
          transpose16(src + c * sC + w, sC, to, flip);
          for (int i = 0; i < 16; ++i) to[i] += 16;
        }
      }
      // The rest byte by byte, pixel-major (writes in sequence): channels past
      // the 16-channel blocks on every column, all channels past W16.
      for (int64_t w = 0; w < W; ++w) {
        uint8_t* d = dst + w * Cp;
        const uint8_t* s = src + w * sW;
        for (int64_t c = w < W16 ? C16 : 0; c < C; ++c) d[c] = s[c * sC] ^ flip;
      }
    });
  if (flat) {
    const int64_t HW = H * W, groups = (HW + 15) / 16;
    parallel_for(N * groups, [&](int64_t task) {
      const int64_t n = task / groups, f0 = task % groups * 16, np = std::min<int64_t>(16, HW - f0);
      const auto* src = static_cast<const uint8_t*>(p.x.raw()) + n * p.x.stride(0) + f0;
      uint8_t* to[16];
      for (int64_t i = 0; i < np; ++i) {
        const int64_t h = (f0 + i) / W, w = (f0 + i) % W;
        to[i] = xw + ((n * Hp + h + win.pad_top) * Wp + w + win.pad_left) * Cp;
      }
      const int64_t cb = np == 16 ? C16 : 0;  // whole blocks of 16 pixels only
      for (int64_t c = 0; c < cb; c += 16) {
        uint8_t* at[16];
        for (int i = 0; i < 16; ++i) at[i] = to[i] + c;
        transpose16(src + c * sC, sC, at, flip);
      }
      for (int64_t c = cb; c < C; ++c)
        for (int64_t i = 0; i < np; ++i) to[i][c] = src[c * sC + i] ^ flip;
    });
  }

  std::vector<int64_t> tap_off(static_cast<size_t>(taps));
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      tap_off[static_cast<size_t>(kh * KW + kw)] =
          (kh * win.dilation_h * Wp + kw * win.dilation_w) * Cp;
  // Per channel (padded to whole blocks): the constant part of the zero-point
  // algebra (w_zp' = 0) and the multiplier, as run_gemm's.
  // The load-time epilogue when it matches (its w_zp' are 0 here: symmetric weights).
  const QConvEpilogue* epi = pk == p.packed ? qconv_packed_epilogue(pk, p) : nullptr;
  std::vector<int32_t> offset_here;
  std::vector<float> mult_here;
  if (epi == nullptr) {
    offset_here.assign(static_cast<size_t>(OB * kNhwcOcBlock), 0);
    mult_here.assign(static_cast<size_t>(OB * kNhwcOcBlock), 1.0f);
    for (int64_t o = 0; o < OC; ++o) {
      const size_t i = static_cast<size_t>(o);
      const int64_t b =
          p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[o * p.bias.stride(0)] : 0;
      offset_here[i] = static_cast<int32_t>(u32(b) - u32(xz) * u32(pk->w_sum[i]));
      mult_here[i] = p.multiplier(o);
    }
  }
  const int32_t* offset = epi ? epi->offset.data() : offset_here.data();
  const float* mult = epi ? epi->mult.data() : mult_here.data();

  // Codes in NHWC (pixel-major, OB * 64 per pixel), then transposed into y;
  // straight into a channels-last y.
  const int64_t ys = y_cl ? OC : OB * kNhwcOcBlock;
  const int64_t y_img = y_cl ? p.y.stride(0) : P * ys;
  thread_local std::vector<uint8_t> yn;
  if (!y_cl) yn.resize(static_cast<size_t>(N * P * ys));
  uint8_t* yp = y_cl ? static_cast<uint8_t*>(p.y.raw()) : yn.data();
  // Tasks: near-equal ranges of the (image, oc block, pixel block) sequence,
  // one per 8 blocks rounded up to a whole number per thread, at most 8 per
  // thread (one per chunk of the pool). Runs of 8 blocks per oc block left
  // 7x7 maps runs of 8 + 1 blocks and 14x14 maps five runs, so a second
  // thread waited on the first. Each pixel block is computed alone, so the
  // ranges do not change any result.
  const int64_t PB = (P + kNhwcPixels - 1) / kNhwcPixels;
  const int64_t total = N * OB * PB, threads = std::max(1, num_threads());
  const int64_t tasks = std::max<int64_t>(
      1,
      std::min(total, std::min(8 * threads, ((total + 7) / 8 + threads - 1) / threads * threads)));
  const int64_t wblock = taps * C4 * kNhwcOcBlock * 4;
  const int64_t step_w = win.stride_w * Cp, step_h = win.stride_h * Wp * Cp;
  // The first total % tasks ranges take one block more: threads taking
  // ranges in turn then end together (alternating sizes left one thread a
  // block behind at every turn).
  const int64_t share = total / tasks, longer = total % tasks;
  const auto begin_of = [&](int64_t t) { return t * share + std::min(t, longer); };
  parallel_for(tasks, [&](int64_t task) {
    const int64_t end = begin_of(task + 1);
    NhwcBlock b;
    b.tap_off = tap_off.data();
    b.taps = taps, b.C4 = C4;
    b.y_zp = p.y_zp, b.y_s8 = p.y.dtype() == DType::s8;
    b.y_stride = ys;
    // One oc block's pixel blocks [pb0, pb1) at a time.
    for (int64_t at = begin_of(task); at < end;) {
      const int64_t pb0 = at % PB, ob = at / PB % OB, n = at / PB / OB;
      const int64_t pb1 = std::min(PB, pb0 + (end - at));
      at += pb1 - pb0;
      b.w = pk->nhwc_w.data() + ob * wblock;
      if (int16_weights) b.w16 = w16 + ob * wblock;
      b.offset = offset + ob * kNhwcOcBlock;
      b.multiplier = mult + ob * kNhwcOcBlock;
      b.lanes =
          static_cast<int>(y_cl ? std::min(kNhwcOcBlock, OC - ob * kNhwcOcBlock) : kNhwcOcBlock);
      // The output pixel (oh, ow) walks in raster order (no division per pixel).
      int64_t oh = pb0 * kNhwcPixels / OW, ow = pb0 * kNhwcPixels % OW;
      for (int64_t pb = pb0; pb < pb1; ++pb) {
        const int64_t pix0 = pb * kNhwcPixels;
        const int R = static_cast<int>(std::min<int64_t>(kNhwcPixels, P - pix0));
        for (int r = 0; r < R; ++r) {
          b.px[r] = xp + n * img + oh * step_h + ow * step_w;
          if (++ow == OW) ow = 0, ++oh;
        }
        b.y = yp + n * y_img + pix0 * ys + ob * kNhwcOcBlock;
        fn(b, R);
      }
    }
  });
  if (y_cl) return;
  // Transposed 16 x 16 (channel, pixel) blocks at a time; the tails one byte at a time.
  const int64_t OB16 = (OC + 15) / 16, P16 = P / 16 * 16;
  parallel_for(N * OB16, [&](int64_t task) {
    const int64_t n = task / OB16, o0 = task % OB16 * 16, o1 = std::min(OC, o0 + 16);
    auto* dst = static_cast<uint8_t*>(p.y.raw()) + n * p.y.stride(0);
    const uint8_t* src = yp + n * P * ys;
    const int64_t sO = p.y.stride(1);
    uint8_t* to[16];
    if (o1 - o0 == 16)
      for (int64_t i = 0; i < P16; i += 16) {
        for (int k = 0; k < 16; ++k) to[k] = dst + (o0 + k) * sO + i;
        transpose16(src + i * ys + o0, ys, to, 0);
      }
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = o1 - o0 == 16 ? P16 : 0; i < P; ++i) dst[o * sO + i] = src[i * ys + o];
  });
}

}  // namespace npukit::qconv
