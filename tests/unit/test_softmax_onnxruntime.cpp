// ONNX Runtime's MLAS Softmax / LogSoftmax model (softmax_onnxruntime.hpp):
// hand values, the row driver on strided views of any rank against the row
// kernel, both sum-of-exp kernels (they must differ on some rows, or the host
// choice would be untested), and bad input. The bits themselves are checked
// against ONNX Runtime in tests/python/test_ort_ops_math.py.
#include <bit>
#include <random>

#include "npukit/ops/softmax_onnxruntime.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_softmax_onnxruntime {
namespace {

constexpr uint32_t kSeed = 20261126;

TEST(SoftmaxOnnxruntime, HandValues) {
  for (auto k : {MlasSumExpKernel::fma3, MlasSumExpKernel::avx512f}) {
    const float x[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    float y[4];
    ref::softmax_mlas_row(x, y, 4, false, k);
    for (float v : y) EXPECT_EQ(v, 0.25f);
    ref::softmax_mlas_row(x, y, 4, true, k);
    for (float v : y) EXPECT_NEAR(v, -1.3862944f, 2e-7f);
    const float one[1] = {-7.5f};
    ref::softmax_mlas_row(one, y, 1, false, k);
    EXPECT_EQ(y[0], 1.0f);
    // Far below the maximum: exp underflows to (nearly) 0, never NaN.
    const float far[2] = {0.0f, -200.0f};
    ref::softmax_mlas_row(far, y, 2, false, k);
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_LT(y[1], 1e-30f);
  }
}

TEST(SoftmaxOnnxruntime, StridedRanksEqualRowKernel) {
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> u(-9.0f, 9.0f);
  int cases = 0;
  for (int iter = 0; iter < 60; ++iter) {
    const int r = 1 + iter % 6;
    Shape s(static_cast<size_t>(r));
    for (auto& d : s) d = 1 + static_cast<int64_t>(rng() % 5);
    const int axis = static_cast<int>(rng() % static_cast<unsigned>(r));
    s[static_cast<size_t>(axis)] = 1 + static_cast<int64_t>(rng() % 70);
    const bool log = iter % 2;
    Tensor x(DType::f32, s), y(DType::f32, s);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = u(rng);
    softmax_onnxruntime(x, y, axis - (iter % 3 == 0 ? r : 0), log);
    // Expected: each row gathered and run through the row kernel.
    const int64_t n = s[static_cast<size_t>(axis)];
    int64_t inner = 1;
    for (int i = axis + 1; i < r; ++i) inner *= s[static_cast<size_t>(i)];
    const int64_t outer = x.numel() / (n * inner);
    std::vector<float> row(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        for (int64_t k = 0; k < n; ++k)
          row[static_cast<size_t>(k)] = x.data<float>()[(o * n + k) * inner + in];
        ref::softmax_mlas_row(row.data(), want.data(), n, log, onnxruntime_sum_exp_kernel());
        for (int64_t k = 0; k < n; ++k)
          ASSERT_EQ(std::bit_cast<uint32_t>(y.data<float>()[(o * n + k) * inner + in]),
                    std::bit_cast<uint32_t>(want[static_cast<size_t>(k)]))
              << "seed " << kSeed << " iter " << iter << " shape " << shape_text(s) << " axis "
              << axis << " log " << log;
      }
    ++cases;
  }
  EXPECT_EQ(cases, 60);
}

TEST(SoftmaxOnnxruntime, KernelsDifferSomewhere) {
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> u(-9.0f, 9.0f);
  int differing_rows = 0;
  for (int64_t n : {9, 17, 47, 48, 49, 100, 257}) {
    std::vector<float> x(static_cast<size_t>(n)), a(x.size()), b(x.size());
    for (float& v : x) v = u(rng);
    ref::softmax_mlas_row(x.data(), a.data(), n, false, MlasSumExpKernel::fma3);
    ref::softmax_mlas_row(x.data(), b.data(), n, false, MlasSumExpKernel::avx512f);
    differing_rows += a != b;
  }
  EXPECT_GT(differing_rows, 0) << "the two kernels' sums never differ: the host choice is untested";
}

TEST(SoftmaxOnnxruntime, BadInput) {
  Tensor x(DType::f32, {2, 3}), y(DType::f32, {3, 2}), s(DType::f32, {});
  EXPECT_TRUE(
      raises([&] { softmax_onnxruntime(x, y, 1, false); }, "npukit::softmax_onnxruntime", "y"));
  EXPECT_TRUE(raises([&] { softmax_onnxruntime(x, x, 2, true); }, "npukit::log_softmax_onnxruntime",
                     "axis", "2"));
  EXPECT_TRUE(
      raises([&] { softmax_onnxruntime(s, s, 0, false); }, "npukit::softmax_onnxruntime", "x"));
}

}  // namespace
}  // namespace test_softmax_onnxruntime
}  // namespace npukit::test
