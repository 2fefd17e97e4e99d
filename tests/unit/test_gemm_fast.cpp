// The fp32 Gemm family (src/ops/cpu/f32-gemm*) against ref::gemm_f32, bit for
// bit (a NaN equals any NaN): every variant this host runs, seeded shapes
// around the vector widths, transposed operands, c absent or broadcast from a
// scalar, a row or a column, alpha and beta including 0, special values, 1,
// 2 and 3 threads.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "npukit/npukit.hpp"
#include "npukit/ops/binary.hpp"
#include "ops/cpu/gemm_fast.hpp"

namespace npukit {
namespace {

bool same_bits(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

float value(std::mt19937& rng) {
  static const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   0.0f,
                                   -0.0f,
                                   1e-40f,
                                   3e38f};
  if (rng() % 40 == 0) return specials[rng() % 7];
  return std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
}

TEST(GemmFast, EveryVariantEqualsReferenceBitForBit) {
  struct Restore {
    ~Restore() { set_num_threads(0); }
  } restore;
  const unsigned seed = 4242;
  std::mt19937 rng(seed);
  const auto& list = cpu::gemm_kernels();
  std::map<std::string, int> runs;
  int wide = 0;  // problems that reach f32_gemm_wide_avx512 (b rows contiguous, N >= 128)
  for (int iter = 0; iter < 120; ++iter) {
    // K past 64 crosses the packing's chunks of k (f32-gemm.cpp, kPackChunk); N
    // past 128 takes the wide strips read in place (kGemmWideColumns) and a rest.
    const int64_t M = 1 + rng() % 9, K = rng() % 4 == 0 ? 60 + rng() % 140 : 1 + rng() % 50,
                  N = rng() % 4 == 0 ? 120 + rng() % 200 : 1 + rng() % 70;
    const bool ta = rng() % 2, tb = rng() % 2;
    wide += !tb && N >= cpu::kGemmWideColumns;
    Tensor a(DType::f32, ta ? Shape{K, M} : Shape{M, K});
    Tensor b(DType::f32, tb ? Shape{N, K} : Shape{K, N});
    const int c_kind = static_cast<int>(rng() % 5);  // none, scalar, row, column, full
    const Shape cs = c_kind == 1   ? Shape{}
                     : c_kind == 2 ? Shape{N}
                     : c_kind == 3 ? Shape{M, 1}
                                   : Shape{M, N};
    Tensor c(DType::f32, cs), y0(DType::f32, {M, N});
    for (Tensor* t : {&a, &b, &c, &y0}) {
      float* d = t->data<float>();
      const int64_t n = t->numel();
      for (int64_t i = 0; i < n; ++i) d[i] = value(rng);
    }
    const float alpha = rng() % 5 == 0 ? 0.0f : value(rng),
                beta = rng() % 5 == 0 ? 0.0f : value(rng);
    auto t = [](const TensorView& v, bool trans) {
      return trans
                 ? TensorView(v.raw(), v.dtype(), {v.dim(1), v.dim(0)}, {v.stride(1), v.stride(0)})
                 : v;
    };
    const TensorView cv = c_kind == 0 ? TensorView() : broadcast_view(c, {M, N}, "test", "c");
    Tensor want = y0;
    cpu::GemmProblem p{t(a, ta), t(b, tb), cv, want, alpha, beta};
    list.variants.back().run(p);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v)) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        p.y = got;
        ASSERT_EQ(v.declines ? v.declines(p) : nullptr, nullptr);
        v.run(p);
        const float* g = got.data<float>();
        const float* w = want.data<float>();
        for (int64_t i = 0; i < M * N; ++i)
          ASSERT_TRUE(same_bits(g[i], w[i]))
              << "seed " << seed << " iter " << iter << " " << v.name << ": M " << M << " K " << K
              << " N " << N << " trans " << ta << tb << " c kind " << c_kind << " alpha " << alpha
              << " beta " << beta << " threads " << threads << " element " << i << ": " << g[i]
              << " vs " << w[i];
        ++runs[v.name];
      }
    }
  }
  for (const auto& v : list.variants) {
    if (!v.reference && list.runnable(v)) {
      EXPECT_EQ(runs[v.name], 360) << v.name;
    }
  }
  EXPECT_GE(wide, 5);
}

}  // namespace
}  // namespace npukit
