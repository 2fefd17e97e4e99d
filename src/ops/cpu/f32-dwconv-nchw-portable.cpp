// Plane kernel of the fp32 depthwise family in plain C++ (any CPU): one output
// at a time, the reference's operations in its order (DwPlane::flat, a
// vector walk, changes nothing here).
#include <cmath>

#include "dwconv.hpp"

namespace npukit::cpu {

void f32_dwconv_plane_portable(const DwPlane& p) {
  for (int64_t oh = 0; oh < p.oh; ++oh) {
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      const float* x = p.x + oh * p.row + ow;
      float& out = p.y[oh * p.y_row + ow];
      if (p.interleaved) {
        float a[2] = {0.0f, 0.0f};
        for (int64_t t = 0; t < p.taps; ++t) a[t % 2] = a[t % 2] + x[p.tap[t]] * p.w[t];
        float r = a[0] + a[1];
        if (p.has_bias) r = r + p.bias;
        out = p.result_add ? r + out : r;
      } else if (p.fma) {  // mlas_nchwc: one FMA chain from +0
        float acc = 0.0f;
        for (int64_t t = 0; t < p.taps; ++t) acc = std::fma(x[p.tap[t]], p.w[t], acc);
        if (p.has_bias) acc = acc + p.bias;
        out = p.result_add ? out + acc : acc;
      } else {
        float acc = 0.0f;
        for (int64_t t = 0; t < p.taps; ++t) acc = acc + x[p.tap[t]] * p.w[t];
        if (p.has_bias) acc = acc + p.bias;
        out = p.result_add ? out + acc : acc;
      }
      if (p.clip) {  // ref::clip_f32's two steps
        if (out < p.clip_min) out = p.clip_min;
        if (out > p.clip_max) out = p.clip_max;
      }
    }
  }
}

}  // namespace npukit::cpu
