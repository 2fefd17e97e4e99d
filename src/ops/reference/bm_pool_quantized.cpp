// Reference BM168x int8 pooling: int32 accumulation (|sum| <= 2047*2047*255
// < 2^31 for the unit's largest window, so int32 cannot overflow; int64 is
// used anyway), round-half-up right shift, saturation, optional ReLU.
#include <algorithm>
#include <limits>

#include "npukit/ops/bm_pool_quantized.hpp"
#include "npukit/parallel.hpp"

namespace npukit::ref {

template <class T>
void bm_pool_quantized(const TensorView& x, const TensorView& y, const BmPoolQuantParams& p) {
  const AxisTaps th = axis_taps(axis_h(p.window, x.dim(2)), y.dim(2));
  const AxisTaps tw = axis_taps(axis_w(p.window, x.dim(3)), y.dim(3));
  const int64_t C = x.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t KH = p.window.kernel_h, KW = p.window.kernel_w;
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  parallel_for(x.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t acc = p.mode == QuantPoolMode::max ? lo : 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          for (int64_t kw = 0; kw < KW; ++kw) {
            const Tap tap = combine(th.kind_at(oh, kh), tw.kind_at(ow, kw));
            // Padding is 0 for avg and the type's lowest value for max.
            int64_t v = 0;
            if (tap == Tap::input)
              v = x.at<T>(n, c, th.index_at(oh, kh), tw.index_at(ow, kw));
            else if (tap != Tap::inserted_zero && p.mode == QuantPoolMode::max)
              v = lo;
            acc = p.mode == QuantPoolMode::max ? std::max(acc, v) : acc + v;
          }
        }
        if ((p.mode == QuantPoolMode::avg || p.max_rshift) && p.rshift > 0)
          acc = (acc + (int64_t{1} << (p.rshift - 1))) >> p.rshift;  // arithmetic, ties up
        acc = std::clamp(acc, lo, hi);
        if (p.relu) acc = std::max<int64_t>(acc, 0);
        y.at<T>(n, c, oh, ow) = static_cast<T>(acc);
      }
    }
  });
}

template void bm_pool_quantized<int8_t>(const TensorView&, const TensorView&,
                                        const BmPoolQuantParams&);
template void bm_pool_quantized<uint8_t>(const TensorView&, const TensorView&,
                                         const BmPoolQuantParams&);

}  // namespace npukit::ref
