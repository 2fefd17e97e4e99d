// Fast form of ref::conv_accumulate_mlas_pairs (same int32 results): each
// output pixel's im2col row (raw u8 codes in ORT's (kh, kw, ic) order, x_zp in
// the padding) is built once and reused for every output channel of its group,
// instead of re-deriving each tap per channel. The pair order and the int16
// saturation are those of the reference; only the loop nest differs.
#include <vector>

#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::cpu {

namespace {

int32_t saturate16(int32_t v) {
  return v < -32768 ? -32768 : v > 32767 ? 32767 : v;
}

// Sum over k of pairs (2j, 2j+1) of r[k]*w[k], each pair saturated to int16;
// K is even (rows are zero-padded).
int64_t pair_dot(const int32_t* r, const int32_t* w, int64_t K) {
  int64_t s = 0;
  for (int64_t k = 0; k < K; k += 2) s += saturate16(r[k] * w[k] + r[k + 1] * w[k + 1]);
  return s;
}

}  // namespace

void conv_accumulate_mlas_pairs(const TensorView& x, const TensorView& w, const TensorView& acc,
                                const Window2d& window, int64_t groups, int32_t x_zp,
                                const QuantParams& w_q) {
  const int64_t OC = w.dim(0), ICg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const int64_t OH = acc.dim(2), OW = acc.dim(3), OCg = OC / groups, K = ICg * KH * KW;
  const int64_t K2 = K + (K & 1);  // an odd K pairs its last product with 0
  // Weights in (kh, kw, ic) order, zero-padded to K2, and their sums.
  std::vector<int32_t> wk(static_cast<size_t>(OC * K2), 0);
  std::vector<int64_t> w_sum(static_cast<size_t>(OC), 0);
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t ic = 0; ic < ICg; ++ic) {
          const int32_t v = detail::code_at(
              w.raw(), w.dtype(),
              o * w.stride(0) + ic * w.stride(1) + kh * w.stride(2) + kw * w.stride(3));
          wk[static_cast<size_t>(o * K2 + (kh * KW + kw) * ICg + ic)] = v;
          w_sum[static_cast<size_t>(o)] += v;
        }
  const AxisTaps th = axis_taps(axis_h(window, x.dim(2)), OH);
  const AxisTaps tw = axis_taps(axis_w(window, x.dim(3)), OW);
  // One task per (image, group, output row): disjoint outputs, fixed order.
  parallel_for(x.dim(0) * groups * OH, [&](int64_t t) {
    const int64_t oh = t % OH, g = (t / OH) % groups, n = t / (OH * groups);
    std::vector<int32_t> row(static_cast<size_t>(K2), 0);
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t x_sum = 0;
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          const bool inside = combine(th.kind_at(oh, kh), tw.kind_at(ow, kw)) == Tap::input;
          const int64_t base = inside ? n * x.stride(0) + g * ICg * x.stride(1) +
                                            th.index_at(oh, kh) * x.stride(2) +
                                            tw.index_at(ow, kw) * x.stride(3)
                                      : 0;
          int32_t* r = row.data() + (kh * KW + kw) * ICg;
          for (int64_t ic = 0; ic < ICg; ++ic) {
            r[ic] = inside ? detail::code_at(x.raw(), x.dtype(), base + ic * x.stride(1)) : x_zp;
            x_sum += r[ic];
          }
        }
      for (int64_t o = g * OCg; o < (g + 1) * OCg; ++o) {
        const int64_t wz = w_q.zero_point_at(o);
        const int64_t s = pair_dot(row.data(), wk.data() + o * K2, K2);
        acc.at<int32_t>(n, o, oh, ow) = detail::wrap_int32(
            s - x_zp * w_sum[static_cast<size_t>(o)] - wz * x_sum + K * x_zp * wz);
      }
    }
  });
}

}  // namespace npukit::cpu
