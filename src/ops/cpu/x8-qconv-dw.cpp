// Depthwise integer convolution (one input and one output channel per group,
// as MobileNet's): per (image, channel) the plane of x - x_zp is copied once
// into an int16 buffer with zero borders (a padding tap contributes 0), then
// each output row is computed a vector of columns at a time with all KH*KW
// taps summed in a register, exactly in int32 (|sum| <= K * 255 * 255,
// checked by the caller). ONNX Runtime's depthwise kernel sums exactly too,
// under either accumulation.
#include <algorithm>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_gemm.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::qconv {

void dw_row_portable(const DwRow& r, int32_t* acc) {
  for (int64_t t = 0; t < r.n; ++t) {
    int32_t s = 0;
    for (int64_t kh = 0; kh < r.kh; ++kh)
      for (int64_t kw = 0; kw < r.kw; ++kw)
        s += int32_t{r.row[kh * r.dh * r.wp + kw * r.dw + t * r.sw]} * r.w[kh * r.kw + kw];
    acc[t] = s;
  }
}

namespace {

template <class T>
void fill_plane(const T* src, int64_t sh, int64_t sw, int64_t H, int64_t W, int32_t zp,
                int16_t* dst, int64_t Wp) {
  for (int64_t h = 0; h < H; ++h) {
    const T* s = src + h * sh;
    int16_t* d = dst + h * Wp;
    if (sw == 1)
      for (int64_t w = 0; w < W; ++w) d[w] = static_cast<int16_t>(s[w] - zp);
    else
      for (int64_t w = 0; w < W; ++w) d[w] = static_cast<int16_t>(s[w * sw] - zp);
  }
}

}  // namespace

void run_depthwise(const QConvProblem& p, DwRowFn row_fn, StoreFn store) {
  const int64_t N = p.x.dim(0), C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const int64_t KH = p.w.dim(2), KW = p.w.dim(3), OH = p.y.dim(2), OW = p.y.dim(3);
  const Window2d& win = p.window;
  const int64_t sh = win.stride_h, sw = win.stride_w, dh = win.dilation_h, dw = win.dilation_w;
  // Wide enough for every tap of every output column, plus two vectors of
  // slack (a kernel may read a whole vector of taps past the last column).
  const int64_t Wp =
      std::max(W + win.pad_left + win.pad_right, (OW - 1) * sw + (KW - 1) * dw + 1) + 64 * sw;
  const int64_t Hrows =
      std::max(H + win.pad_top + win.pad_bottom, (OH - 1) * sh + (KH - 1) * dh + 1);
  const bool y_s8 = p.y.dtype() == DType::s8;
  const int64_t esize = dtype_size(p.y.dtype());
  parallel_for(N * C, [&](int64_t task) {
    const int64_t n = task / C, c = task % C;
    thread_local std::vector<int16_t> plane;
    thread_local std::vector<int32_t> acc;
    plane.assign(static_cast<size_t>(Hrows * Wp), 0);
    acc.resize(static_cast<size_t>(OW));
    int16_t* interior = plane.data() + win.pad_top * Wp + win.pad_left;
    const int64_t xo = n * p.x.stride(0) + c * p.x.stride(1);
    if (p.x.dtype() == DType::u8)
      fill_plane(static_cast<const uint8_t*>(p.x.raw()) + xo, p.x.stride(2), p.x.stride(3), H, W,
                 p.x_zp, interior, Wp);
    else
      fill_plane(static_cast<const int8_t*>(p.x.raw()) + xo, p.x.stride(2), p.x.stride(3), H, W,
                 p.x_zp, interior, Wp);
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
    DwRow r{nullptr, Wp, KH, KW, dh, dw, sw, wv, OW};
    for (int64_t oh = 0; oh < OH; ++oh) {
      r.row = plane.data() + oh * sh * Wp;
      row_fn(r, acc.data());
      char* yp = static_cast<char*>(p.y.raw()) +
                 esize * (n * p.y.stride(0) + c * p.y.stride(1) + oh * p.y.stride(2));
      store(acc.data(), OW, st, yp);
    }
  });
}

}  // namespace npukit::qconv
