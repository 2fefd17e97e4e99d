// The chains of Fp32Accumulation::mlas_nchwc16/8 for one output of a
// convolution group (the rule is stated at the enum): shared by the
// reference, which walks them one output at a time, and the fast drivers,
// which reorder their steps by it. Tested against hand-written orders.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace npukit::detail {

struct MlasConvOrder {
  std::vector<int64_t> step;       // ic * K + kh * KW + kw, in summation order
  std::vector<int64_t> chain_end;  // chain c is step[chain_end[c - 1] .. chain_end[c])
};

// icg, ocg: channels per group; k: taps per channel (KH * KW); block: B.
inline MlasConvOrder mlas_conv_order(int64_t icg, int64_t ocg, int64_t k, int64_t groups,
                                     int64_t block) {
  MlasConvOrder o;
  auto end_chain = [&] { o.chain_end.push_back(static_cast<int64_t>(o.step.size())); };
  constexpr int64_t kRun = 128;  // MLAS's pointwise channel batch and SGEMM K stride
  if (groups > 1 && icg == 1 && ocg == 1 && groups % block == 0) {  // NCHWc depthwise
    for (int64_t t = 0; t < k; ++t) o.step.push_back(t);
    end_chain();
  } else if (groups == 1 && icg < block) {  // the NCHW-input kernel: a chain per input channel
    for (int64_t ic = 0; ic < icg; ++ic) {
      for (int64_t t = 0; t < k; ++t) o.step.push_back(ic * k + t);
      end_chain();
    }
  } else if (icg % block != 0 || (groups > 1 && ocg % block != 0)) {  // im2col + SGEMM
    for (int64_t s = 0; s < icg * k; ++s) {
      o.step.push_back(s);
      if ((s + 1) % kRun == 0 || s + 1 == icg * k) end_chain();
    }
  } else if (k == 1) {  // NCHWc pointwise: batches of 128 input channels
    for (int64_t ic = 0; ic < icg; ++ic) {
      o.step.push_back(ic);
      if ((ic + 1) % kRun == 0 || ic + 1 == icg) end_chain();
    }
  } else {  // NCHWc: a chain per block of input channels, taps outside
    for (int64_t b0 = 0; b0 < icg; b0 += block) {
      for (int64_t t = 0; t < k; ++t)
        for (int64_t ic = b0; ic < b0 + block; ++ic) o.step.push_back(ic * k + t);
      end_chain();
    }
  }
  return o;
}

}  // namespace npukit::detail
