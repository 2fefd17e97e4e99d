#include <cmath>

#include "npukit/ops/layer_norm.hpp"

namespace npukit::ref {

namespace {

// ONNX Runtime 1.30 on x86-64 (AVX2+FMA hosts, which all its x86 builds
// dispatch to) normalizes rows of 8 or more elements with MLAS's AVX2 kernel;
// shorter rows keep its scalar Welford loop. Both are modelled step by step:
// lane order, fused multiply-adds and the precision of every partial sum.

// Rows shorter than 8: one element at a time, Welford's running mean and sum
// of squared deviations in fp32, then y = (x - mean) / d * scale (+ bias),
// d = sqrt(M2 / n + eps), each step rounded.
void welford_row(const float* x, const float* scale, const float* bias, float* y, int64_t n,
                 float epsilon, float& mean, float& inv_std_dev) {
  float m = 0.0f, m2 = 0.0f;
  for (int64_t h = 0; h < n; ++h) {
    const float dv = x[h] - m;
    m += dv / static_cast<float>(h + 1);
    m2 += dv * (x[h] - m);
  }
  const float d = std::sqrt(m2 / static_cast<float>(n) + epsilon);
  for (int64_t h = 0; h < n; ++h) {
    const float v = (x[h] - m) / d * scale[h];
    y[h] = bias ? v + bias[h] : v;
  }
  mean = m;
  inv_std_dev = 1.0f / d;
}

// The mean: four double lanes take 4 floats per step, then (l0 + l2) + (l1 + l3),
// then the n % 4 tail in order, divided in double and rounded to float.
float mlas_mean(const float* x, int64_t n) {
  double lane[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) lane[k] += static_cast<double>(x[i + k]);
  double sum = (lane[0] + lane[2]) + (lane[1] + lane[3]);
  for (; i < n; ++i) sum += static_cast<double>(x[i]);
  return static_cast<float>(sum / static_cast<double>(n));
}

// Sum of squared deviations: eight fp32 lanes accumulate fma(d, d, acc) per
// step of 8, reduced as ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)). The n % 8
// tail follows ORT's compiled scalar loop: when 4 or more remain, the first 4
// add rounded products d * d in order (a vectorized in-order reduction), every
// later element adds fma(d, d, sum) (a contracted scalar loop).
float mlas_squared_deviations(const float* x, int64_t n, float mean) {
  float lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      const float d = x[i + k] - mean;
      lane[k] = std::fma(d, d, lane[k]);
    }
  float half[4];
  for (int k = 0; k < 4; ++k) half[k] = lane[k] + lane[k + 4];
  float sum = (half[0] + half[2]) + (half[1] + half[3]);
  if (i + 4 <= n)
    for (const int64_t end = i + 4; i < end; ++i) {
      const float d = x[i] - mean;
      sum += d * d;
    }
  for (; i < n; ++i) {
    const float d = x[i] - mean;
    sum = std::fma(d, d, sum);
  }
  return sum;
}

// Rows of 8 or more: mean in double, squared deviations in fp32 lanes, then
// inv = 1 / sqrt(ss / n + eps) and y = (x - mean) * inv, times scale, or
// fused with the bias: fma((x - mean) * inv, scale, bias) for every element.
void mlas_row(const float* x, const float* scale, const float* bias, float* y, int64_t n,
              float epsilon, float& mean, float& inv_std_dev) {
  const float m = mlas_mean(x, n);
  const float ss = mlas_squared_deviations(x, n, m);
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + epsilon);
  for (int64_t h = 0; h < n; ++h) {
    const float t = (x[h] - m) * inv;
    y[h] = bias ? std::fma(t, scale[h], bias[h]) : t * scale[h];
  }
  mean = m;
  inv_std_dev = inv;
}

}  // namespace

void layer_norm_f32(const float* x, const float* scale, const float* bias, float* y, float* mean,
                    float* inv_std_dev, int64_t rows, int64_t n, float epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    float m = 0.0f, inv = 0.0f;
    if (n < 8)
      welford_row(x + r * n, scale, bias, y + r * n, n, epsilon, m, inv);
    else
      mlas_row(x + r * n, scale, bias, y + r * n, n, epsilon, m, inv);
    if (mean) mean[r] = m;
    if (inv_std_dev) inv_std_dev[r] = inv;
  }
}

}  // namespace npukit::ref
