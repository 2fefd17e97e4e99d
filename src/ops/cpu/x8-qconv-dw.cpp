// Depthwise integer convolution (one input and one output channel per group,
// as MobileNet's): per (image, channel) the plane of x - x_zp is copied once
// into an int16 buffer with zero borders (a padding tap contributes 0), then
// each output row accumulates KH*KW shifted input rows times one weight,
// exactly in int32 (|sum| <= K * 255 * 255, checked by the caller). ONNX
// Runtime's depthwise kernel sums exactly too, under either accumulation.
#include <algorithm>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_gemm.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::qconv {

void dw_row_portable(const int16_t* row, int64_t stride, int32_t w, int64_t n, int32_t* acc) {
  for (int64_t t = 0; t < n; ++t) acc[t] += int32_t{row[t * stride]} * w;
}

void run_depthwise(const QConvProblem& p, DwRowFn row_fn, StoreFn store) {
  const int64_t N = p.x.dim(0), C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const int64_t KH = p.w.dim(2), KW = p.w.dim(3), OH = p.y.dim(2), OW = p.y.dim(3);
  const Window2d& win = p.window;
  const int64_t sh = win.stride_h, sw = win.stride_w, dh = win.dilation_h, dw = win.dilation_w;
  const int64_t Hp = H + win.pad_top + win.pad_bottom;
  // Wide enough for every tap of every output column, plus a vector of slack.
  const int64_t Wp =
      std::max(W + win.pad_left + win.pad_right, (OW - 1) * sw + (KW - 1) * dw + 1) + 64;
  const int64_t Hrows = std::max(Hp, (OH - 1) * sh + (KH - 1) * dh + 1);
  const bool y_s8 = p.y.dtype() == DType::s8;
  const int64_t esize = dtype_size(p.y.dtype());
  parallel_for(N * C, [&](int64_t task) {
    const int64_t n = task / C, c = task % C;
    thread_local std::vector<int16_t> plane;
    thread_local std::vector<int32_t> acc;
    plane.assign(static_cast<size_t>(Hrows * Wp), 0);
    acc.resize(static_cast<size_t>(OW));
    const int64_t xo = n * p.x.stride(0) + c * p.x.stride(1);
    for (int64_t h = 0; h < H; ++h) {
      int16_t* d = plane.data() + (h + win.pad_top) * Wp + win.pad_left;
      const int64_t ro = xo + h * p.x.stride(2);
      for (int64_t w = 0; w < W; ++w)
        d[w] = static_cast<int16_t>(
            detail::code_at(p.x.raw(), p.x.dtype(), ro + w * p.x.stride(3)) - p.x_zp);
    }
    const int32_t wz = p.wq.zero_point_at(c);
    int32_t wv[64];  // KH * KW <= 64 (the kernel list declines larger windows)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        wv[kh * KW + kw] =
            detail::code_at(p.w.raw(), p.w.dtype(),
                            c * p.w.stride(0) + kh * p.w.stride(2) + kw * p.w.stride(3)) -
            wz;
    RowStore st;
    st.offset = p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[c * p.bias.stride(0)] : 0;
    st.requantize = p.requantize;
    st.multiplier = (p.x_scale * p.wq.scale_at(c)) / p.y_scale;  // as the reference
    st.y_zp = p.y_zp;
    st.y_s8 = y_s8;
    for (int64_t oh = 0; oh < OH; ++oh) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int16_t* r = plane.data() + (oh * sh + kh * dh) * Wp;
        for (int64_t kw = 0; kw < KW; ++kw)
          if (wv[kh * KW + kw] != 0) row_fn(r + kw * dw, sw, wv[kh * KW + kw], OW, acc.data());
      }
      char* yp = static_cast<char*>(p.y.raw()) +
                 esize * (n * p.y.stride(0) + c * p.y.stride(1) + oh * p.y.stride(2));
      store(acc.data(), OW, st, yp);
    }
  });
}

}  // namespace npukit::qconv
