#include "npukit/ops/fp32_series.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "npukit/error.hpp"
#include "npukit/ops/profile_support.hpp"
#include "npukit/parallel.hpp"

namespace npukit {

namespace {

constexpr int kMaxTerms = 64;  // num_series in [1, 64]: terms c[0] .. c[num_series]

// 1/k! as the vendor's C-model has it (probed bit for bit): each entry the one
// before divided by k in fp32, a denormal flushed (the unit runs with FTZ).
const std::array<float, kMaxTerms + 1>& coefficients() {
  static const std::array<float, kMaxTerms + 1> c = [] {
    std::array<float, kMaxTerms + 1> t{};
    t[0] = 1.0f;
    for (int k = 1; k <= kMaxTerms; ++k) {
      const float v = t[static_cast<size_t>(k - 1)] / static_cast<float>(k);
      t[static_cast<size_t>(k)] = std::fpclassify(v) == FP_SUBNORMAL ? 0.0f : v;
    }
    return t;
  }();
  return c;
}

// Splits an array into blocks for parallel_for (element-wise work is cheap).
template <class F>
void blocks(size_t n, F f) {
  constexpr size_t kBlock = 4096;
  const int64_t count = static_cast<int64_t>((n + kBlock - 1) / kBlock);
  parallel_for(count, [&](int64_t b) {
    const size_t lo = static_cast<size_t>(b) * kBlock, hi = std::min(n, lo + kBlock);
    for (size_t i = lo; i < hi; ++i) f(i);
  });
}

void same_length(size_t a, size_t b, const char* fn, const char* name) {
  check(a == b, fn, name, std::to_string(a) + " elements", std::to_string(b) + " (the input's)");
}

}  // namespace

float taylor_exp_coefficient(int k) {
  check_range("npukit::taylor_exp_coefficient", "k", k, 0, kMaxTerms);
  return coefficients()[static_cast<size_t>(k)];
}

float taylor_exp_f32(float x, int num_series, const Fp32Arith& f) {
  check_range("npukit::taylor_exp_f32", "num_series", num_series, 1, kMaxTerms);
  const auto& c = coefficients();
  const float v = f.in(x);
  float r = f.in(c[static_cast<size_t>(num_series)]);
  for (int k = num_series - 1; k >= 0; --k) r = f.add(f.mul(r, v), c[static_cast<size_t>(k)]);
  return f.out(r);
}

float lookup_exp_f32(int32_t n) {
  return static_cast<float>(std::exp(static_cast<double>(n)));
}

int32_t floor_to_int32(float x) {
  if (std::isnan(x)) return 0;
  if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (x < -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(std::floor(x));
}

float lookup_int8_to_f32(int32_t x) {
  return static_cast<float>(static_cast<int8_t>(static_cast<uint32_t>(x) & 0xffu));
}

float exp_series_f32(float x, int num_series, const Fp32Arith& f) {
  check_range("npukit::exp_series_f32", "num_series", num_series, 1, kMaxTerms);
  const auto& c = coefficients();
  const float v = f.in(x);
  // Integer part toward zero, so the fraction is in (-1, 1) with x's sign.
  const float n = std::isfinite(v) ? std::trunc(v) : v;
  const float frac = f.out(v - n);  // exact
  float r = f.in(c[static_cast<size_t>(num_series)]);
  for (int k = num_series - 1; k >= 1; --k) r = f.add(f.mul(r, frac), c[static_cast<size_t>(k)]);
  // e^n * (1 + frac * r), distributed as the vendor's unit does: e*(frac*r) + e.
  const float e = f.in(lookup_exp_f32(floor_to_int32(n)));
  return f.add(f.mul(e, f.mul(r, frac)), e);
}

float sigmoid_series_f32(float x, int num_series, const Fp32Arith& f) {
  const float e = exp_series_f32(x, num_series, f);
  return f.out(e / f.add(1.0f, e));
}

float tanh_series_f32(float x, int num_series, const Fp32Arith& f) {
  // 2x is clamped to the exp table's range, where tanh is already +-1 in fp32.
  const float t = std::clamp(f.out(2.0f * f.in(x)), -103.0f, 88.0f);
  const float e = exp_series_f32(t, num_series, f);
  return f.add(1.0f, -f.out(2.0f / f.add(e, 1.0f)));
}

void apply_profile(Fp32SeriesParams& p, Profile profile) {
  expect_supported(OpFamily::fp32_series, profile, "npukit::apply_profile");
  p.flush_denormals = true;  // the BM1684 flushes denormals (FTZ/DAZ)
}

void fp32_series(Fp32SeriesOp op, std::span<const float> x, std::span<float> y,
                 const Fp32SeriesParams& p) {
  constexpr const char* fn = "npukit::fp32_series";
  check_range(fn, "num_series", p.num_series, 1, kMaxTerms);
  same_length(y.size(), x.size(), fn, "y");
  const Fp32Arith f{p.flush_denormals};
  const int n = p.num_series;
  blocks(x.size(), [&](size_t i) {
    switch (op) {
      case Fp32SeriesOp::taylor_exp:
        y[i] = taylor_exp_f32(x[i], n, f);
        break;
      case Fp32SeriesOp::exp:
        y[i] = exp_series_f32(x[i], n, f);
        break;
      case Fp32SeriesOp::sigmoid:
        y[i] = sigmoid_series_f32(x[i], n, f);
        break;
      case Fp32SeriesOp::tanh:
        y[i] = tanh_series_f32(x[i], n, f);
        break;
    }
  });
}

void fp32_floor_to_int32(std::span<const float> x, std::span<int32_t> y, bool flush_denormals) {
  same_length(y.size(), x.size(), "npukit::fp32_floor_to_int32", "y");
  const Fp32Arith f{flush_denormals};
  blocks(x.size(), [&](size_t i) { y[i] = floor_to_int32(f.in(x[i])); });
}

void lookup_int8_to_f32(std::span<const int32_t> x, std::span<float> y) {
  same_length(y.size(), x.size(), "npukit::lookup_int8_to_f32", "y");
  blocks(x.size(), [&](size_t i) { y[i] = lookup_int8_to_f32(x[i]); });
}

void fp32_compare_select(Fp32Compare cmp, std::span<const float> a, std::span<const float> b,
                         std::span<const uint32_t> s0, std::span<const uint32_t> s1,
                         std::span<uint32_t> y, bool flush_denormals) {
  constexpr const char* fn = "npukit::fp32_compare_select";
  same_length(b.size(), a.size(), fn, "b");
  same_length(s0.size(), a.size(), fn, "s0");
  same_length(s1.size(), a.size(), fn, "s1");
  same_length(y.size(), a.size(), fn, "y");
  const Fp32Arith f{flush_denormals};
  blocks(a.size(), [&](size_t i) {
    const bool take = cmp == Fp32Compare::greater
                          ? f.in(a[i]) > f.in(b[i])
                          : std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(b[i]);
    y[i] = take ? s0[i] : s1[i];
  });
}

}  // namespace npukit
