// Fast fp32 convolution with Fp32Accumulation::interleaved: the per-output
// summation pattern of ref::conv2d_f32_interleaved, unchanged, computed for a
// tile of output columns at once so that the compiler can vectorise across
// outputs (each output still sees the same sequence of rounded operations).
// Flushing is done by the x86 MXCSR FTZ/DAZ bits, which is exactly what the
// BM1684 C-model runs under; elsewhere the reference kernel is used.
#include <algorithm>
#include <cstring>
#include <vector>

#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define NPUKIT_HAVE_MXCSR 1
#endif

namespace npukit::cpu {

#ifdef NPUKIT_HAVE_MXCSR
namespace {

constexpr int64_t kTile = 32;  // output columns per tile

// Sets FTZ (bit 15) and DAZ (bit 6) for this thread while alive.
class FlushScope {
 public:
  explicit FlushScope(bool on) : saved_(_mm_getcsr()) {
    if (on) _mm_setcsr(saved_ | 0x8040u);
  }
  ~FlushScope() { _mm_setcsr(saved_); }
  FlushScope(const FlushScope&) = delete;
  FlushScope& operator=(const FlushScope&) = delete;

 private:
  unsigned saved_;
};

struct Geometry {
  int64_t IC, ICn, KH, KW, Wp, plane, sw, dh, dw;
};

// Adds x * w of one channel to one accumulator row; restrict lets the
// compiler vectorise (rows never alias).
template <int64_t SW>
__attribute__((always_inline)) inline void axpy(float* __restrict l, const float* __restrict x,
                                                float w, int64_t sw) {
  const int64_t step = SW > 0 ? SW : sw;
  for (int64_t i = 0; i < kTile; ++i) l[i] = l[i] + x[i * step] * w;
}

// L[a][i] += x * w for the tile's columns, for every (tap, channel) step in
// the order of the reference kernel: step s = k*ICn + ic/2 feeds L[(s%2)*2 + ic%2].
template <int64_t SW>
__attribute__((always_inline)) inline void accumulate_tile_impl(const Geometry& g,
                                                                const float* xrow, const float* wk,
                                                                float (*L)[kTile]) {
  for (int64_t kh = 0; kh < g.KH; ++kh) {
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t k = kh * g.KW + kw;
      const float* xk = xrow + kh * g.dh * g.Wp + kw * g.dw;
      for (int64_t j = 0; j < g.ICn; ++j) {
        float* even = L[((k * g.ICn + j) % 2) * 2];
        const int64_t ic = 2 * j;
        axpy<SW>(even, xk + ic * g.plane, wk[(ic * g.KH + kh) * g.KW + kw], g.sw);
        if (ic + 1 < g.IC)
          axpy<SW>(even + kTile, xk + (ic + 1) * g.plane, wk[((ic + 1) * g.KH + kh) * g.KW + kw],
                   g.sw);
      }
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void accumulate_tile(
    const Geometry& g, const float* xrow, const float* wk, float (*L)[kTile]) {
  if (g.sw == 1)
    accumulate_tile_impl<1>(g, xrow, wk, L);
  else
    accumulate_tile_impl<0>(g, xrow, wk, L);
}

}  // namespace
#endif

void conv2d_f32_interleaved(const TensorView& x, const TensorView& w, const TensorView& bias,
                            const TensorView& y, const Conv2dParams& p) {
#ifndef NPUKIT_HAVE_MXCSR
  ref::conv2d_f32_interleaved(x, w, bias, y, p);
#else
  const Window2d& win = p.window;
  if (p.groups != 1 || win.ins_h != 0 || win.ins_w != 0)
    return ref::conv2d_f32_interleaved(x, w, bias, y, p);
  const int64_t N = x.dim(0), IC = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t OC = y.dim(1), OH = y.dim(2), OW = y.dim(3);
  Geometry g{IC, (IC + 1) / 2, w.dim(2),       w.dim(3),      0,
             0,  win.stride_w, win.dilation_h, win.dilation_w};
  const int64_t Hp = H + win.pad_top + win.pad_bottom;
  // Room for the last tile's overrun past the row end (results discarded).
  g.Wp = W + win.pad_left + win.pad_right + kTile * win.stride_w;
  g.plane = Hp * g.Wp;
  // Zero-padded input planes: padded taps are the value 0 in the products.
  std::vector<float> xpad(static_cast<size_t>(IC * g.plane + g.Wp));
  // Weights densely as [OC][IC][KH][KW].
  std::vector<float> wd(static_cast<size_t>(OC * IC * g.KH * g.KW));
  for (int64_t oc = 0; oc < OC; ++oc)
    for (int64_t ic = 0; ic < IC; ++ic)
      for (int64_t kh = 0; kh < g.KH; ++kh)
        for (int64_t kw = 0; kw < g.KW; ++kw)
          wd[static_cast<size_t>(((oc * IC + ic) * g.KH + kh) * g.KW + kw)] =
              w.at<float>(oc, ic, kh, kw);
  int64_t bias_step = 0;
  const float* b = nullptr;
  if (p.has_bias) {
    bias_step = bias.stride(bias.rank() == 1 ? 0 : 1);
    b = static_cast<const float*>(bias.raw());
  }
  for (int64_t n = 0; n < N; ++n) {
    parallel_for(IC, [&](int64_t ic) {
      float* dst = xpad.data() + ic * g.plane;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t ww = 0; ww < W; ++ww)
          dst[(h + win.pad_top) * g.Wp + ww + win.pad_left] = x.at<float>(n, ic, h, ww);
    });
    parallel_for(OC, [&](int64_t oc) {
      FlushScope scope(p.flush_denormals);
      const float* wk = wd.data() + oc * IC * g.KH * g.KW;
      alignas(64) float L[4][kTile];
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow0 = 0; ow0 < OW; ow0 += kTile) {
          std::memset(L, 0, sizeof(L));
          const float* xrow = xpad.data() + oh * win.stride_h * g.Wp + ow0 * g.sw;
          accumulate_tile(g, xrow, wk, L);
          const int64_t cols = std::min(kTile, OW - ow0);
          for (int64_t i = 0; i < cols; ++i) {
            float r = (L[0][i] + L[2][i]) + (L[1][i] + L[3][i]);
            if (b) r = r + b[oc * bias_step];
            float& out = y.at<float>(n, oc, oh, ow0 + i);
            out = p.result_add ? r + out : r;
          }
        }
      }
    });
  }
#endif
}

}  // namespace npukit::cpu
