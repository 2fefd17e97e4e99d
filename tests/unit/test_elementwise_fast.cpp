// The fast element-wise families (relu, clip, binary: src/ops/cpu/f32-
// elementwise*) against the reference kernels, bit for bit (a NaN equals any
// NaN): every variant this host runs, lengths around every vector tail and
// large enough to be threaded, special values, both relu NaN rules,
// result_add, clip bounds that are NaN or crossed, in-place calls, 1, 2 and 3
// threads; and the public entries at every ISA cap and with Impl::reference.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "npukit/npukit.hpp"
#include "ops/cpu/elementwise_fast.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_elementwise_fast {
namespace {

float value(std::mt19937& rng) {
  static const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                   -std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   0.0f,
                                   -0.0f,
                                   1e-40f,
                                   -3e-39f,
                                   FLT_MAX,
                                   -FLT_MAX,
                                   6.0f,
                                   -FLT_MIN};
  if (rng() % 6 == 0) return specials[rng() % 12];
  return std::uniform_real_distribution<float>(-8.0f, 8.0f)(rng);
}

Tensor random(int64_t n, std::mt19937& rng) {
  Tensor t(DType::f32, {1, 1, 1, n});
  float* d = t.data<float>();
  for (int64_t i = 0; i < n; ++i) d[i] = value(rng);
  return t;
}

// Runs every runnable fast variant of `list` on `p` (y from y0) for 1-3
// threads and compares with the reference run on the same inputs.
void check_list(const KernelList<cpu::EwProblem>& list, cpu::EwProblem p, const Tensor& y0,
                bool in_place, const std::string& what, std::map<std::string, int>& runs) {
  Tensor want = y0;
  cpu::EwProblem r = p;
  r.y = want;
  if (in_place) r.a = want;
  list.variants.back().run(r);
  for (const auto& v : list.variants) {
    if (v.reference || !list.runnable(v)) continue;
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      Tensor got = y0;
      cpu::EwProblem q = p;
      q.y = got;
      if (in_place) q.a = got;
      ASSERT_EQ(v.declines(q), nullptr) << v.name;
      v.run(q);
      const float* g = got.data<float>();
      const float* w = want.data<float>();
      const int64_t n = got.numel();  // numel() formats a message: not per element
      for (int64_t i = 0; i < n; ++i)
        ASSERT_TRUE(test::same_bits_or_both_nan(g[i], w[i]))
            << v.name << " " << what << " threads " << threads << " element " << i << ": " << g[i]
            << " vs " << w[i];
      ++runs[v.name];
    }
  }
}

TEST(ElementwiseFast, EveryVariantEqualsReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 1127;
  std::mt19937 rng(seed);
  std::map<std::string, int> runs;
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int64_t n : {63, 64, 65, 1000, 70001, 100003}) lengths.push_back(n);
  for (int64_t n : lengths) {
    const Tensor a = random(n, rng), b = random(n, rng), y0 = random(n, rng);
    const std::string len = "seed " + std::to_string(seed) + " n " + std::to_string(n);
    for (int rule = 0; rule < 2; ++rule)
      for (int add = 0; add < 2; ++add)
        for (int in_place = 0; in_place < 2; ++in_place) {
          cpu::EwProblem p;
          p.op = cpu::EwOp::relu;
          p.a = a;
          p.relu.relu_nan = rule ? ReluNaN::zero : ReluNaN::propagate;
          p.relu.result_add = add;
          check_list(cpu::relu_kernels(), p, y0, in_place,
                     len + " relu rule " + std::to_string(rule) + " result_add " +
                         std::to_string(add) + " in_place " + std::to_string(in_place),
                     runs);
        }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::pair<float, float> bounds[] = {{0.0f, 6.0f}, {-1.5f, 0.25f}, {nan, 1.0f},
                                              {-1.0f, nan}, {3.0f, -3.0f},  {-0.0f, 0.0f}};
    for (const auto& [lo, hi] : bounds)
      for (int in_place = 0; in_place < 2; ++in_place) {
        cpu::EwProblem p;
        p.op = cpu::EwOp::clip;
        p.a = a;
        p.clip = {lo, hi};
        check_list(cpu::clip_kernels(), p, y0, in_place,
                   len + " clip [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", runs);
      }
    for (cpu::EwOp op : {cpu::EwOp::add, cpu::EwOp::mul}) {
      cpu::EwProblem p;
      p.op = op;
      p.a = a;
      p.b = b;
      check_list(cpu::binary_kernels(), p, y0, false,
                 len + (op == cpu::EwOp::add ? " add" : " mul"), runs);
    }
  }
  for (const auto* list : {&cpu::relu_kernels(), &cpu::clip_kernels(), &cpu::binary_kernels()})
    for (const auto& v : list->variants) {
      if (!v.reference && list->runnable(v)) {
        EXPECT_GT(runs[v.name], 200) << v.name;
      }
    }
}

// The public entries: equal bits at every ISA cap and with Impl::reference,
// and broadcast or strided operands still go to the reference.
TEST(ElementwiseFast, PublicEntriesAgreeAcrossIsaLevelsAndImpl) {
  test::SettingsRestore restore;
  std::mt19937 rng(9);
  Tensor x(DType::f32, {2, 3, 5, 7}), c(DType::f32, {3, 1, 1});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = value(rng);
  for (int64_t i = 0; i < c.numel(); ++i) c.data<float>()[i] = value(rng);
  auto run_all = [&] {
    std::vector<float> out;
    Tensor y(DType::f32, x.shape());
    relu(x, y);
    out.insert(out.end(), y.data<float>(), y.data<float>() + y.numel());
    clip(x, y, {0.0f, 6.0f});
    out.insert(out.end(), y.data<float>(), y.data<float>() + y.numel());
    binary(BinaryOp::add, x, y, y);  // in place, equal shapes
    out.insert(out.end(), y.data<float>(), y.data<float>() + y.numel());
    binary(BinaryOp::mul, x, c, y);  // broadcast: the reference
    out.insert(out.end(), y.data<float>(), y.data<float>() + y.numel());
    return out;
  };
  set_impl(Impl::reference);
  const std::vector<float> want = run_all();
  set_impl(Impl::fast);
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (isa > host_isa()) continue;
    set_max_isa(isa);
    for (int threads = 1; threads <= 3; ++threads) {
      set_num_threads(threads);
      const std::vector<float> got = run_all();
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_TRUE(test::same_bits_or_both_nan(got[i], want[i]))
            << isa_name(isa) << " threads " << threads << " element " << i;
    }
  }
  cpu::EwProblem p;
  p.op = cpu::EwOp::mul;
  Tensor y(DType::f32, x.shape());
  p.a = x;
  p.b = broadcast_view(c, x.shape(), "test", "c");
  p.y = y;
  EXPECT_NE(cpu::binary_kernels().variants[0].declines(p), nullptr);
}

}  // namespace
}  // namespace test_elementwise_fast
}  // namespace npukit
