#include "npukit/ops/mrt_conv.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "npukit/ops/int_conv2d.hpp"
#include "quant/elements.hpp"

namespace npukit {

namespace {

constexpr const char* kConv = "npukit::mrt_quantized_conv2d";

void check_scheme(const MrtQuantParams& p, const char* fn, const char* name) {
  check(p.scheme == MrtScheme::symmetric || p.scheme == MrtScheme::zero_point, fn, name,
        mrt_scheme_name(p.scheme), "symmetric or zero_point (MRT's integer schemes)");
  check(!p.sc.empty() && p.sc.size() == p.zp.size(), fn, name,
        std::to_string(p.sc.size()) + " scales, " + std::to_string(p.zp.size()) + " zero points",
        "as many zero points as scales, at least one");
  for (size_t i = 0; i < p.sc.size(); ++i) {
    check(p.sc[i] > 0, fn, name, "scale " + std::to_string(p.sc[i]), "> 0");
    check(p.zp[i] == static_cast<double>(static_cast<int32_t>(p.zp[i])), fn, name,
          "zero point " + std::to_string(p.zp[i]), "an integer (MRT's ceil(-sc * min))");
  }
}

// Every code of t within [p.q_min(), p.q_max()]: the proof's value bound.
int64_t check_codes(const TensorView& t, const MrtQuantParams& p, const char* name) {
  check(detail::is_integer_dtype(t.dtype()), kConv, name, dtype_name(t.dtype()),
        "s8, u8, s16 or s32 codes");
  detail::for_each_element(t, [&](int64_t, int64_t off, const int64_t*) {
    const int64_t v = detail::load_int(t, off);
    if (v < p.q_min() || v > p.q_max())
      fail(kConv, name, "a code " + std::to_string(v),
           "codes in [" + std::to_string(p.q_min()) + ", " + std::to_string(p.q_max()) + "] (" +
               mrt_scheme_name(p.scheme) + ", precision " + std::to_string(p.precision) + ")");
  });
  return std::max(-p.q_min(), p.q_max());
}

}  // namespace

CvmFloat mrt_conv_requant_factor(const MrtQuantParams& xp, const MrtQuantParams& wp,
                                 const MrtQuantParams& yp, int64_t oc, int bits) {
  const double sw = wp.sc[wp.sc.size() == 1 ? 0 : static_cast<size_t>(oc)];
  return cvm_float(yp.sc[0] / (xp.sc[0] * sw), bits);
}

Tensor mrt_quantized_conv2d(const TensorView& xq, const MrtQuantParams& xp, const TensorView& wq,
                            const MrtQuantParams& wp, const MrtQuantParams& yp,
                            const Window2d& window, int64_t groups, int bits) {
  check_scheme(xp, kConv, "xp");
  check_scheme(wp, kConv, "wp");
  check_scheme(yp, kConv, "yp");
  check(xp.axis == -1 && xp.sc.size() == 1, kConv, "xp.axis", std::to_string(xp.axis),
        "-1 (layer-wise; MRT splits channel-wise inputs into per-channel convolutions)");
  check(yp.axis == -1 && yp.sc.size() == 1, kConv, "yp.axis", std::to_string(yp.axis),
        "-1 (layer-wise output)");
  wq.expect_rank(4, kConv, "wq");
  check((wp.axis == -1 && wp.sc.size() == 1) ||
            (wp.axis == 0 && static_cast<int64_t>(wp.sc.size()) == wq.dim(0)),
        kConv, "wp.axis",
        std::to_string(wp.axis) + " with " + std::to_string(wp.sc.size()) + " scales",
        "-1 with 1 scale, or 0 with one scale per output channel");
  IntConv2dParams p;
  p.window = window;
  p.groups = groups;
  p.x_zero_point = static_cast<int32_t>(xp.zp[0]);
  if (wp.zp.size() == 1)
    p.w_zero_point = static_cast<int32_t>(wp.zp[0]);
  else
    for (double z : wp.zp) p.w_zero_points.push_back(static_cast<int32_t>(z));
  p.x_max_abs = check_codes(xq, xp, "xq");
  p.w_max_abs = check_codes(wq, wp, "wq");
  Tensor y(DType::s32, int_conv2d_output_shape(xq.shape(), wq.shape(), p));
  zero_point_conv2d_expanded(xq, wq, y, p);
  std::vector<CvmFloat> factor;
  for (int64_t oc = 0; oc < wq.dim(0); ++oc)
    factor.push_back(mrt_conv_requant_factor(xp, wp, yp, oc, bits));
  const auto zp_y = static_cast<int64_t>(yp.zp[0]);
  int32_t* v = y.data<int32_t>();
  const int64_t plane = y.shape()[2] * y.shape()[3], channels = y.shape()[1];
  for (int64_t i = 0; i < y.numel(); ++i) {
    const CvmFloat f = factor[static_cast<size_t>((i / plane) % channels)];
    v[i] = static_cast<int32_t>(cvm_requantize_affine(v[i], f, zp_y, yp.q_min(), yp.q_max()));
  }
  return y;
}

Tensor mrt_avg_pool2d(const TensorView& xq, const MrtQuantParams& xp, const MrtQuantParams& yp,
                      const Window2d& window, int weight_precision, int bits) {
  constexpr const char* fn = "npukit::mrt_avg_pool2d";
  xq.expect_rank(4, fn, "xq");
  check(window.dilation_h == 1 && window.dilation_w == 1 && window.ins_h == 0 &&
            window.ins_w == 0 && !window.ceil_mode,
        fn, "window", "dilation, zero insertion or ceil_mode set",
        "a plain average-pool window (MRT rewrites only that into a convolution)");
  check_range(fn, "window.kernel_h", window.kernel_h, 1, 4096);
  check_range(fn, "window.kernel_w", window.kernel_w, 1, 4096);
  const int64_t C = xq.dim(1), KH = window.kernel_h, KW = window.kernel_w;
  Tensor w(DType::f32, {C, 1, KH, KW});
  const float tap = 1.0f / static_cast<float>(KH * KW);
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = tap;
  const MrtQuantParams wp = mrt_calibrate(w, MrtScheme::symmetric, weight_precision);
  const Tensor wq = mrt_quantize(w, wp);
  return mrt_quantized_conv2d(xq, xp, wq, wp, yp, window, C, bits);
}

}  // namespace npukit
