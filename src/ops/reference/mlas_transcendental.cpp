// Facts from ONNX Runtime's MLAS sources (read, not copied): the FMA3
// kernels' constants and operation order. Every "fma" below is one
// vfmadd instruction there (a single rounding); every other operation is
// rounded on its own. vmaxps/vminps return their second operand when either
// is NaN, which the comparisons below reproduce.
#include "ops/reference/mlas_transcendental.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace npukit::ref {

namespace {

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
// vmaxps(a, b) / vminps(a, b): b when either is NaN (or both are zeros).
float vmax(float a, float b) {
  return a > b ? a : b;
}
float vmin(float a, float b) {
  return a < b ? a : b;
}

}  // namespace

// MlasComputeLogisticF32KernelFma3: clamp to [-18, 18], odd/even rational
// polynomial, p/q + 0.5, then only a lower clamp at 0.
float mlas_logistic(float x) {
  const float v = vmin(18.0f, vmax(-18.0f, x));
  const float x2 = v * v;
  float p = std::fma(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = std::fma(x2, p, 6.08574864600143e-05f);
  p = std::fma(x2, p, 8.51377133304701e-03f);
  p = std::fma(x2, p, 2.48287947061529e-01f);
  float q = std::fma(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = std::fma(x2, q, 6.29106785017040e-06f);
  q = std::fma(x2, q, 1.70198817374094e-03f);
  q = std::fma(x2, q, 1.16817656904453e-01f);
  q = std::fma(x2, q, 9.93151921023180e-01f);
  p = v * p;
  return vmax(0.0f, p / q + 0.5f);
}

// MlasComputeTanhF32KernelFma3 (the kernel ORT 1.30 runs, checked against it):
// clamp to [-9, 9], x * P(x^2) / Q(x^2) with Eigen's coefficients.
float mlas_tanh(float x) {
  const float v = vmin(9.0f, vmax(-9.0f, x));
  const float x2 = v * v;
  float p = std::fma(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
  p = std::fma(x2, p, -8.60467152213735e-11f);
  p = std::fma(x2, p, 5.12229709037114e-08f);
  p = std::fma(x2, p, 1.48572235717979e-05f);
  p = std::fma(x2, p, 6.37261928875436e-04f);
  p = std::fma(x2, p, 4.89352455891786e-03f);
  float q = std::fma(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
  q = std::fma(x2, q, 2.26843463243900e-03f);
  q = std::fma(x2, q, 4.89352518554385e-03f);
  return v * p / q;
}

// MlasErfKernelFma3: |x| clamped to 3.925 (NaN stays NaN), an odd
// polynomial below 0.921875, else 1 - exp(-poly(|x|)) with MLAS's own exp;
// the sign bit of x is or-ed into the result.
float mlas_erf(float x) {
  const uint32_t xb = float_to_bits(x);
  const uint32_t sign = xb & 0x80000000u;
  const float a = vmin(3.925f, bits_to_float(xb & 0x7fffffffu));
  const float s = a * a;
  float small = std::fma(s, -5.99104969e-4f, 4.99339588e-3f);
  small = std::fma(s, small, -2.67667342e-2f);
  small = std::fma(s, small, 1.12818025e-1f);
  small = std::fma(s, small, -3.76124859e-1f);
  small = std::fma(s, small, 1.28379151e-1f);
  small = std::fma(a, small, a);
  const bool big_range = 0.921875f <= a;
  if (big_range) small = 0.0f;
  const float ab = big_range ? a : 0.0f;
  float big = std::fma(ab, 1.72948930e-5f, -3.83208680e-4f);
  big = std::fma(ab, big, 3.88393435e-3f);
  big = std::fma(ab, big, -2.42545605e-2f);
  big = std::fma(ab, big, 1.06777847e-1f);
  big = std::fma(ab, big, 6.34846687e-1f);
  big = std::fma(ab, big, 1.28717512e-1f);
  big = std::fma(ab, big, ab);
  big = bits_to_float(float_to_bits(big) ^ 0x80000000u);
  big = vmax(big, -88.3762626647949f);
  const float c = 1.25829120e+7f;
  float r = std::fma(big, 1.44269504088896341f, c);
  r = r - c;
  float f = std::fma(r, -6.93145752e-1f, big);
  f = std::fma(r, -1.42860677e-6f, f);
  float y = std::fma(f, 1.38319808e-3f, 8.37550033e-3f);
  y = std::fma(f, y, 4.16689515e-2f);
  y = std::fma(f, y, 1.66664466e-1f);
  y = std::fma(f, y, 4.99999851e-1f);
  y = std::fma(f, y, 1.0f);
  y = std::fma(f, y, 1.0f);
  // vcvttps2dq, +127, << 23: the scale 2^r built in the exponent field.
  const auto i = static_cast<int32_t>(r);
  const float scale = bits_to_float(static_cast<uint32_t>(i + 127) << 23);
  y = y * scale;
  y = 1.0f - y;
  return bits_to_float(float_to_bits(y) | float_to_bits(small) | sign);
}

}  // namespace npukit::ref
