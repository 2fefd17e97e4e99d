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

// MlasComputeTanhF32KernelFma3: on |x|, (|x| + |x|*Q(x^2)) / P(x^2) with
// quadratics P and Q, 1 from |x| >= 5, then x's sign put back by xor.
float mlas_tanh(float x) {
  const float nc2 = bits_to_float(0x3c520a84u), nc1 = bits_to_float(0x3edef102u);
  const float nc0 = bits_to_float(0x3f800000u), dc2 = bits_to_float(0x3a2fc8e6u);
  const float dc1 = bits_to_float(0x3dd1c060u), dc0 = bits_to_float(0xb859e195u);
  const uint32_t xb = float_to_bits(x);
  const float a = bits_to_float(xb & 0x7fffffffu);
  const uint32_t sign = xb & 0x80000000u;
  const float x2 = a * a;
  float p = std::fma(nc2, x2, nc1);
  const float q1 = std::fma(dc2, x2, dc1);
  p = std::fma(p, x2, nc0);
  const float q = std::fma(x2, q1, dc0);
  float r = std::fma(a, q, a) / p;
  if (a >= 5.0f) r = nc0;  // ordered compare: NaN keeps the quotient
  return bits_to_float(float_to_bits(r) ^ sign);
}

// MlasErfKernelFma3: |x| clamped to 3.725 (a NaN becomes 3.725), an odd
// polynomial below 0.921875, else 1 - exp(-poly(|x|)) with MLAS's own exp;
// the sign bit of x is or-ed into the result.
float mlas_erf(float x) {
  const uint32_t xb = float_to_bits(x);
  const uint32_t sign = xb & 0x80000000u;
  const float a = vmin(bits_to_float(xb & 0x7fffffffu), 3.725f);
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
