// Reference QLinearAveragePool: for each output, walk the window tap by tap in
// row-major order and apply the arithmetic named by p.arith literally.
#include <cmath>

#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::ref {

namespace {

// ORT's global path: acc = sum(x) - x_zp*N exactly, fp32 multiplier
// x_scale / (y_scale*N), clamp(round(acc*M), lo - y_zp, hi - y_zp) + y_zp.
int32_t int_sum_float(int64_t sum, int64_t n, const QLinearAvgPoolParams& p, detail::CodeRange r) {
  const int64_t acc = sum - int64_t{p.x_zero_point} * n;
  const float m = p.x_scale / (p.y_scale * static_cast<float>(n));
  return detail::requantize_float(static_cast<int32_t>(acc), m, p.y_zero_point, r, p.rounding);
}

// PyTorch's test for its channels-last kernel: strides of a dense N, H, W, C order,
// size-1 dimensions ignored.
bool channels_last_contiguous(const TensorView& x) {
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (x.dim(d) == 1) continue;
    if (x.stride(d) != expected) return false;
    expected *= x.dim(d);
  }
  return true;
}

// One output's window, tap by tap in row-major order.
struct QAvgWindowSums {
  int64_t sum = 0, valid = 0;  // integer sum of the codes on the input, and their count
  int64_t clipped = 0;         // taps on the input or its padding
  float fsum = 0.0f;           // fp32 sum of the dequantized taps (float_mean)
};

// The per-call constants of the final step and what it reads.
struct QAvgFinal {
  const QLinearAvgPoolParams& p;
  QAvgArith arith;
  int64_t N;  // kernel_h * kernel_w
  detail::CodeRange r;
  ghp::PostProc post;  // int_sum_ghp
  int64_t sum_mask;    // int_sum_ghp: the sum's kept bits (-1: all)
  bool zp_inside;      // int_sum_requant: the zero point is added before rounding
};

// Seed 000: M1 = X_S / (N * Y_S) = 2^-n1 * m1, computed in double by the compiler.
ghp::PostProc ghp_post(const QLinearAvgPoolParams& p, int64_t N) {
  ghp::PostProc post;
  const double m1 =
      static_cast<double>(p.x_scale) / (static_cast<double>(N) * static_cast<double>(p.y_scale));
  post.rounding = p.ghp_rounding;
  const ghp::Multiplier mult = ghp::decompose_multiplier(m1, p.ghp_m1_edge);
  post.m1 = mult.m1;
  post.n1 = mult.n1;
  post.y_zp = p.y_zero_point;
  ghp::check_post_proc(post, "npukit::qlinear_average_pool");
  return post;
}

// The output code of one window under the call's arithmetic.
int32_t final_code(const QAvgFinal& f, const QAvgWindowSums& w) {
  const QLinearAvgPoolParams& p = f.p;
  const float lo = static_cast<float>(f.r.lo), hi = static_cast<float>(f.r.hi);
  switch (f.arith) {
    case QAvgArith::float_mean: {
      const int64_t div = avg_divisor(p.divisor, f.N, w.valid, w.clipped);
      const float avg = w.fsum / static_cast<float>(div);
      // ORT adds the zero point before rounding: nearbyint(avg / y_scale + y_zp).
      const float v = avg / p.y_scale + static_cast<float>(p.y_zero_point);
      return static_cast<int32_t>(round_to_int(v < lo ? lo : v > hi ? hi : v, p.rounding));
    }
    case QAvgArith::int_sum_float:
      return int_sum_float(w.sum, f.N, p, f.r);
    case QAvgArith::int_sum_ghp: {
      // Every tap off the input (padding, or past it for ceil_mode) reads X_z.
      int64_t s = w.sum + (f.N - w.valid) * p.x_zero_point;
      if (f.sum_mask >= 0) s &= f.sum_mask;
      return ghp::requantize(s - f.N * p.x_zero_point, f.post);
    }
    case QAvgArith::int_sum_requant: {
      const int64_t div = avg_divisor(p.divisor, f.N, w.valid, w.clipped);
      // No tap to average (PyTorch forbids the padding that allows it).
      if (div == 0) return p.y_zero_point;
      const auto acc = static_cast<int32_t>(w.sum - int64_t{p.x_zero_point} * w.valid);
      const float m = p.x_scale / p.y_scale / static_cast<float>(div);
      const float v = static_cast<float>(acc) * m;
      const auto zp = static_cast<float>(p.y_zero_point);
      const float rounded = f.zp_inside ? static_cast<float>(round_to_int(v + zp, p.rounding))
                                        : static_cast<float>(round_to_int(v, p.rounding)) + zp;
      return static_cast<int32_t>(rounded < lo ? lo : rounded > hi ? hi : rounded);
    }
    case QAvgArith::int_mean: {
      const int64_t div = avg_divisor(p.divisor, f.N, w.valid, w.clipped);
      // An empty window (only possible with padding >= kernel) is the zero point: MiCo's 0.
      return div == 0 ? p.y_zero_point
                      : static_cast<int32_t>(
                            saturate(div_round(w.sum, div, p.rounding), f.r.lo, f.r.hi));
    }
  }
  return 0;
}

}  // namespace

void qlinear_average_pool(const TensorView& x, const TensorView& y, const QLinearAvgPoolParams& p) {
  const Window2d& win = p.window;
  const AxisTaps th = axis_taps(axis_h(win, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(win, x.dim(3)), y.dim(3));
  const int64_t C = x.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t KH = win.kernel_h, KW = win.kernel_w, N = KH * KW;
  const DType t = x.dtype();
  const bool whole_image = p.whole_image_int_path && KH == x.dim(2) && KW == x.dim(3) &&
                           win.pad_top == 0 && win.pad_bottom == 0 && win.pad_left == 0 &&
                           win.pad_right == 0;
  const QAvgArith arith = whole_image ? QAvgArith::int_sum_float : p.arith;
  const bool zp_inside =
      p.zero_point == QZeroPointRounding::inside ||
      (p.zero_point == QZeroPointRounding::by_memory_format && !channels_last_contiguous(x));
  const QAvgFinal f{p,
                    arith,
                    N,
                    detail::code_range(t),
                    arith == QAvgArith::int_sum_ghp ? ghp_post(p, N) : ghp::PostProc{},
                    p.ghp_sum_bits > 0 ? (int64_t{1} << p.ghp_sum_bits) - 1 : -1,
                    zp_inside};
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    const char* base = static_cast<const char*>(x.raw());
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        QAvgWindowSums w;
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const Tap tap = combine(th.kind_at(oh, kh), tw.kind_at(ow, kw));
            w.clipped += tap != Tap::outside;
            if (tap != Tap::input) continue;
            const int64_t off = n * x.stride(0) + c * x.stride(1) +
                                th.index_at(oh, kh) * x.stride(2) +
                                tw.index_at(ow, kw) * x.stride(3);
            const int32_t q = detail::code_at(base, t, off);
            w.sum += q;
            ++w.valid;
            w.fsum += p.x_scale * static_cast<float>(q - p.x_zero_point);
          }
        }
        detail::store_code(y.raw(), t,
                           n * y.stride(0) + c * y.stride(1) + oh * y.stride(2) + ow * y.stride(3),
                           final_code(f, w));
      }
    }
  });
}

}  // namespace npukit::ref
