#include "npukit/ops/elementwise.hpp"
#include "npukit/parallel.hpp"

namespace npukit::ref {

namespace {
// Visits every element of a rank <= 4 view pair as (index of the C axis, x, y).
template <class F>
void for_each_4d(const TensorView& x, const TensorView& y, F f) {
  expect_kernel_rank(x, "npukit::ref::elementwise", "x");
  Shape sh(4, 1), xs(4, 0), ys(4, 0);
  const int off = 4 - x.rank();
  for (int i = 0; i < x.rank(); ++i) {
    sh[off + i] = x.dim(i);
    xs[off + i] = x.stride(i);
    ys[off + i] = y.stride(i);
  }
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  parallel_for(sh[0] * sh[1], [&](int64_t nc) {
    const int64_t n = nc / sh[1], c = nc % sh[1];
    for (int64_t h = 0; h < sh[2]; ++h)
      for (int64_t w = 0; w < sh[3]; ++w)
        f(c, xp[n * xs[0] + c * xs[1] + h * xs[2] + w * xs[3]],
          yp[n * ys[0] + c * ys[1] + h * ys[2] + w * ys[3]]);
  });
}
}  // namespace

void relu_f32(const TensorView& x, const TensorView& y, const ElementwiseParams& p) {
  const bool nan_zero = p.relu_nan == ReluNaN::zero;
  const Fp32Arith f{p.flush_denormals};
  for_each_4d(x, y, [&](int64_t, float v0, float& out) {
    const float v = f.in(v0);
    // propagate is max(x, 0) as PyTorch and ONNX Runtime compute it: only x < 0
    // is replaced, so NaN and -0 pass through (torch.relu(-0.0) is -0.0).
    const float r = nan_zero ? (v > 0.0f ? v : 0.0f) : (v < 0.0f ? 0.0f : v);
    out = p.result_add ? f.add(out, r) : r;
  });
}

void channel_op_f32(ChannelOp op, const TensorView& x, const float* s, int64_t s_stride,
                    const float* b, int64_t b_stride, const TensorView& y, bool result_add) {
  ElementwiseParams p;
  p.result_add = result_add;
  channel_op_f32(op, x, s, s_stride, b, b_stride, y, p);
}

void channel_op_f32(ChannelOp op, const TensorView& x, const float* s, int64_t s_stride,
                    const float* b, int64_t b_stride, const TensorView& y,
                    const ElementwiseParams& p) {
  const Fp32Arith f{p.flush_denormals};
  for_each_4d(x, y, [&](int64_t c, float v, float& out) {
    float r;
    switch (op) {
      case ChannelOp::bias:
        r = f.add(v, b[c * b_stride]);
        break;
      case ChannelOp::scale:
        r = f.mul(v, s[c * s_stride]);
        if (p.scale_adds_zero) r = f.add(r, 0.0f);
        break;
      default: {
        const float prod = f.mul(v, s[c * s_stride]);  // rounded before the add: no FMA
        r = f.add(prod, b[c * b_stride]);
      }
    }
    out = p.result_add ? f.add(out, r) : r;
  });
}

}  // namespace npukit::ref
