// Fast integer convolution accumulators: the same int32 sums as
// ref::conv_accumulate. The callers prove |sum| < 2^31, and integer addition
// without overflow is associative, so any summation order is exact; this
// kernel reorders freely.
//
// Shape of the computation: per (image, group, tile of output pixels) an
// im2col tile of (x - x_zp) as int16, paired along K, times the weights
// (w - w_zp) as int16 pairs. With AVX2 one vpmaddwd does 16 products; the
// portable path does the same loops in plain C++.
#include <algorithm>
#include <cstring>
#include <vector>

#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define NPUKIT_X86 1
#endif

namespace npukit::cpu {

namespace {

constexpr int64_t kTile = 64;  // output pixels per im2col tile (multiple of 16)
constexpr int64_t kRows = 4;   // output channels per register block

// Operands are int16 pairs (k even first) read as one 32-bit word by vpmaddwd.
struct Packed {
  int64_t K2 = 0;          // pairs along K (K rounded up to even, halved)
  int64_t rows = 0;        // OC + kRows: a register block may start at any channel
  std::vector<int16_t> w;  // [rows][2 * K2] of (w - w_zp); padding is 0
  const int16_t* row(int64_t o) const { return w.data() + o * 2 * K2; }
};

Packed pack_weights(const TensorView& w, const QuantParams& w_q) {
  const int64_t OC = w.dim(0), ICg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const int64_t K = ICg * KH * KW;
  Packed p;
  p.K2 = (K + 1) / 2;
  p.rows = OC + kRows;
  p.w.assign(static_cast<size_t>(p.rows * 2 * p.K2), 0);
  for (int64_t o = 0; o < OC; ++o) {
    const int32_t wz = w_q.zero_point_at(o);
    int16_t* dst = p.w.data() + o * 2 * p.K2;
    for (int64_t ic = 0; ic < ICg; ++ic)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          *dst++ = static_cast<int16_t>(detail::code_at(w.raw(), w.dtype(),
                                                        o * w.stride(0) + ic * w.stride(1) +
                                                            kh * w.stride(2) + kw * w.stride(3)) -
                                        wz);
  }
  return p;
}

// out[r][t] = sum over k of cols(k, t) * w[r][k], for kRows rows and kTile pixels.
// cols: [K2][kTile][2] int16 (x - x_zp); w: kRows rows of 2 * K2 int16.
void block_portable(const int16_t* cols, const int16_t* w, int64_t K2, int32_t* out) {
  for (int64_t r = 0; r < kRows; ++r) {
    int32_t* o = out + r * kTile;
    const int16_t* wr = w + r * 2 * K2;
    std::fill(o, o + kTile, 0);
    for (int64_t q = 0; q < K2; ++q) {
      const int32_t w0 = wr[2 * q], w1 = wr[2 * q + 1];
      const int16_t* c = cols + q * kTile * 2;
      for (int64_t t = 0; t < kTile; ++t) o[t] += c[2 * t] * w0 + c[2 * t + 1] * w1;
    }
  }
}

#ifdef NPUKIT_X86
__attribute__((target("avx2"))) void block_avx2(const int16_t* cols, const int16_t* w, int64_t K2,
                                                int32_t* out) {
  for (int64_t t0 = 0; t0 < kTile; t0 += 16) {
    __m256i acc[kRows][2];
    for (auto& a : acc) a[0] = a[1] = _mm256_setzero_si256();
    for (int64_t q = 0; q < K2; ++q) {
      const int16_t* c = cols + (q * kTile + t0) * 2;
      const __m256i xa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
      const __m256i xb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 16));
      for (int64_t r = 0; r < kRows; ++r) {
        int32_t pair;  // (w[2q], w[2q+1]) as the word vpmaddwd pairs with (x[2q], x[2q+1])
        std::memcpy(&pair, w + r * 2 * K2 + 2 * q, sizeof pair);
        const __m256i wb = _mm256_set1_epi32(pair);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(xa, wb));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(xb, wb));
      }
    }
    for (int64_t r = 0; r < kRows; ++r) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * kTile + t0), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * kTile + t0 + 8), acc[r][1]);
    }
  }
}
#endif

using BlockFn = void (*)(const int16_t*, const int16_t*, int64_t, int32_t*);

BlockFn pick_block() {
#ifdef NPUKIT_X86
  if (__builtin_cpu_supports("avx2")) return block_avx2;
#endif
  return block_portable;
}

}  // namespace

void conv_accumulate(const TensorView& x, const TensorView& w, const TensorView& acc,
                     const Window2d& window, int64_t groups, int32_t x_zp, const QuantParams& w_q) {
  static const BlockFn block = pick_block();
  const int64_t N = x.dim(0), OC = w.dim(0), ICg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const int64_t OH = acc.dim(2), OW = acc.dim(3), OCg = OC / groups, P = OH * OW;
  const AxisTaps th = axis_taps(axis_h(window, x.dim(2)), OH);
  const AxisTaps tw = axis_taps(axis_w(window, x.dim(3)), OW);
  const Packed wp = pack_weights(w, w_q);
  const int64_t tiles = (P + kTile - 1) / kTile;
  parallel_for(N * groups * tiles, [&](int64_t task) {
    const int64_t n = task / (groups * tiles), g = task / tiles % groups, t0 = task % tiles * kTile;
    // im2col tile, pairs along k = (ic, kh, kw); taps outside the input are 0.
    std::vector<int16_t> cols(static_cast<size_t>(wp.K2 * kTile * 2), 0);
    int64_t k = 0;
    for (int64_t ic = 0; ic < ICg; ++ic)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw, ++k) {
          const int64_t base = n * x.stride(0) + (g * ICg + ic) * x.stride(1);
          for (int64_t t = 0; t < kTile && t0 + t < P; ++t) {
            const int64_t oh = (t0 + t) / OW, ow = (t0 + t) % OW;
            if (combine(th.kind_at(oh, kh), tw.kind_at(ow, kw)) != Tap::input) continue;
            const int32_t v = detail::code_at(
                x.raw(), x.dtype(),
                base + th.index_at(oh, kh) * x.stride(2) + tw.index_at(ow, kw) * x.stride(3));
            cols[static_cast<size_t>(((k / 2) * kTile + t) * 2 + (k & 1))] =
                static_cast<int16_t>(v - x_zp);
          }
        }
    int32_t out[kRows * kTile];
    for (int64_t o0 = g * OCg; o0 < (g + 1) * OCg; o0 += kRows) {
      block(cols.data(), wp.row(o0), wp.K2, out);
      // Rows past this group's channels belong to the next group (or padding): skip them.
      for (int64_t r = 0; r < kRows && o0 + r < (g + 1) * OCg; ++r)
        for (int64_t t = 0; t < kTile && t0 + t < P; ++t)
          acc.at<int32_t>(n, o0 + r, (t0 + t) / OW, (t0 + t) % OW) = out[r * kTile + t];
    }
  });
}

}  // namespace npukit::cpu
