#include "npukit/ops/int_conv2d.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

#include "quant/elements.hpp"

namespace npukit {

namespace {

int64_t max_abs_of(DType t) {
  switch (t) {
    case DType::s8:
      return 128;
    case DType::u8:
      return 255;
    case DType::s16:
      return 32768;
    case DType::s32:
      return int64_t{1} << 31;
    default:
      return 0;
  }
}

// |value| bound of t: the dtype's, or `given` after checking every element against it.
int64_t value_bound(const TensorView& t, int64_t given, const char* fn, const char* name) {
  if (given == 0) return max_abs_of(t.dtype());
  check_range(fn, name, given, 1, max_abs_of(t.dtype()));
  detail::for_each_element(t, [&](int64_t, int64_t off, const int64_t*) {
    const int64_t v = detail::load_int(t, off);
    if (v < -given || v > given)
      fail(fn, name, std::to_string(given),
           "a bound of every |element|; one element is " + std::to_string(v));
  });
  return given;
}

// Validates shapes, dtypes, geometry and the accumulator bound; returns the output shape.
Shape validate(const TensorView& x, const TensorView& w, const TensorView* y,
               const IntConv2dParams& p, bool with_zero_points, const char* fn) {
  check(detail::is_integer_dtype(x.dtype()), fn, "x", dtype_name(x.dtype()), "s8, u8, s16 or s32");
  check(detail::is_integer_dtype(w.dtype()), fn, "w", dtype_name(w.dtype()), "s8, u8, s16 or s32");
  x.expect_rank(4, fn, "x");
  w.expect_rank(4, fn, "w");
  Shape out = int_conv2d_output_shape(x.shape(), w.shape(), p);
  if (y) {
    y->expect_dtype(DType::s32, fn, "y");
    y->expect_shape(out, fn, "y");
  }
  check(p.w_zero_points.empty() || static_cast<int64_t>(p.w_zero_points.size()) == w.dim(0), fn,
        "w_zero_points", std::to_string(p.w_zero_points.size()) + " values",
        "none or one per output channel (" + std::to_string(w.dim(0)) + ")");
  const int64_t mx = value_bound(x, p.x_max_abs, fn, "x_max_abs");
  const int64_t mw = value_bound(w, p.w_max_abs, fn, "w_max_abs");
  const int32_t zx = with_zero_points ? p.x_zero_point : 0;
  int32_t zw = 0;  // the largest |zero point| of w bounds every channel
  if (with_zero_points)
    for (int64_t oc = 0; oc < w.dim(0); ++oc)
      if (std::abs(int64_t{p.w_zero_point_at(oc)}) > std::abs(int64_t{zw}))
        zw = p.w_zero_point_at(oc);
  const int64_t taps = w.dim(1) * w.dim(2) * w.dim(3);
  const int64_t limit = int_conv2d_max_taps(mx, mw, zx, zw);
  check(taps <= limit, fn, "w",
        "shape " + shape_text(w.shape()) + " (" + std::to_string(taps) + " taps per output)",
        "at most " + std::to_string(limit) + " taps for an int32 accumulator with |x| <= " +
            std::to_string(mx) + " (" + dtype_name(x.dtype()) + "), |w| <= " + std::to_string(mw) +
            " (" + dtype_name(w.dtype()) + "), zero points " + std::to_string(zx) + " and " +
            std::to_string(zw));
  return out;
}

// Calls tap(x_value_or_pad, inside, w_value) over the window of output
// (n, oc, oh, ow) in (ic, ki, kj) order; pad_value is read outside the input.
template <class F>
void for_each_tap(const TensorView& x, const TensorView& w, const IntConv2dParams& p, int64_t n,
                  int64_t oc, int64_t oh, int64_t ow, int64_t pad_value, F&& tap) {
  const Window2d& win = p.window;
  const int64_t ic_per_group = w.dim(1), opg = w.dim(0) / p.groups;
  const int64_t H = x.dim(2), W = x.dim(3);
  const int64_t c0 = (oc / opg) * ic_per_group;
  for (int64_t ic = 0; ic < ic_per_group; ++ic)
    for (int64_t ki = 0; ki < w.dim(2); ++ki)  // seed: 0..KH (typo), really 0..KH-1
      for (int64_t kj = 0; kj < w.dim(3); ++kj) {
        const int64_t h = oh * win.stride_h - win.pad_top + ki * win.dilation_h;
        const int64_t v = ow * win.stride_w - win.pad_left + kj * win.dilation_w;
        const bool inside = h >= 0 && h < H && v >= 0 && v < W;
        const int64_t xv = inside ? detail::load_int(x, n * x.stride(0) + (c0 + ic) * x.stride(1) +
                                                            h * x.stride(2) + v * x.stride(3))
                                  : pad_value;
        const int64_t wv = detail::load_int(
            w, oc * w.stride(0) + ic * w.stride(1) + ki * w.stride(2) + kj * w.stride(3));
        tap(xv, wv);
      }
}

template <class F>
void for_each_output(const TensorView& y, F&& body) {
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t oc = 0; oc < y.dim(1); ++oc)
      for (int64_t oh = 0; oh < y.dim(2); ++oh)
        for (int64_t ow = 0; ow < y.dim(3); ++ow)
          y.at<int32_t>(n, oc, oh, ow) = body(n, oc, oh, ow);
}

}  // namespace

Shape int_conv2d_output_shape(const Shape& x, const Shape& w, const IntConv2dParams& p) {
  constexpr const char* fn = "npukit::int_conv2d";
  check(x.size() == 4, fn, "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  check(w.size() == 4, fn, "w", "shape " + shape_text(w), "a 4-D (OC, C/groups, KH, KW) tensor");
  check_range(fn, "groups", p.groups, 1, std::numeric_limits<int64_t>::max());
  check(x[1] % p.groups == 0, fn, "groups", std::to_string(p.groups),
        "a divisor of the input channels " + std::to_string(x[1]));
  check(w[0] % p.groups == 0 && w[0] > 0, fn, "groups", std::to_string(p.groups),
        "a divisor of the output channels " + std::to_string(w[0]));
  check(w[1] == x[1] / p.groups, fn, "w", "shape " + shape_text(w),
        "dimension 1 = C/groups = " + std::to_string(x[1] / p.groups));
  check(p.window.kernel_h == w[2] && p.window.kernel_w == w[3], fn, "window.kernel",
        std::to_string(p.window.kernel_h) + "x" + std::to_string(p.window.kernel_w),
        "the kernel of w, " + std::to_string(w[2]) + "x" + std::to_string(w[3]));
  check(p.window.ins_h == 0 && p.window.ins_w == 0 && !p.window.ceil_mode, fn, "window",
        "ins_h/ins_w/ceil_mode set", "no zero insertion and no ceil_mode for convolution");
  const int64_t oh = axis_output_size(axis_h(p.window, x[2]), fn, 'h');
  const int64_t ow = axis_output_size(axis_w(p.window, x[3]), fn, 'w');
  return {x[0], w[0], oh, ow};
}

int64_t int_conv2d_max_taps(DType x, DType w, int32_t x_zero_point, int32_t w_zero_point) {
  return int_conv2d_max_taps(max_abs_of(x), max_abs_of(w), x_zero_point, w_zero_point);
}

int64_t int_conv2d_max_taps(int64_t mx, int64_t mw, int32_t x_zero_point, int32_t w_zero_point) {
  check_range("npukit::int_conv2d_max_taps", "x_max_abs", mx, 0, int64_t{1} << 31);
  check_range("npukit::int_conv2d_max_taps", "w_max_abs", mw, 0, int64_t{1} << 31);
  const int64_t zx = std::abs(int64_t{x_zero_point}), zw = std::abs(int64_t{w_zero_point});
  const int64_t per_tap = mx * mw + zx * mw + zw * mx + zx * zw;  // < 2^64 / 4: no overflow
  if (per_tap == 0) return std::numeric_limits<int64_t>::max();
  return std::numeric_limits<int32_t>::max() / per_tap;
}

void seed_conv2d(const TensorView& x, const TensorView& w, const TensorView& y,
                 const IntConv2dParams& p) {
  validate(x, w, &y, p, false, "npukit::seed_conv2d");
  for_each_output(y, [&](int64_t n, int64_t oc, int64_t oh, int64_t ow) {
    int32_t acc = 0;  // bounded by the validated worst case
    for_each_tap(x, w, p, n, oc, oh, ow, 0, [&](int64_t xv, int64_t wv) {
      acc += static_cast<int32_t>(xv) * static_cast<int32_t>(wv);
    });
    return acc;
  });
}

void zero_point_conv2d_expanded(const TensorView& x, const TensorView& w, const TensorView& y,
                                const IntConv2dParams& p) {
  validate(x, w, &y, p, true, "npukit::zero_point_conv2d_expanded");
  const int32_t zx = p.x_zero_point;
  const auto taps = static_cast<int32_t>(w.dim(1) * w.dim(2) * w.dim(3));
  // sum(Wq[oc]) once per output channel.
  std::vector<int32_t> w_sum(static_cast<size_t>(w.dim(0)), 0);
  for (int64_t oc = 0; oc < w.dim(0); ++oc)
    for (int64_t ic = 0; ic < w.dim(1); ++ic)
      for (int64_t ki = 0; ki < w.dim(2); ++ki)
        for (int64_t kj = 0; kj < w.dim(3); ++kj)
          w_sum[static_cast<size_t>(oc)] += static_cast<int32_t>(detail::load_int(
              w, oc * w.stride(0) + ic * w.stride(1) + ki * w.stride(2) + kj * w.stride(3)));
  for_each_output(y, [&](int64_t n, int64_t oc, int64_t oh, int64_t ow) {
    const int32_t zw = p.w_zero_point_at(oc);
    const int32_t constant = taps * zx * zw;
    int32_t conv = 0, window_sum = 0;
    for_each_tap(x, w, p, n, oc, oh, ow, zx, [&](int64_t xv, int64_t wv) {
      conv += static_cast<int32_t>(xv) * static_cast<int32_t>(wv);
      window_sum += static_cast<int32_t>(xv);
    });
    return conv - zx * w_sum[static_cast<size_t>(oc)] - zw * window_sum + constant;
  });
}

void zero_point_conv2d_direct(const TensorView& x, const TensorView& w, const TensorView& y,
                              const IntConv2dParams& p) {
  validate(x, w, &y, p, true, "npukit::zero_point_conv2d_direct");
  for_each_output(y, [&](int64_t n, int64_t oc, int64_t oh, int64_t ow) {
    int64_t acc = 0;  // wide on purpose: this is the reference
    for_each_tap(x, w, p, n, oc, oh, ow, p.x_zero_point, [&](int64_t xv, int64_t wv) {
      acc += (xv - p.x_zero_point) * (wv - p.w_zero_point_at(oc));
    });
    return static_cast<int32_t>(acc);
  });
}

Tensor mrt_conv2d(const TensorView& x, const TensorView& w, const IntConv2dParams& p,
                  CvmFloat requant, int out_precision) {
  Tensor acc(DType::s32, int_conv2d_output_shape(x.shape(), w.shape(), p));
  zero_point_conv2d_expanded(x, w, acc, p);
  cvm_clip_bound(out_precision);  // validates the precision before any work
  int32_t* v = acc.data<int32_t>();
  for (int64_t i = 0; i < acc.numel(); ++i)
    v[i] = static_cast<int32_t>(cvm_requantize(v[i], requant, out_precision));
  return acc;
}

}  // namespace npukit
