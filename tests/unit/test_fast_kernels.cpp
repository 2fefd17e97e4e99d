// The fast fp32 conv2d / matmul paths (src/ops/cpu) against the plain
// reference kernels, bit for bit, over seeded random configurations with
// special values, both accumulations and 1, 2 and 3 threads. The seed and
// the failing configuration are printed on a mismatch.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "npukit/npukit.hpp"
#include "test_util.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace npukit {
namespace test_fast_kernels {
namespace {

// Bits equal; a NaN equals any NaN (IEEE leaves NaN payloads to the
// implementation and the compiler may swap the operands of an addition).
// Mostly uniform values; about 1 in `rare` is special: NaN, +-inf, +-0,
// denormals, huge values, and the pair 1 - 2^-24, 2^-126 whose product is
// flushed by x86 FTZ although it rounds to 2^-126 in the float format.
struct Values {
  std::mt19937& rng;
  int rare;
  float operator()() {
    static const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     0.0f,
                                     -0.0f,
                                     1e-40f,
                                     -3e-39f,
                                     1e30f,
                                     -1e30f,
                                     std::bit_cast<float>(0x3f7fffffu),
                                     std::bit_cast<float>(0x00800000u),
                                     -FLT_MIN};
    if (rare > 0 && static_cast<int>(rng() % rare) == 0) return specials[rng() % 12];
    return std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
  }
};

void fill(Tensor& t, Values& v) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v();
}

int64_t count_mismatches(const Tensor& a, const Tensor& b, int64_t& first) {
  int64_t bad = 0;
  first = -1;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!test::same_bits_or_both_nan(a.data<float>()[i], b.data<float>()[i]) && bad++ == 0)
      first = i;
  return bad;
}

std::string conv_text(const Shape& xs, const Shape& ws, const Conv2dParams& p, int threads) {
  std::ostringstream s;
  const Window2d& w = p.window;
  s << "x " << shape_text(xs) << " w " << shape_text(ws) << " groups " << p.groups << " stride "
    << w.stride_h << "x" << w.stride_w << " dilation " << w.dilation_h << "x" << w.dilation_w
    << " ins " << w.ins_h << "x" << w.ins_w << " pads " << w.pad_top << "," << w.pad_bottom << ","
    << w.pad_left << "," << w.pad_right << " bias " << p.has_bias << " result_add " << p.result_add
    << " accumulation " << fp32_accumulation_name(p.accumulation) << " flush " << p.flush_denormals
    << " threads " << threads;
  return s.str();
}

TEST(FastKernels, Conv2dEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 20261126;
  std::mt19937 rng(seed);
  int64_t checked = 0, fast = 0, outputs = 0;
  for (int iter = 0; iter < 150; ++iter) {
    const bool interleaved = iter % 2 == 0;
    Conv2dParams p;
    apply_profile(p, interleaved ? Profile::bm1684 : Profile::pytorch);
    const int64_t G = interleaved ? 1 : 1 + rng() % 3;
    const int64_t IC = G * (1 + rng() % 9), OC = G * (1 + rng() % 21);
    Window2d& w = p.window;
    w.kernel_h = 1 + rng() % 4;
    w.kernel_w = 1 + rng() % 4;
    w.stride_h = 1 + rng() % 3;
    w.stride_w = 1 + rng() % 3;
    w.dilation_h = 1 + rng() % 2;
    w.dilation_w = 1 + rng() % 3;
    w.ins_h = rng() % 5 == 0 ? rng() % 2 + 1 : 0;
    w.ins_w = rng() % 5 == 0 ? rng() % 2 + 1 : 0;
    w.pad_top = rng() % 3;
    w.pad_bottom = rng() % 3;
    w.pad_left = rng() % 4;
    w.pad_right = rng() % 3;
    p.groups = G;
    p.has_bias = rng() % 2;
    p.result_add = rng() % 2;
    const Shape xs{int64_t(1 + rng() % 2), IC, int64_t(1 + rng() % 13), int64_t(1 + rng() % 29)};
    const Shape ws{OC, IC / G, w.kernel_h, w.kernel_w};
    Shape ys;
    try {
      ys = conv2d_output_shape(xs, ws, p);
    } catch (const Error&) {
      continue;  // the dilated kernel does not fit this input
    }
    // Every third configuration has no special values at all.
    Values v{rng, iter % 3 == 0 ? 0 : 40};
    Tensor x(DType::f32, xs), wt(DType::f32, ws), b(DType::f32, {OC}), y0(DType::f32, ys);
    fill(x, v);
    fill(wt, v);
    fill(b, v);
    fill(y0, v);
    Tensor want = y0;
    if (interleaved)
      ref::conv2d_f32_interleaved(x, wt, b, want, p);
    else
      ref::conv2d_f32(x, wt, b, want, p);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = y0;
      const bool ran = cpu::conv2d_f32(x, wt, b, got, p);
      if (!ran) {
        // Only the documented refusal: sequential, zero taps, a non-finite weight.
        bool finite = true;
        for (int64_t i = 0; i < wt.numel(); ++i)
          finite = finite && std::isfinite(wt.data<float>()[i]);
        EXPECT_FALSE(interleaved || finite)
            << "seed " << seed << " iter " << iter << ": " << conv_text(xs, ws, p, threads);
        break;
      }
      int64_t first = 0;
      const int64_t bad = count_mismatches(got, want, first);
      ASSERT_EQ(bad, 0) << "seed " << seed << " iter " << iter << ": "
                        << conv_text(xs, ws, p, threads) << "; first mismatch at element " << first
                        << ": " << got.data<float>()[first] << " (0x" << std::hex
                        << std::bit_cast<uint32_t>(got.data<float>()[first]) << ") vs "
                        << want.data<float>()[first] << " (0x"
                        << std::bit_cast<uint32_t>(want.data<float>()[first]) << ")";
      ++fast;
      outputs += got.numel();
    }
    ++checked;
  }
  std::printf("conv2d: seed %u, %lld configurations, %lld fast runs, %lld outputs compared\n", seed,
              static_cast<long long>(checked), static_cast<long long>(fast),
              static_cast<long long>(outputs));
  EXPECT_GT(checked, 100);
  // Most runs take the fast path (a sequential one with a non-finite weight and
  // zero taps may not).
  EXPECT_GE(fast, 2 * checked);
}

TEST(FastKernels, MatmulEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 1126;
  std::mt19937 rng(seed);
  int64_t outputs = 0;
  for (int iter = 0; iter < 90; ++iter) {
    MatmulParams p;
    const Profile profile = iter % 3 == 0   ? Profile::bm1684
                            : iter % 3 == 1 ? Profile::onnxruntime
                                            : Profile::pytorch;
    apply_profile(p, profile);
    p.has_bias = rng() % 2;
    p.result_add = rng() % 2;
    const int64_t M = 1 + rng() % 23, K = 1 + rng() % 40, N = 1 + rng() % 37;
    Values v{rng, iter % 4 == 0 ? 0 : 30};
    Tensor a(DType::f32, {M, K}), b(DType::f32, {K, N}), bias(DType::f32, {N}),
        y0(DType::f32, {M, N});
    for (Tensor* t : {&a, &b, &bias, &y0}) fill(*t, v);
    Tensor want = y0;
    ref::matmul_f32(a, b, p.has_bias ? bias.data<float>() : nullptr, 1, want, p);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = y0;
      ASSERT_TRUE(cpu::matmul_f32(a, b, p.has_bias ? bias.data<float>() : nullptr, 1, got, p));
      int64_t first = 0;
      ASSERT_EQ(count_mismatches(got, want, first), 0)
          << "seed " << seed << " iter " << iter << ": M " << M << " K " << K << " N " << N
          << " profile " << profile_name(profile) << " bias " << p.has_bias << " result_add "
          << p.result_add << " threads " << threads << "; first mismatch at element " << first;
      outputs += got.numel();
    }
  }
  std::printf("matmul: seed %u, 90 configurations x 3 thread counts, %lld outputs compared\n", seed,
              static_cast<long long>(outputs));
}

#if defined(__x86_64__) || defined(__i386__)
// The software flush of the reference kernels against the x86 FTZ/DAZ
// hardware that the vendor's C-model runs under, on products near 2^-126.
float hardware_ftz_mul(float a, float b) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);
  volatile float va = a, vb = b;
  const float r = va * vb;
  _mm_setcsr(saved);
  return r;
}

TEST(FastKernels, SoftwareFlushMatchesX86Ftz) {
  const Fp32Arith f{true};
  // (1 - 2^-24) * 2^-126 = 2^-126 - 2^-150: a tie between 2^-126 - 2^-149 and
  // 2^-126 in the float format (even: 2^-126) but 24-bit rounding with an
  // unbounded exponent keeps 2^-126 - 2^-150 < 2^-126, so FTZ gives +0.
  const float a = std::bit_cast<float>(0x3f7fffffu), m = FLT_MIN;
  EXPECT_EQ(std::bit_cast<uint32_t>(f.mul(a, m)), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(f.mul(-a, m)), 0x80000000u);
  // (1 - 2^-24) * (1 + 2^-23) * 2^-126 = (1 + 2^-24 - 2^-47) * 2^-126 rounds to
  // 2^-126 in both: not tiny, kept.
  EXPECT_EQ(f.mul(a, std::bit_cast<float>(0x00800001u)), FLT_MIN);
  // Random products around 2^-126, and denormal operands.
  std::mt19937 rng(7);
  int64_t flushed = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x =
        std::bit_cast<float>(static_cast<uint32_t>(0x3f000000u + rng() % 0x1000000u));  // [0.5, 2)
    const uint32_t e = 1 + rng() % 3;  // 2^-126 .. 2^-124
    float y = std::bit_cast<float>(static_cast<uint32_t>((e << 23) | (rng() & 0x7fffffu)));
    if (rng() % 8 == 0)
      y = std::bit_cast<float>(static_cast<uint32_t>(rng() & 0x7fffffu));  // denormal
    if (rng() % 2) y = -y;
    const float hw = hardware_ftz_mul(x, y), sw = f.mul(x, y);
    ASSERT_EQ(std::bit_cast<uint32_t>(sw), std::bit_cast<uint32_t>(hw))
        << "x 0x" << std::hex << std::bit_cast<uint32_t>(x) << " y 0x"
        << std::bit_cast<uint32_t>(y);
    flushed += hw == 0.0f;
  }
  EXPECT_GT(flushed, 1000);
}
#endif

}  // namespace
}  // namespace test_fast_kernels
}  // namespace npukit
