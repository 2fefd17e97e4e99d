#include <cmath>
#include <limits>

#include "npukit/ops/reduce.hpp"

namespace npukit::ref {

void reduce_f32(ReduceOp op, const TensorView& x, const TensorView& y,
                const std::vector<bool>& reduced) {
  // Both views padded to 4-D; y has size 1 on reduced axes.
  const int pad = 4 - x.rank();
  int64_t xd[4], xs[4], ys[4], red[4];
  int64_t count = 1;
  for (int i = 0; i < 4; ++i) {
    const bool real = i >= pad;
    xd[i] = real ? x.dim(i - pad) : 1;
    xs[i] = real ? x.stride(i - pad) : 0;
    ys[i] = real ? y.stride(i - pad) : 0;
    red[i] = real && reduced[static_cast<size_t>(i - pad)] ? xd[i] : 1;
    count *= red[i];
  }
  int64_t keep[4];
  for (int i = 0; i < 4; ++i) keep[i] = red[i] == 1 ? xd[i] : 1;
  const float* xp = static_cast<const float*>(x.raw());
  float* yp = static_cast<float*>(y.raw());
  for (int64_t a = 0; a < keep[0]; ++a)
    for (int64_t b = 0; b < keep[1]; ++b)
      for (int64_t c = 0; c < keep[2]; ++c)
        for (int64_t d = 0; d < keep[3]; ++d) {
          float acc = op == ReduceOp::max   ? -std::numeric_limits<float>::infinity()
                      : op == ReduceOp::min ? std::numeric_limits<float>::infinity()
                                            : 0.0f;
          bool nan = false;
          const float* base = xp + a * xs[0] + b * xs[1] + c * xs[2] + d * xs[3];
          for (int64_t i = 0; i < red[0]; ++i)
            for (int64_t j = 0; j < red[1]; ++j)
              for (int64_t k = 0; k < red[2]; ++k)
                for (int64_t l = 0; l < red[3]; ++l) {
                  const float v = base[i * xs[0] + j * xs[1] + k * xs[2] + l * xs[3]];
                  switch (op) {
                    case ReduceOp::sum:
                    case ReduceOp::mean:
                      acc += v;
                      break;
                    case ReduceOp::max:
                      if (std::isnan(v)) nan = true;
                      if (v > acc) acc = v;
                      break;
                    case ReduceOp::min:
                      if (std::isnan(v)) nan = true;
                      if (v < acc) acc = v;
                      break;
                    case ReduceOp::l2:
                      acc += v * v;
                      break;
                  }
                }
          if (nan) acc = std::numeric_limits<float>::quiet_NaN();
          if (op == ReduceOp::mean) acc = acc / static_cast<float>(count);
          if (op == ReduceOp::l2) acc = std::sqrt(acc);
          yp[a * ys[0] + b * ys[1] + c * ys[2] + d * ys[3]] = acc;
        }
}

}  // namespace npukit::ref
