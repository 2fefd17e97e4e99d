// Every kernel of the QLinearAdd ("qadd") and QuantizeLinear ("quantize")
// lists against the reference variant, byte for byte: both QLinearAdd
// arithmetics, u8 and s8, random and extreme scales and zero points, sizes
// with vector tails, special floats (NaN, +-inf, -0, denormals, exact halves),
// PyTorch's reciprocal form, 1, 2 and 3 threads. Failures print the seed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "npukit/error.hpp"
#include "npukit/kernels.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/x8-qelementwise.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_qelementwise_fast {
namespace {

std::vector<uint8_t> bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.view().raw());
  return {p, p + t.numel()};
}

template <class Problem>
std::set<std::string> check_all(const KernelList<Problem>& list, const Problem& q, Tensor& out,
                                const std::string& what) {
  std::set<std::string> ran;
  std::memset(out.view().raw(), 0x5a, static_cast<size_t>(out.numel()));
  try {
    list.variants.back().run(q);
  } catch (const Error&) {
    // The reference rejects the call (a NaN from inf - inf): every fast kernel must decline it.
    for (const auto& v : list.variants) {
      if (!v.reference) {
        EXPECT_NE(v.declines(q), nullptr) << v.name << " " << what;
      }
    }
    return ran;
  }
  const std::vector<uint8_t> want = bytes(out);
  for (const auto& v : list.variants) {
    if (v.reference || !KernelList<Problem>::runnable(v) || v.isa > host_isa()) continue;
    if (v.declines && v.declines(q)) continue;
    std::memset(out.view().raw(), 0xa5, static_cast<size_t>(out.numel()));
    v.run(q);
    const std::vector<uint8_t> got = bytes(out);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << v.name << " " << what << ": " << bad << " differ, first at " << first
                       << " (" << int(got[first]) << " vs " << int(want[first]) << ")";
    ran.insert(v.name);
  }
  return ran;
}

TEST(QElementwiseFast, QLinearAddEveryKernelMatchesTheReference) {
  const uint32_t seed = 4242;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  std::set<std::string> ran, ran_nhwc;
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto logu = [&](float lo, float hi) {
    return std::exp(std::uniform_real_distribution<float>(std::log(lo), std::log(hi))(rng));
  };
  for (int it = 0; it < 300; ++it) {
    const DType t = r(0, 1) ? DType::u8 : DType::s8;
    const bool s8 = t == DType::s8;
    const Shape shape = {r(1, 2), r(1, 40), r(1, 33), r(1, 37)};
    // Every fourth case channels-last throughout (the runner's int8 layout:
    // the fast kernels take one dense layout), every fourth mixed (they decline).
    const int layouts = it % 4;
    const Layout la = layouts >= 2 ? Layout::nhwc : Layout::nchw;
    const Layout lbc = layouts == 3 ? Layout::nhwc : Layout::nchw;
    Tensor a(t, shape, la), b(t, shape, lbc), c(t, shape, lbc);
    for (Tensor* x : {&a, &b})
      for (int64_t i = 0; i < x->numel(); ++i)
        static_cast<uint8_t*>(x->view().raw())[i] = static_cast<uint8_t>(r(0, 255));
    QAddProblem q{a, b, c, {}};
    const bool extreme = it % 5 == 0;
    q.p.a_scale = extreme ? logu(1e-30f, 1e30f) : logu(0.01f, 0.1f);
    q.p.b_scale = extreme ? logu(1e-30f, 1e30f) : logu(0.01f, 0.1f);
    q.p.c_scale = extreme ? logu(1e-30f, 1e30f) : logu(0.02f, 0.2f);
    q.p.a_zero_point = static_cast<int32_t>(r(s8 ? -128 : 0, s8 ? 127 : 255));
    q.p.b_zero_point = static_cast<int32_t>(r(s8 ? -128 : 0, s8 ? 127 : 255));
    q.p.c_zero_point = static_cast<int32_t>(r(s8 ? -128 : 0, s8 ? 127 : 255));
    q.p.arith = it % 2 ? QAddArith::ort_x86_fma : QAddArith::dequant_add_quant;
    set_num_threads(1 + it % 3);
    const std::string what = "seed " + std::to_string(seed) + " case " + std::to_string(it) + " " +
                             dtype_name(t) + " " + shape_text(shape) + " arith " +
                             std::to_string(int(q.p.arith)) + " scales " +
                             std::to_string(q.p.a_scale) + "," + std::to_string(q.p.b_scale) + "," +
                             std::to_string(q.p.c_scale) + " layouts " + std::to_string(layouts);
    for (const auto& n : check_all(qadd_kernels(), q, c, what)) {
      ran.insert(n);
      if (layouts == 3) ran_nhwc.insert(n);
    }
    if (HasFailure()) break;
  }
  for (const auto& v : qadd_kernels().variants) {
    if (!v.reference && KernelList<QAddProblem>::runnable(v) && v.isa <= host_isa()) {
      EXPECT_TRUE(ran.count(v.name)) << v.name << " never ran";
      EXPECT_TRUE(ran_nhwc.count(v.name)) << v.name << " never ran channels-last";
    }
  }
}

TEST(QElementwiseFast, QuantizeLinearEveryKernelMatchesTheReference) {
  const uint32_t seed = 777;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  std::set<std::string> ran;
  auto r = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -1e-40f,
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max()};
  for (int it = 0; it < 300; ++it) {
    const DType t = r(0, 1) ? DType::u8 : DType::s8;
    const bool s8 = t == DType::s8;
    const Shape shape = {r(1, 3), r(1, 17), r(1, 29), r(1, 31)};
    Tensor x(DType::f32, shape), y(t, shape);
    QuantizeProblem q{x, y, {}};
    const float scale = it % 7 == 0   ? 1e-40f  // a denormal scale
                        : it % 7 == 1 ? 3e37f
                                      : std::uniform_real_distribution<float>(0.003f, 0.5f)(rng);
    q.p.q.scale = {scale};
    q.p.q.zero_point = {static_cast<int32_t>(r(s8 ? -128 : 0, s8 ? 127 : 255))};
    q.p.multiply_by_reciprocal = it % 3 == 0;
    float* xp = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int kind = static_cast<int>(r(0, 9));
      if (kind == 0)
        xp[i] = specials[r(0, 9)];
      else if (kind <= 3)  // exact ties of the quotient
        xp[i] = (static_cast<float>(r(-300, 300)) + 0.5f) * scale;
      else
        xp[i] = std::uniform_real_distribution<float>(-160.0f, 160.0f)(rng) * scale;
    }
    set_num_threads(1 + it % 3);
    const std::string what = "seed " + std::to_string(seed) + " case " + std::to_string(it) + " " +
                             dtype_name(t) + " " + shape_text(shape) + " scale " +
                             std::to_string(scale) + " reciprocal " +
                             std::to_string(q.p.multiply_by_reciprocal);
    for (const auto& n : check_all(quantize_kernels(), q, y, what)) ran.insert(n);
    if (HasFailure()) break;
  }
  for (const auto& v : quantize_kernels().variants) {
    if (!v.reference && KernelList<QuantizeProblem>::runnable(v) && v.isa <= host_isa()) {
      EXPECT_TRUE(ran.count(v.name)) << v.name << " never ran";
    }
  }
}

}  // namespace
}  // namespace test_qelementwise_fast
}  // namespace npukit
