// The fp32 Gemm family (src/ops/cpu/f32-gemm*) against ref::gemm_f32, bit for
// bit (a NaN equals any NaN): every variant this host runs, seeded shapes
// around the vector widths, transposed operands, c absent or broadcast from a
// scalar, a row or a column, alpha and beta including 0, special values, 1,
// 2 and 3 threads; and GemmParams::mlas_k_block (ONNX Runtime's SGEMM order)
// written out and through every kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "npukit/npukit.hpp"
#include "npukit/ops/binary.hpp"
#include "ops/cpu/gemm_fast.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_gemm_fast {
namespace {

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

// Even iterations: the k-order sum; odd: MLAS's order (mlas_k_block 1, 3,
// 16, 128 or 256, alpha 1), which the f32-gemm-mlas-* kernels take (unless
// b's rows are not contiguous) and the others decline.
void every_variant_equals_reference(bool with_mlas) {
  test::SettingsRestore restore;
  const unsigned seed = with_mlas ? 4243 : 4242;
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
    const int64_t k_blocks[] = {1, 3, 16, 128, 256};
    const int64_t k_block = with_mlas ? k_blocks[rng() % 5] : 0;
    const float alpha = k_block          ? 1.0f
                        : rng() % 5 == 0 ? 0.0f
                                         : value(rng),
                beta = rng() % 5 == 0 ? 0.0f : value(rng);
    auto t = [](const TensorView& v, bool trans) {
      return trans
                 ? TensorView(v.raw(), v.dtype(), {v.dim(1), v.dim(0)}, {v.stride(1), v.stride(0)})
                 : v;
    };
    const TensorView cv = c_kind == 0 ? TensorView() : broadcast_view(c, {M, N}, "test", "c");
    Tensor want = y0;
    cpu::GemmProblem p{t(a, ta), t(b, tb), cv, want, alpha, beta, k_block};
    list.variants.back().run(p);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v)) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        p.y = got;
        const bool mlas_kernel = std::string(v.name).find("-mlas-") != std::string::npos;
        const char* why = v.declines ? v.declines(p) : nullptr;
        // Each kernel takes its own order (the mlas ones need b's rows contiguous).
        ASSERT_EQ(why == nullptr,
                  mlas_kernel == (k_block != 0) && (!mlas_kernel || p.b.stride(1) == 1))
            << v.name << ": " << (why ? why : "accepted");
        if (why) continue;
        v.run(p);
        const float* g = got.data<float>();
        const float* w = want.data<float>();
        for (int64_t i = 0; i < M * N; ++i)
          ASSERT_TRUE(test::same_bits_or_both_nan(g[i], w[i]))
              << "seed " << seed << " iter " << iter << " " << v.name << ": M " << M << " K " << K
              << " N " << N << " trans " << ta << tb << " c kind " << c_kind << " k_block "
              << k_block << " alpha " << alpha << " beta " << beta << " threads " << threads
              << " element " << i << ": " << g[i] << " vs " << w[i];
        ++runs[v.name];
      }
    }
  }
  for (const auto& v : list.variants) {
    if (v.reference || !list.runnable(v)) continue;
    const bool mlas_kernel = std::string(v.name).find("-mlas-") != std::string::npos;
    if (mlas_kernel == with_mlas)
      EXPECT_GT(runs[v.name], with_mlas ? 150 : 359) << v.name;
    else
      EXPECT_EQ(runs[v.name], 0) << v.name;
  }
  EXPECT_GE(wide, 5);
}

TEST(GemmFast, EveryVariantEqualsReferenceBitForBit) {
  every_variant_equals_reference(false);
}

TEST(GemmFast, MlasOrderEveryVariantEqualsReferenceBitForBit) {
  every_variant_equals_reference(true);
}

// One row in MLAS's order (a classifier) streams b's rows over a range of
// columns per thread (f32-gemm-mlas.inc, gemm_mlas_rows): shapes that leave
// 1-3 steps of k at a block's end, column tails of every width, N past
// kGemmMlasRowColumns (several ranges even at 1 thread), c absent, a scalar or
// a row, special values, 1-3 threads.
TEST(GemmFast, MlasOneRowStreamedRowsEqualReferenceBitForBit) {
  test::SettingsRestore restore;
  const unsigned seed = 4245;
  std::mt19937 rng(seed);
  const auto& list = cpu::gemm_kernels();
  int runs = 0, runnable = 0;
  for (const auto& v : list.variants)
    runnable +=
        !v.reference && list.runnable(v) && std::string(v.name).find("-mlas-") != std::string::npos;
  if (runnable == 0) GTEST_SKIP() << "no f32-gemm-mlas-* kernel runs below AVX2";
  for (int iter = 0; iter < 40; ++iter) {
    const int64_t K = iter < 8 ? 1 + iter : 1 + rng() % 700,
                  N = iter % 5 == 4 ? 1000 + rng() % 1200 : 1 + rng() % 90;
    const int64_t k_blocks[] = {1, 3, 5, 16, 256};
    const int64_t k_block = k_blocks[rng() % 5];
    const int c_kind = static_cast<int>(rng() % 3);  // none, scalar, row
    Tensor a(DType::f32, {1, K}), b(DType::f32, {K, N}), y0(DType::f32, {1, N});
    Tensor c(DType::f32, c_kind == 1 ? Shape{} : Shape{N});
    for (Tensor* t : {&a, &b, &c, &y0})
      for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = value(rng);
    const float beta = rng() % 5 == 0 ? 0.0f : value(rng);
    const TensorView cv = c_kind == 0 ? TensorView() : broadcast_view(c, {1, N}, "test", "c");
    Tensor want = y0;
    cpu::GemmProblem p{a, b, cv, want, 1.0f, beta, k_block};
    list.variants.back().run(p);
    for (const auto& v : list.variants) {
      if (v.reference || !list.runnable(v) || (v.declines && v.declines(p))) continue;
      for (int threads = 1; threads <= 3; ++threads) {
        set_num_threads(threads);
        Tensor got = y0;
        p.y = got;
        v.run(p);
        for (int64_t i = 0; i < N; ++i)
          ASSERT_TRUE(test::same_bits_or_both_nan(got.data<float>()[i], want.data<float>()[i]))
              << "seed " << seed << " iter " << iter << " " << v.name << ": K " << K << " N " << N
              << " k_block " << k_block << " c kind " << c_kind << " beta " << beta << " threads "
              << threads << " element " << i << ": " << got.data<float>()[i] << " vs "
              << want.data<float>()[i];
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 40 * 3 * runnable);  // only the mlas kernels take these
}

// GemmParams::mlas_k_block written out (y = beta * c, then each block's FMA
// chain added to it) on values of spread sizes, so the order shows; the
// public gemm() at every ISA cap and with Impl::reference; alpha != 1 refused.
TEST(GemmFast, MlasOrderIsChainsOfKBlocksAddedToBetaC) {
  test::SettingsRestore restore;
  const unsigned seed = 4244;
  std::mt19937 rng(seed);
  const int64_t M = 3, K = 600, N = 37;
  Tensor a(DType::f32, {M, K}), b(DType::f32, {K, N}), c(DType::f32, {N});
  for (Tensor* t : {&a, &b, &c})
    for (int64_t i = 0; i < t->numel(); ++i)
      t->data<float>()[i] = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng),
                                       static_cast<int>(rng() % 20) - 10);
  GemmParams p;
  p.beta = 0.75f;
  p.mlas_k_block = 256;
  int differs_from_sequential = 0;
  Tensor seq(DType::f32, {M, N});
  gemm(a, b, c, seq, GemmParams{1.0f, 0.75f});
  for (int cap = 0; cap < 4; ++cap) {
    const Isa isa = cap == 0 ? Isa::portable : cap == 1 ? Isa::avx2 : Isa::avx512;
    if (cap < 3 && isa > host_isa()) continue;
    set_impl(cap == 3 ? Impl::reference : Impl::fast);
    set_max_isa(cap == 3 ? host_isa() : isa);
    Tensor y(DType::f32, {M, N});
    gemm(a, b, c, y, p);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float tot = 0.75f * c.data<float>()[n];
        for (int64_t k0 = 0; k0 < K; k0 += 256) {
          float chain = 0.0f;
          for (int64_t k = k0; k < std::min<int64_t>(K, k0 + 256); ++k)
            chain = std::fma(a.data<float>()[m * K + k], b.data<float>()[k * N + n], chain);
          tot = chain + tot;
        }
        ASSERT_TRUE(test::same_bits_or_both_nan(y.data<float>()[m * N + n], tot))
            << "seed " << seed << " cap " << cap << " element " << m << "," << n;
        differs_from_sequential +=
            cap == 0 && !test::same_bits_or_both_nan(seq.data<float>()[m * N + n], tot);
      }
  }
  EXPECT_GT(differs_from_sequential, 20);
  p.alpha = 2.0f;
  Tensor y(DType::f32, {M, N});
  try {
    gemm(a, b, c, y, p);
    ADD_FAILURE() << "alpha 2 accepted with mlas_k_block";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("npukit::gemm"), std::string::npos) << m;
    EXPECT_NE(m.find("alpha"), std::string::npos) << m;
  }
  p.alpha = 1.0f;
  p.mlas_k_block = -4;
  try {
    gemm(a, b, c, y, p);
    ADD_FAILURE() << "mlas_k_block -4 accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("mlas_k_block"), std::string::npos) << m;
    EXPECT_NE(m.find("-4"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace test_gemm_fast
}  // namespace npukit
