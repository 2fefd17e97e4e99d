// GemmCall, the runner's Gemm node that checks, builds its problem and
// chooses its kernel once per views: the same bits as gemm() on every call,
// whether the values, the views or the ISA cap change between calls (a new
// cap is a new choice), at 1-3 threads; a bad call raises gemm's error, also
// after good ones.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "npukit/kernels.hpp"
#include "npukit/ops/gemm.hpp"
#include "npukit/parallel.hpp"
#include "ops/gemm_call.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_gemm_call {
namespace {

struct Case {
  const char* name;
  int64_t m, k, n;
  bool trans_a, trans_b;
  float alpha, beta;
  int64_t mlas_k_block;
  int c_rank;  // -1: no c
};

const Case kCases[] = {
    {"classifier 1x1280 -> 1000, MLAS", 1, 1280, 1000, false, false, 1.0f, 1.0f, 256, 1},
    {"classifier 1x512 -> 1000, k order", 1, 512, 1000, false, true, 1.0f, 1.0f, 0, 1},
    {"3x300 -> 70, MLAS, c 2-D", 3, 300, 70, false, false, 1.0f, 0.5f, 256, 2},
    {"5x17 -> 33, alpha, trans a", 5, 17, 33, true, false, 0.75f, 2.0f, 0, 0},
    {"2x40 -> 20, no c", 2, 40, 20, false, true, 1.5f, 1.0f, 0, -1},
};

// About 1 in 8 draws special where `specials` is set.
void fill(const TensorView& t, std::mt19937& rng, bool specials) {
  const float odd[] = {kNaN, kInf, -kInf, -0.0f, 1e-40f};
  test::fill_uniform_or_special(t, rng, specials ? 8 : 0, odd);
}

Shape c_shape(const Case& k) {
  if (k.c_rank == 0) return {};
  if (k.c_rank == 1) return {k.n};
  return {k.m, k.n};
}

TEST(GemmCall, SameBitsAsGemmWhenValuesViewsAndCapChange) {
  const uint32_t seed = 20261630;
  std::mt19937 rng(seed);
  const Isa cap0 = max_isa();
  for (const Case& k : kCases) {
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const std::string where = std::string(k.name) + ", threads " + std::to_string(threads) +
                                ", seed " + std::to_string(seed);
      const GemmParams p{k.alpha, k.beta, k.trans_a, k.trans_b, k.mlas_k_block};
      const Shape as = k.trans_a ? Shape{k.k, k.m} : Shape{k.m, k.k};
      const Shape bs = k.trans_b ? Shape{k.n, k.k} : Shape{k.k, k.n};
      Tensor a(DType::f32, as), a2(DType::f32, as), b(DType::f32, bs);
      Tensor c = k.c_rank < 0 ? Tensor() : Tensor(DType::f32, c_shape(k));
      Tensor y(DType::f32, {k.m, k.n}), y2(DType::f32, {k.m, k.n}), want(DType::f32, {k.m, k.n});
      fill(b, rng, false);
      if (k.c_rank >= 0) fill(c, rng, false);
      GemmCall call(p);
      EXPECT_EQ(call.kept_kernel(), nullptr) << where;
      for (int round = 0; round < 6; ++round) {
        fill(a, rng, round % 2 == 1);
        fill(a2, rng, round % 3 == 2);
        // Rounds 0-1: the same views; 2: another a; 3: another y; 4: both back; 5: capped.
        if (round == 5) set_max_isa(Isa::portable);
        const TensorView& av = round == 2 ? a2.view() : a.view();
        const TensorView& yv = round == 3 ? y2.view() : y.view();
        gemm(av, b, c.view(), want, p);
        call(av, b, c.view(), yv);
        Tensor got(DType::f32, {k.m, k.n});
        copy(yv, got.view());
        EXPECT_TRUE(same_bits(got, want.to_vector<float>())) << where << ", round " << round;
        ASSERT_NE(call.kept_kernel(), nullptr) << where;
        const std::string kept = call.kept_kernel();
        if (round == 5) {  // the kept kernel is one the cap allows: a new cap, a new choice
          EXPECT_TRUE(kept.find("avx") == std::string::npos) << where << ": " << kept;
          set_max_isa(cap0);
        }
      }
    }
  }
  set_num_threads(0);
}

TEST(GemmCall, BadCallsRaiseGemmsErrorsAlsoAfterGoodOnes) {
  const GemmParams p;
  Tensor a(DType::f32, {2, 3}), b(DType::f32, {3, 4}), y(DType::f32, {2, 4});
  Tensor wrong_y(DType::f32, {2, 5}), wrong_b(DType::f32, {4, 4}), c3(DType::f32, {1, 2, 4});
  GemmCall call(p);
  EXPECT_TRUE(raises([&] { call(a, b, TensorView(), wrong_y); }, "npukit::gemm", "y", "shape"));
  EXPECT_EQ(call.kept_kernel(), nullptr);
  call(a, b, TensorView(), y);
  EXPECT_NE(call.kept_kernel(), nullptr);
  EXPECT_TRUE(raises([&] { call(a, b, TensorView(), wrong_y); }, "npukit::gemm", "y", "shape"));
  EXPECT_TRUE(raises([&] { call(a, wrong_b, TensorView(), y); }, "npukit::gemm", "b", "shape"));
  EXPECT_TRUE(raises([&] { call(a, b, c3, y); }, "npukit::gemm", "c", "shape"));
  EXPECT_EQ(call.kept_kernel(), nullptr);
}

}  // namespace
}  // namespace test_gemm_call
}  // namespace npukit::test
