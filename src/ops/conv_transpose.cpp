// ConvTranspose reference (the specification; there is no fast kernel yet).
//
// Each output is gathered, not scattered: y[n, m, oh, ow] starts at +0.0f and
// adds x[n, c, ih, iw] * w[c, m', kh, kw] for c ascending over the group's
// input channels, then kh ascending, then kw ascending, over the taps with
// oh + pad_top == ih * stride_h + kh * dilation_h (same for w); the bias is
// added last. ONNX Runtime sums in another order (a GEMM over c, then col2im
// over the taps), so it agrees to rounding only (docs/semantics.md).
#include "npukit/ops/conv_transpose.hpp"

#include <algorithm>
#include <string>

#include "npukit/error.hpp"
#include "npukit/parallel.hpp"

namespace npukit {

ConvTransposeAxis conv_transpose_axis(int64_t in_size, int64_t stride, int64_t kernel,
                                      int64_t dilation, int64_t output_padding,
                                      const char* auto_pad, int64_t pad_head, int64_t pad_tail,
                                      int64_t out_size) {
  const std::string ap = auto_pad;
  const int64_t full = (in_size - 1) * stride + output_padding + (kernel - 1) * dilation + 1;
  // ONNX Runtime 1.30's split of a derived total pad: SAME_UPPER puts the odd unit on the
  // tail, every other auto_pad (NOTSET with output_shape included) on the head.
  auto split = [&](int64_t total, ConvTransposeAxis& a) {
    const int64_t big = total - total / 2;
    a.pad_head = ap == "SAME_UPPER" ? total / 2 : big;
    a.pad_tail = ap == "SAME_UPPER" ? big : total / 2;
  };
  ConvTransposeAxis a;
  if (out_size >= 0) {
    split(std::max<int64_t>(0, full - out_size), a);
    a.out_size = out_size;
    return a;
  }
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    split(std::max<int64_t>(0, full - in_size * stride), a);
  } else if (ap == "NOTSET") {
    a.pad_head = pad_head;
    a.pad_tail = pad_tail;
  }
  a.out_size = full - a.pad_head - a.pad_tail;
  return a;
}

void conv_transpose2d(const TensorView& x, const TensorView& w, const TensorView& bias,
                      const TensorView& y, const ConvTransposeParams& p) {
  const char* fn = "npukit::conv_transpose2d";
  x.expect_dtype(DType::f32, fn, "x");
  w.expect_dtype(DType::f32, fn, "w");
  y.expect_dtype(DType::f32, fn, "y");
  x.expect_rank(4, fn, "x");
  w.expect_rank(4, fn, "w");
  check_range(fn, "groups", p.groups, 1, x.dim(1) < 1 ? 1 : x.dim(1));
  check(x.dim(1) % p.groups == 0, fn, "groups", std::to_string(p.groups),
        "a divisor of the input channels " + std::to_string(x.dim(1)));
  check_range(fn, "stride_h", p.stride_h, 1, 1 << 20);
  check_range(fn, "stride_w", p.stride_w, 1, 1 << 20);
  check_range(fn, "dilation_h", p.dilation_h, 1, 1 << 20);
  check_range(fn, "dilation_w", p.dilation_w, 1, 1 << 20);
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t Mg = w.dim(1), M = Mg * p.groups, Cg = C / p.groups;
  w.expect_shape({C, Mg, p.kernel_h, p.kernel_w}, fn, "w");
  y.expect_shape({N, M, p.out_h, p.out_w}, fn, "y");
  if (p.has_bias) {
    bias.expect_dtype(DType::f32, fn, "bias");
    bias.expect_shape({M}, fn, "bias");
  }
  const float* bp = p.has_bias ? bias.data<float>() : nullptr;
  const int64_t bstride = p.has_bias ? bias.stride(0) : 0;
  parallel_for(N * M, [&](int64_t nm) {
    {
      const int64_t n = nm / M, m = nm % M, g = m / Mg, mg = m % Mg;
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          float acc = 0.0f;
          for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
            for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
              const int64_t th = oh + p.pad_top - kh * p.dilation_h;
              if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= H) continue;
              const int64_t ih = th / p.stride_h;
              for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
                const int64_t tw = ow + p.pad_left - kw * p.dilation_w;
                if (tw < 0 || tw % p.stride_w != 0 || tw / p.stride_w >= W) continue;
                acc += x.at<float>(n, c, ih, tw / p.stride_w) * w.at<float>(c, mg, kh, kw);
              }
            }
          if (bp) acc += bp[m * bstride];
          y.at<float>(n, m, oh, ow) = acc;
        }
    }
  });
}

}  // namespace npukit
