// Reference of the table-driven 8-bit operators: MLAS's logistic function
// and the table lookups, written as plain loops.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "npukit/ops/qlinear_lookup.hpp"

namespace npukit::ref {

float mlas_logistic(float v, QLogistic kind) {
  // Clamp written so that NaN passes through (as MLAS's scalar tail does).
  v = v < -18.0f ? -18.0f : v;
  v = v > 18.0f ? 18.0f : v;
  // Eigen's odd rational approximation, the coefficients MLAS uses.
  constexpr float a9 = 4.37031012579801e-11f, a7 = 1.15627324459942e-07f,
                  a5 = 6.08574864600143e-05f, a3 = 8.51377133304701e-03f,
                  a1 = 2.48287947061529e-01f;
  constexpr float b10 = 6.10247389755681e-13f, b8 = 5.76102136993427e-09f,
                  b6 = 6.29106785017040e-06f, b4 = 1.70198817374094e-03f,
                  b2 = 1.16817656904453e-01f, b0 = 9.93151921023180e-01f;
  const bool fused = kind == QLogistic::mlas_fma3;
  auto madd = [fused](float a, float b, float c) {
    if (fused) return std::fma(a, b, c);
    volatile float m = a * b;  // one rounding for the product, one for the sum
    return m + c;
  };
  const float v2 = v * v;
  float p = madd(v2, a9, a7);
  p = madd(p, v2, a5);
  p = madd(p, v2, a3);
  p = madd(p, v2, a1);
  p = p * v;
  float q = madd(v2, b10, b8);
  q = madd(q, v2, b6);
  q = madd(q, v2, b4);
  q = madd(q, v2, b2);
  q = madd(q, v2, b0);
  const float r = p / q + 0.5f;
  return std::isnan(r) ? r : std::clamp(r, 0.0f, 1.0f);
}

void qlinear_lookup(const TensorView& x, const TensorView& y, const QLookupTable& table) {
  const auto* xp = static_cast<const uint8_t*>(x.raw());
  auto* yp = static_cast<uint8_t*>(y.raw());
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = table[xp[i]];
}

void qlinear_concat(const std::vector<TensorView>& x,
                    const std::vector<std::optional<QLookupTable>>& tables, const TensorView& y,
                    int64_t axis) {
  // Each input contributes a block of dim(axis) * inner bytes per outer index.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.dim(static_cast<int>(d));
  for (int64_t d = axis + 1; d < y.rank(); ++d) inner *= y.dim(static_cast<int>(d));
  const int64_t out_pitch = y.dim(static_cast<int>(axis)) * inner;
  auto* yp = static_cast<uint8_t*>(y.raw());
  int64_t offset = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const int64_t pitch = x[k].dim(static_cast<int>(axis)) * inner;
    const auto* xp = static_cast<const uint8_t*>(x[k].raw());
    for (int64_t o = 0; o < outer; ++o) {
      uint8_t* dst = yp + o * out_pitch + offset;
      const uint8_t* src = xp + o * pitch;
      if (!tables[k])
        std::memcpy(dst, src, static_cast<size_t>(pitch));
      else
        for (int64_t i = 0; i < pitch; ++i) dst[i] = (*tables[k])[src[i]];
    }
    offset += pitch;
  }
}

}  // namespace npukit::ref
