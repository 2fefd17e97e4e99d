// Small helpers shared by the unit tests: building tensors, comparing them
// bit for bit, and checking that a call raises the documented npukit::Error.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"

namespace npukit::test {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The randomized tests' draw of an integer in [lo, hi]: g() % (hi - lo + 1)
// from lo (their seeds keep reproducing the same cases).
inline auto picker(std::mt19937& g) {
  return [&g](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(g() % static_cast<uint64_t>(hi - lo + 1));
  };
}

// The fp32 kernel tests' draw: uniform in [-2, 2), except that about 1 in
// `rare` draws (rare > 0) is one of `specials` (each suite lists the NaNs,
// infinities, zeros and denormals its kernels must carry exactly).
inline float uniform_or_special(std::mt19937& rng, int rare, std::span<const float> specials) {
  if (rare > 0 && static_cast<int>(rng() % rare) == 0) return specials[rng() % specials.size()];
  return std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
}

// Fills an f32 view's elements (its storage order) with uniform_or_special draws.
inline void fill_uniform_or_special(const TensorView& t, std::mt19937& rng, int rare,
                                    std::span<const float> specials) {
  auto* f = static_cast<float*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) f[i] = uniform_or_special(rng, rare, specials);
}

// 1, 2, ..., n (times `sign`) in an (N, C, H, W) tensor.
inline Tensor iota4(const Shape& shape, float first = 1.0f, float sign = 1.0f) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = sign * (first + static_cast<float>(i));
  return Tensor::from<float>(shape, v);
}

inline Tensor random_f32(const Shape& shape, uint32_t seed, Layout layout = Layout::nchw) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor dense(DType::f32, shape);
  float* p = dense.data<float>();
  for (int64_t i = 0; i < dense.numel(); ++i) p[i] = dist(gen);
  if (layout == Layout::nchw) return dense;
  Tensor out(DType::f32, shape, layout);
  copy(dense, out);
  return out;
}

// Same bit pattern (so -0 != +0), except that any two NaNs count as equal:
// for kernels whose NaN payload is not pinned (docs/semantics.md, "fp32 NaN
// payloads", lists them).
inline bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// Same element values and bit patterns (so -0 != +0 and NaN == NaN).
inline ::testing::AssertionResult same_bits(const std::vector<float>& got,
                                            const std::vector<float>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same_bits_or_both_nan(got[i], want[i])) {
      uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, &want[i], 4);
      return ::testing::AssertionFailure()
             << "element " << i << " is " << got[i] << " (0x" << std::hex << a << "), expected "
             << want[i] << " (0x" << b << ")" << std::dec;
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult same_bits(const Tensor& got, const std::vector<float>& want) {
  return same_bits(got.to_vector<float>(), want);
}

// Runs f and checks it throws npukit::Error naming `function` and `parameter`,
// with a value text that contains `value` (empty: not checked).
template <class F>
::testing::AssertionResult raises(F&& f, const std::string& function, const std::string& parameter,
                                  const std::string& value = "") {
  try {
    f();
  } catch (const Error& e) {
    if (e.function() != function || e.parameter() != parameter ||
        e.value().find(value) == std::string::npos)
      return ::testing::AssertionFailure()
             << "raised function='" << e.function() << "' parameter='" << e.parameter()
             << "' value='" << e.value() << "', expected function='" << function << "' parameter='"
             << parameter << "' value containing '" << value << "'";
    // The message repeats all of it for users who only see what().
    const std::string what = e.what();
    if (what.find(function) == std::string::npos || what.find(parameter) == std::string::npos ||
        what.find(e.allowed()) == std::string::npos || e.allowed().empty())
      return ::testing::AssertionFailure() << "incomplete message: " << what;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "raised another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception";
}

// Pooling through the public entry with an output of the computed shape.
inline Tensor run_pool(const Tensor& x, const Pool2dParams& p) {
  Tensor y(x.dtype(), pool2d_output_shape(x.shape(), p));
  pool2d(x, y, p);
  return y;
}

inline Window2d window(int64_t kh, int64_t kw, int64_t sh = 1, int64_t sw = 1) {
  Window2d w;
  w.kernel_h = kh;
  w.kernel_w = kw;
  w.stride_h = sh;
  w.stride_w = sw;
  return w;
}

inline void set_pads(Window2d& w, int64_t top, int64_t bottom, int64_t left, int64_t right) {
  w.pad_top = top;
  w.pad_bottom = bottom;
  w.pad_left = left;
  w.pad_right = right;
}

// Restores the thread count when a test ends, whatever happens.
struct ThreadGuard {
  ~ThreadGuard() { set_num_threads(0); }
};

// Restores, when a test ends, the settings it found: thread count,
// implementation policy and ISA cap. Restoring the cap found (not the
// host's level) keeps a run under NPUKIT_MAX_ISA or set_max_isa at its level
// for the tests that follow in the same process.
struct SettingsRestore {
  int threads = num_threads();
  Impl policy = impl();
  Isa cap = max_isa();
  SettingsRestore() = default;
  SettingsRestore(const SettingsRestore&) = delete;
  SettingsRestore& operator=(const SettingsRestore&) = delete;
  ~SettingsRestore() {
    set_num_threads(threads);
    set_impl(policy);
    set_max_isa(cap);
  }
};

// The ISA levels a test may sweep: portable up to the current cap
// (max_isa(), itself never above the host or NPUKIT_MAX_ISA).
inline std::vector<Isa> isa_levels_up_to_cap() {
  std::vector<Isa> levels;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_vnni})
    if (isa <= max_isa()) levels.push_back(isa);
  return levels;
}

// Bounds for a convolution's fused clip (Conv2dParams::clip), from its own
// generator seeded by `key` (the caller's other draws stay as they were):
// half the time none, else Relu {0, inf}, Relu6 {0, 6}, a -0 bound, random
// bounds (min > max too) or a NaN bound.
inline ClipParams fused_clip_case(uint32_t key) {
  std::mt19937 g(key * 2654435761u + 17u);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  switch (g() % 12) {
    case 0:
    case 1:
      return {0.0f, kInf};
    case 2:
      return {0.0f, 6.0f};
    case 3:
      return {-0.0f, 1.0f};
    case 4:
    case 5:
      return {d(g), d(g)};
    case 6:
      return {kNaN, 0.5f};
    default:
      return {};
  }
}

inline std::string clip_text(const ClipParams& c) {
  return "clip [" + std::to_string(c.min) + ", " + std::to_string(c.max) + "]";
}

}  // namespace npukit::test
