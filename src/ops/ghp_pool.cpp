// Whole-tensor references of the GHP-FPGA pool and add engines: plain loops
// over the window, then the post-processing unit of quant/ghp.cpp.
#include "npukit/ops/ghp_pool.hpp"

#include <algorithm>
#include <cmath>

#include "npukit/error.hpp"
#include "npukit/quant/ghp.hpp"
#include "npukit/quant/rounding.hpp"

namespace npukit::ghp {

namespace {

void check_window(const Window2d& w, const char* fn) {
  check(w.dilation_h == 1 && w.dilation_w == 1, fn, "dilation",
        std::to_string(w.dilation_h) + "x" + std::to_string(w.dilation_w),
        "1x1 (the pool engine has no dilation)");
  check(w.ins_h == 0 && w.ins_w == 0, fn, "ins",
        std::to_string(w.ins_h) + "x" + std::to_string(w.ins_w), "0x0 (no zero insertion)");
}

}  // namespace

Shape pool_output_shape(const Shape& x, const Window2d& w, const char* fn) {
  check(x.size() == 4, fn, "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  check_window(w, fn);
  const int64_t oh = axis_output_size(axis_h(w, x[2]), fn, 'h');
  const int64_t ow = axis_output_size(axis_w(w, x[3]), fn, 'w');
  return {x[0], x[1], oh, ow};
}

namespace {

// Calls f(n, c, oh, ow, taps) where taps(i, j) is the u8 value or -1 outside the input.
template <class F>
void for_each_window(const TensorView& x, const TensorView& y, const Window2d& w, F&& f) {
  const AxisTaps th = axis_taps(axis_h(w, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(w, x.dim(3)), y.dim(3));
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t c = 0; c < x.dim(1); ++c)
      for (int64_t oh = 0; oh < y.dim(2); ++oh)
        for (int64_t ow = 0; ow < y.dim(3); ++ow) {
          auto tap = [&](int64_t i, int64_t j) -> int {
            const int64_t r = th.index_at(oh, i), q = tw.index_at(ow, j);
            if (r < 0 || q < 0) return -1;
            return x.at<uint8_t>(n, c, r, q);
          };
          y.at<uint8_t>(n, c, oh, ow) = f(tap);
        }
}

}  // namespace

PoolEngineParams avg_pool_engine_params(Profile profile, const Window2d& window, double x_scale,
                                        int x_zp, double y_scale, int y_zp) {
  constexpr const char* fn = "npukit::ghp::avg_pool_engine_params";
  check(std::isfinite(x_scale) && x_scale > 0, fn, "x_scale", std::to_string(x_scale),
        "a finite value > 0");
  check(std::isfinite(y_scale) && y_scale > 0, fn, "y_scale", std::to_string(y_scale),
        "a finite value > 0");
  check_range(fn, "x_zp", x_zp, 0, 255);
  PoolEngineParams p;
  p.window = window;
  p.pad_value = x_zp;  // count_include_pad = 1: padding holds X_z
  const int64_t n = window.kernel_h * window.kernel_w;
  p.offset = -n * x_zp;
  p.sum_bits = semantics_base(profile) == Profile::ghp_rtl ? kPoolSumBits : 0;
  // The compiler computes M1 = x_scale / (y_scale * N) in double (float32
  // scales of a model convert exactly).
  p.post =
      post_proc(profile, decompose_multiplier(x_scale / (y_scale * static_cast<double>(n))), y_zp);
  return p;
}

void ghp_pool_engine_u8(const TensorView& x, const TensorView& y, const PoolEngineParams& p) {
  constexpr const char* fn = "npukit::ghp::ghp_pool_engine_u8";
  x.expect_dtype(DType::u8, fn, "x");
  y.expect_dtype(DType::u8, fn, "y");
  y.expect_shape(pool_output_shape(x.shape(), p.window, fn), fn, "y");
  check_range(fn, "pad_value", p.pad_value, 0, 255);
  check_range(fn, "sum_bits", p.sum_bits, 0, 40);
  check_range(fn, "offset", p.offset, -(int64_t{1} << 32), int64_t{1} << 32);
  check_post_proc(p.post, fn);
  const int64_t kh = p.window.kernel_h, kw = p.window.kernel_w;
  const int64_t sum_mask = p.sum_bits > 0 ? (int64_t{1} << p.sum_bits) - 1 : -1;
  for_each_window(x, y, p.window, [&](auto tap) {
    int64_t r = 0;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        const int v = tap(i, j);
        const int64_t t = v < 0 ? p.pad_value : v;
        r = p.max ? std::max(r, t) : r + t;
      }
    return requantize((r & sum_mask) + p.offset, p.post);
  });
}

void ghp_max_pool_u8(const TensorView& x, const TensorView& y, const Window2d& window,
                     PostRounding rounding) {
  PoolEngineParams e;
  e.max = true;
  e.window = window;
  e.post = PostProc{1024, 10, 0, rounding};
  ghp_pool_engine_u8(x, y, e);
}

AddParams add_params(Profile profile, double a_scale, int a_zp, double b_scale, int b_zp,
                     double c_scale, int c_zp) {
  constexpr const char* fn = "npukit::ghp::add_params";
  for (auto [name, s] : {std::pair{"a_scale", a_scale}, {"b_scale", b_scale}, {"c_scale", c_scale}})
    check(std::isfinite(s) && s > 0, fn, name, std::to_string(s), "a finite value > 0");
  const double m1 = a_scale / c_scale;
  const double m2 = b_scale / c_scale;
  // One exponent for both: the larger one is decomposed like a single M.
  const Multiplier big = decompose_multiplier(std::max(m1, m2));
  const double unit = std::ldexp(1.0, big.n1);
  AddParams p;
  p.n = big.n1;
  p.m1 = m1 >= m2 ? big.m1 : round_to_int(m1 * unit, Rounding::half_to_even);
  p.m2 = m2 > m1 ? big.m1 : round_to_int(m2 * unit, Rounding::half_to_even);
  p.a_zp = a_zp;
  p.b_zp = b_zp;
  p.c_zp = c_zp;
  p.rounding = post_rounding_for(profile);
  return p;
}

uint8_t add_requantize(int a, int b, const AddParams& p) {
  // Mode 2 of the PPU: two products of a 9-bit difference and a 26-bit m summed
  // exactly (|sum| < 2^35 fits the 37-bit adder), then the same shift and round.
  const int64_t sum = int64_t{a - p.a_zp} * p.m1 + int64_t{b - p.b_zp} * p.m2;
  return requantize_product(sum, p.n, p.c_zp, p.rounding);
}

void ghp_add_u8(const TensorView& a, const TensorView& b, const TensorView& c, const AddParams& p) {
  constexpr const char* fn = "npukit::ghp::ghp_add_u8";
  a.expect_dtype(DType::u8, fn, "a");
  b.expect_dtype(DType::u8, fn, "b");
  c.expect_dtype(DType::u8, fn, "c");
  b.expect_shape(a.shape(), fn, "b");
  c.expect_shape(a.shape(), fn, "c");
  check(a.is_contiguous() && b.is_contiguous() && c.is_contiguous(), fn, "layout", "strided",
        "contiguous tensors");
  check_range(fn, "m1", p.m1, 0, kM1Max);
  check_range(fn, "m2", p.m2, 0, kM1Max);
  check_range(fn, "n", p.n, kN1Min, kN1MaxRtl);
  check_range(fn, "a_zp", p.a_zp, 0, 255);
  check_range(fn, "b_zp", p.b_zp, 0, 255);
  check_range(fn, "c_zp", p.c_zp, 0, 255);
  const auto* pa = static_cast<const uint8_t*>(a.raw());
  const auto* pb = static_cast<const uint8_t*>(b.raw());
  auto* pc = static_cast<uint8_t*>(c.raw());
  for (int64_t i = 0; i < a.numel(); ++i) pc[i] = add_requantize(pa[i], pb[i], p);
}

}  // namespace npukit::ghp
