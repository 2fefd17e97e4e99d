// Reference pooling: for each output, walk the window tap by tap in row-major
// order and apply the semantics in Pool2dParams literally.
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "npukit/ops/pool2d.hpp"
#include "npukit/parallel.hpp"
#include "ops/reference/x86_float.hpp"

namespace npukit::ref {

namespace {

struct Taps2d {
  AxisTaps h, w;
};

Taps2d make_taps(const TensorView& x, const TensorView& y, const Window2d& win) {
  return {axis_taps(axis_h(win, x.dim(2)), y.dim(2)), axis_taps(axis_w(win, x.dim(3)), y.dim(3))};
}

float pad_as_float(PadValue v) {
  switch (v) {
    case PadValue::neg_inf:
      return -std::numeric_limits<float>::infinity();
    case PadValue::neg_flt_max:
      return -FLT_MAX;
    case PadValue::zero:
      return 0.0f;
  }
  return 0.0f;
}

// The running max starts at -FLT_MAX only where the hardware does (OKKernel).
float max_start(PadValue v) {
  return v == PadValue::neg_flt_max ? -FLT_MAX : -std::numeric_limits<float>::infinity();
}

}  // namespace

namespace {

// Fp32Accumulation::interleaved avg/sum: every tap of the full window, padding
// and inserted zeros as 0, goes to accumulator A[t % 2]; averages multiply
// each tap by R = 1/divisor before adding (docs/npu-simulator.md, "Same numbers as the vendor's
// C-model").
void pool2d_f32_interleaved(const TensorView& x, const TensorView& y, const Pool2dParams& p,
                            const Taps2d& t) {
  const int64_t C = x.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t KH = p.window.kernel_h, KW = p.window.kernel_w;
  const Fp32Arith f{p.flush_denormals};
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc[2] = {0.0f, 0.0f};
        int64_t valid = 0, clipped = 0;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const Tap tap = combine(t.h.kind_at(oh, kh), t.w.kind_at(ow, kw));
            valid += tap == Tap::input || tap == Tap::inserted_zero;
            clipped += tap != Tap::outside;
          }
        const int64_t div = avg_divisor(p.divisor, KH * KW, valid, clipped);
        const float r = div > 0 ? 1.0f / static_cast<float>(div) : 0.0f;
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const Tap tap = combine(t.h.kind_at(oh, kh), t.w.kind_at(ow, kw));
            const float v = tap == Tap::input
                                ? x.at<float>(n, c, t.h.index_at(oh, kh), t.w.index_at(ow, kw))
                                : 0.0f;
            const float term = p.mode == PoolMode::avg ? f.mul(v, r) : f.in(v);
            float& a = acc[(kh * KW + kw) % 2];
            a = f.add(a, term);
          }
        }
        float out = f.add(acc[0], acc[1]);
        if (p.mode == PoolMode::sum) out = f.mul(out, p.coeff);
        y.at<float>(n, c, oh, ow) = out;
      }
    }
  });
}

// With end_pad_crops, whether tap k of output o lies at or past in + pad_end
// (only a negative pad_end puts input elements there).
std::vector<bool> cropped_taps(const AxisWindow& a, const AxisTaps& t, bool crops) {
  std::vector<bool> cut(t.kind.size(), false);
  if (!crops || a.pad_end >= 0) return cut;
  for (int64_t o = 0; o < t.out; ++o)
    for (int64_t k = 0; k < t.kernel; ++k)
      cut[static_cast<size_t>(o * t.kernel + k)] =
          o * a.stride - a.pad_begin + k * a.dilation >= a.inserted_size() + a.pad_end;
  return cut;
}

}  // namespace

void pool2d_f32(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  const PoolLoop loop = effective_pool_loop(p, x.dim(1));
  if (loop == PoolLoop::mlas) return pool2d_f32_mlas(x, y, p);
  if (loop == PoolLoop::mlas_nchwc) return pool2d_f32_mlas_nchwc(x, y, p);
  const Taps2d t = make_taps(x, y, p.window);
  if (p.mode != PoolMode::max && p.accumulation == Fp32Accumulation::interleaved)
    return pool2d_f32_interleaved(x, y, p, t);
  const Fp32Arith f{p.flush_denormals};
  const int64_t C = x.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t KH = p.window.kernel_h, KW = p.window.kernel_w;
  const float pad = pad_as_float(p.pad_value);
  const bool first_tap = p.nan == MaxNaN::first_tap;
  const std::vector<bool> cut_h = cropped_taps(axis_h(p.window, x.dim(2)), t.h, p.end_pad_crops);
  const std::vector<bool> cut_w = cropped_taps(axis_w(p.window, x.dim(3)), t.w, p.end_pad_crops);
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc = p.mode == PoolMode::max
                        ? max_start(first_tap ? PadValue::neg_flt_max : p.pad_value)
                        : 0.0f;
        int64_t valid = 0, clipped = 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const Tap tap = combine(t.h.kind_at(oh, kh), t.w.kind_at(ow, kw));
            // A ceil_mode window's taps past the end padding are not part of the
            // padded input: they count for nothing and hold no pad value.
            if (tap == Tap::outside) continue;
            if (cut_h[static_cast<size_t>(oh * KH + kh)] ||
                cut_w[static_cast<size_t>(ow * KW + kw)])
              continue;
            if (tap == Tap::padding) {
              ++clipped;
              if (p.mode == PoolMode::max && !first_tap && !std::isnan(acc) && pad > acc) acc = pad;
              continue;
            }
            // An inserted zero is an element of the expanded input.
            const float v =
                tap == Tap::input
                    ? f.in(x.at<float>(n, c, t.h.index_at(oh, kh), t.w.index_at(ow, kw)))
                    : 0.0f;
            ++valid;
            ++clipped;
            if (p.mode == PoolMode::max) {
              if ((first_tap && valid == 1) || v > acc ||
                  (p.nan == MaxNaN::propagate && std::isnan(v)))
                acc = v;
            } else {
              // NaN payloads as x86 gives them; under FTZ every partial sum is flushed.
              acc = f.out(x86_add(acc, v));
            }
          }
        }
        float out = acc;
        if (p.mode == PoolMode::avg) {
          const int64_t div = avg_divisor(p.divisor, KH * KW, valid, clipped);
          out = div > 0 ? acc / static_cast<float>(div) : 0.0f;
        } else if (p.mode == PoolMode::sum) {
          out = f.mul(acc, p.coeff);
        }
        y.at<float>(n, c, oh, ow) = f.out(out);
      }
    }
  });
}

template <class T>
void max_pool2d_int(const TensorView& x, const TensorView& y, const Pool2dParams& p) {
  const Taps2d t = make_taps(x, y, p.window);
  const int64_t C = x.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t KH = p.window.kernel_h, KW = p.window.kernel_w;
  // Integer padding: the lowest value unless the semantics pad with zero.
  const T low = std::numeric_limits<T>::lowest();
  const T pad = p.pad_value == PadValue::zero ? T(0) : low;
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        T m = low;
        bool any_input = false;
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const Tap tap = combine(t.h.kind_at(oh, kh), t.w.kind_at(ow, kw));
            if (tap == Tap::outside) continue;  // past the end padding (ceil_mode)
            any_input = any_input || tap == Tap::input || tap == Tap::inserted_zero;
            const T v = tap == Tap::input
                            ? x.at<T>(n, c, t.h.index_at(oh, kh), t.w.index_at(ow, kw))
                        : tap == Tap::inserted_zero ? T(0)
                                                    : pad;
            if (v > m) m = v;
          }
        }
        y.at<T>(n, c, oh, ow) = !any_input && p.empty_max_is_zero ? T(0) : m;
      }
    }
  });
}

template void max_pool2d_int<int8_t>(const TensorView&, const TensorView&, const Pool2dParams&);
template void max_pool2d_int<uint8_t>(const TensorView&, const TensorView&, const Pool2dParams&);

}  // namespace npukit::ref
