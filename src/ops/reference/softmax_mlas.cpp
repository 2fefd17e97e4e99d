// ONNX Runtime's MLAS softmax, operation by operation (the specification of
// npukit's onnxruntime Softmax/LogSoftmax; see softmax_onnxruntime.hpp).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "npukit/ops/softmax_onnxruntime.hpp"

namespace npukit::ref {

namespace {

// MLAS's exp constants (MlasExpConstants).
constexpr float kLowerRange = -103.9720840454f;          // AVX512F kernel's clamp
constexpr float kLowerRangeSumExp = -88.3762626647949f;  // FMA3 kernel's clamp
constexpr float kRoundingBias = 12582912.0f;             // 1.5 * 2^23
constexpr float kLog2Reciprocal = 1.44269504088896341f;
constexpr float kLog2High = -6.93145752e-1f;
constexpr float kLog2Low = -1.42860677e-6f;
constexpr float kPoly[] = {0x1.694000p-10f, 0x1.125edcp-7f, 0x1.555b5ap-5f,
                           0x1.555450p-3f,  0x1.fffff6p-2f, 0x1.000000p+0f};

// maxps / maxss: the second operand unless the first is greater (NaN: second).
float max_ps(float a, float b) {
  return a > b ? a : b;
}

// exp(v) for v = x + (-max), as the kernel of `k` computes it.
float exp_mlas(float v, MlasSumExpKernel k) {
  v = max_ps(k == MlasSumExpKernel::avx512f ? kLowerRange : kLowerRangeSumExp, v);
  const float biased = std::fma(v, kLog2Reciprocal, kRoundingBias);
  const float m = biased - kRoundingBias;
  v = std::fma(m, kLog2High, v);
  v = std::fma(m, kLog2Low, v);
  float p = kPoly[0];
  for (int i = 1; i < 6; ++i) p = std::fma(p, v, kPoly[i]);
  p = std::fma(p, v, kPoly[5]);
  if (k == MlasSumExpKernel::avx512f) {
    // vscalefps: p * 2^m, one rounding (denormal results included).
    if (std::isnan(m)) return m;
    return std::ldexp(p, static_cast<int>(m));
  }
  // FMA3: 2^m built in the exponent field ((m << 23) + bias, two's complement).
  const auto mi = static_cast<int32_t>(std::bit_cast<uint32_t>(biased) << 23);
  const uint32_t scale_bits = static_cast<uint32_t>(mi) + 0x3F800000u;
  return p * std::bit_cast<float>(scale_bits);
}

// MlasReduceMaximumF32Kernel (AVX/AVX512F builds): four 8-lane accumulators
// over blocks of 32, one over blocks of 8, a fixed horizontal tree, then the
// remaining elements one by one; every step max_ps(accumulator, value).
float row_max(const float* x, int64_t n) {
  float result = std::numeric_limits<float>::lowest();
  int64_t i = 0;
  if (n >= 8) {
    float a[4][8];
    for (auto& r : a)
      for (float& v : r) v = result;
    if (n >= 32) {
      for (; n - i >= 32; i += 32)
        for (int k = 0; k < 4; ++k)
          for (int j = 0; j < 8; ++j) a[k][j] = max_ps(a[k][j], x[i + 8 * k + j]);
      for (int j = 0; j < 8; ++j) {
        a[0][j] = max_ps(a[0][j], a[1][j]);
        a[2][j] = max_ps(a[2][j], a[3][j]);
        a[0][j] = max_ps(a[0][j], a[2][j]);
      }
    }
    for (; n - i >= 8; i += 8)
      for (int j = 0; j < 8; ++j) a[0][j] = max_ps(a[0][j], x[i + j]);
    float q[4];
    for (int j = 0; j < 4; ++j) q[j] = max_ps(a[0][j], a[0][j + 4]);  // high 128 bits
    const float l0 = max_ps(q[0], q[2]), l1 = max_ps(q[1], q[3]);     // shufps 0xEE
    result = max_ps(l0, l1);                                          // shufps 0x55
  }
  for (; i < n; ++i) result = max_ps(result, x[i]);
  return result;
}

// The lanes' sums of 8 lanes reduced as vhaddps, vhaddps, extract, addss.
float reduce8(const float* a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// MlasComputeSumExpF32Kernel: e[i] stored, their sum returned.
float sum_exp(const float* x, float* e, int64_t n, float neg_max, MlasSumExpKernel k) {
  for (int64_t i = 0; i < n; ++i) e[i] = exp_mlas(x[i] + neg_max, k);
  if (k == MlasSumExpKernel::avx512f) {
    float acc[16] = {};
    int64_t i = 0;
    for (; n - i >= 48; i += 48)
      for (int v = 0; v < 3; ++v)
        for (int j = 0; j < 16; ++j) acc[j] += e[i + 16 * v + j];
    for (; i < n; i += 16)  // masked lanes keep their value
      for (int j = 0; j < 16 && i + j < n; ++j) acc[j] += e[i + j];
    float a8[8];
    for (int j = 0; j < 8; ++j) a8[j] = acc[j + 8] + acc[j];
    return reduce8(a8);
  }
  float acc[8] = {};
  int64_t i = 0;
  for (; n - i >= 24; i += 24)
    for (int v = 0; v < 3; ++v)
      for (int j = 0; j < 8; ++j) acc[j] += e[i + 8 * v + j];
  for (; i < n; i += 8)  // the masked lanes of the last vector add +0
    for (int j = 0; j < 8; ++j) acc[j] += i + j < n ? e[i + j] : 0.0f;
  return reduce8(acc);
}

}  // namespace

void softmax_mlas_row(const float* x, float* y, int64_t n, bool log, MlasSumExpKernel kernel) {
  const float neg_max = -row_max(x, n);
  if (log) {
    // e is scratch here: y may alias x, and x is read again below.
    std::vector<float> e(static_cast<size_t>(n));
    const float lg = std::log(sum_exp(x, e.data(), n, neg_max, kernel));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] + neg_max) - lg;
    return;
  }
  const float s = sum_exp(x, y, n, neg_max, kernel);
  const float scale = 1.0f / s;
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

}  // namespace npukit::ref
