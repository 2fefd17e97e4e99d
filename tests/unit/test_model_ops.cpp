// The small core operators the ONNX runner needed (Add/Mul broadcasting, Clip,
// Softmax, Transpose, Concat, BatchNormalization, Gemm), on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "npukit/ops/activation.hpp"
#include "npukit/ops/batchnorm.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/gemm.hpp"
#include "npukit/ops/layout.hpp"

namespace npukit {
namespace test_model_ops {
namespace {

TEST(Binary, BroadcastsRowAgainstColumn) {
  // (2, 1) + (3) -> (2, 3): a[i] + b[j].
  Tensor a = Tensor::from<float>({2, 1}, {10, 20});
  Tensor b = Tensor::from<float>({3}, {1, 2, 3});
  EXPECT_EQ(broadcast_shape(a.shape(), b.shape()), (Shape{2, 3}));
  Tensor y(DType::f32, {2, 3});
  add(a, b, y);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{11, 12, 13, 21, 22, 23}));
  mul(a, b, y);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{10, 20, 30, 20, 40, 60}));
}

TEST(Binary, ScalarAndPerChannel) {
  Tensor x = Tensor::from<float>({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor c = Tensor::from<float>({2, 1, 1}, {100, 200});  // per channel, as Add of a bias
  Tensor y(DType::f32, {1, 2, 1, 2});
  add(x, c, y);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{101, 102, 203, 204}));
  Tensor s = Tensor::from<float>({}, {0.5f});
  mul(x, s, y);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f, 2}));
}

TEST(Binary, RejectsIncompatibleShapes) {
  try {
    broadcast_shape({2, 3}, {2}, "npukit::binary");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "b");
    EXPECT_EQ(e.value(), "shape [2]");
  }
  Tensor a(DType::f32, {2}), b(DType::f32, {2}), y(DType::f32, {3});
  EXPECT_THROW(add(a, b, y), Error);
}

TEST(Clip, BoundsAndNaN) {
  Tensor x = Tensor::from<float>({5}, {-2, -0.5f, 0.25f, 3, std::nanf("")});
  Tensor y(DType::f32, {5});
  clip(x, y, {-1.0f, 1.0f});
  const auto v = y.to_vector<float>();
  EXPECT_EQ(v[0], -1.0f);
  EXPECT_EQ(v[1], -0.5f);
  EXPECT_EQ(v[2], 0.25f);
  EXPECT_EQ(v[3], 1.0f);
  EXPECT_TRUE(std::isnan(v[4]));
  clip(x, y, {2.0f, 1.0f});  // min > max: every value becomes max (min(max(x, 2), 1))
  EXPECT_EQ(y.to_vector<float>()[0], 1.0f);
}

TEST(Softmax, KnownValuesAlongEachAxis) {
  // softmax([0, ln 3]) = [1/4, 3/4]
  const float l3 = std::log(3.0f);
  Tensor x = Tensor::from<float>({2, 2}, {0, l3, l3, 0});
  Tensor y(DType::f32, {2, 2});
  softmax(x, y, -1);
  auto v = y.to_vector<float>();
  EXPECT_NEAR(v[0], 0.25f, 1e-6);
  EXPECT_NEAR(v[1], 0.75f, 1e-6);
  EXPECT_NEAR(v[2], 0.75f, 1e-6);
  softmax(x, y, 0);  // columns: [0, ln3] and [ln3, 0]
  v = y.to_vector<float>();
  EXPECT_NEAR(v[0], 0.25f, 1e-6);
  EXPECT_NEAR(v[2], 0.75f, 1e-6);
  EXPECT_NEAR(v[1], 0.75f, 1e-6);
  // Large inputs do not overflow (the max is subtracted first).
  Tensor big = Tensor::from<float>({2}, {1000, 1000});
  Tensor yb(DType::f32, {2});
  softmax(big, yb, 0);
  EXPECT_EQ(yb.to_vector<float>(), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_THROW(softmax(x, y, 2), Error);
}

TEST(Transpose, PermutesAndDefaultsToReverse) {
  Tensor x = Tensor::from<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y(DType::s32, {3, 2});
  transpose(x, y, {});
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  Tensor x3 = Tensor::from<uint8_t>({1, 2, 2}, {1, 2, 3, 4});
  Tensor y3(DType::u8, {2, 2, 1});
  transpose(x3, y3, {2, 1, 0});
  EXPECT_EQ(y3.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 3, 2, 4}));
  std::vector<int64_t> bad = {0, 0};
  EXPECT_THROW(transpose_shape({2, 3}, bad), Error);
}

TEST(Concat, JoinsAlongAxis) {
  Tensor a = Tensor::from<float>({2, 1}, {1, 2});
  Tensor b = Tensor::from<float>({2, 2}, {3, 4, 5, 6});
  Tensor y(DType::f32, {2, 3});
  concat({a, b}, y, 1);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  Tensor y0(DType::f32, {4, 1});
  concat({a, a}, y0, -2);
  EXPECT_EQ(y0.to_vector<float>(), (std::vector<float>{1, 2, 1, 2}));
  EXPECT_THROW(concat_shape({{2, 1}, {3, 2}}, 1), Error);
}

TEST(BatchNorm, InferenceFormula) {
  // y = (x - mean) / sqrt(var + eps) * scale + bias, eps = 0: var 4 -> sd 2.
  Tensor x = Tensor::from<float>({1, 2, 1, 2}, {3, 5, 1, 2});
  Tensor scale = Tensor::from<float>({2}, {2, 1});
  Tensor bias = Tensor::from<float>({2}, {1, 0});
  Tensor mean = Tensor::from<float>({2}, {1, 0});
  Tensor var = Tensor::from<float>({2}, {4, 1});
  Tensor y(DType::f32, {1, 2, 1, 2});
  batch_norm(x, scale, bias, mean, var, y, {0.0f});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 5, 1, 2}));
  Tensor short_mean = Tensor::from<float>({1}, {0});
  EXPECT_THROW(batch_norm(x, scale, bias, short_mean, var, y), Error);
}

TEST(Gemm, TransposesAlphaBetaAndBias) {
  // a (2x2), b^T given as (2x2): y = 2 * a b + 0.5 * c with c a row vector.
  Tensor a = Tensor::from<float>({2, 2}, {1, 2, 3, 4});
  Tensor bt = Tensor::from<float>({2, 2}, {1, 0, 1, 1});  // b = [[1, 1], [0, 1]]
  Tensor c = Tensor::from<float>({2}, {10, 20});
  Tensor y(DType::f32, {2, 2});
  gemm(a, bt, c, y, {2.0f, 0.5f, false, true});
  // a b = [[1, 3], [3, 7]]
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{7, 16, 11, 24}));
  Tensor at = Tensor::from<float>({2, 2}, {1, 3, 2, 4});  // a transposed
  gemm(at, bt, TensorView(), y, {1.0f, 1.0f, true, true});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 3, 3, 7}));
  Tensor bad_c = Tensor::from<float>({3}, {1, 2, 3});
  EXPECT_THROW(gemm(a, bt, bad_c, y, {}), Error);
}

}  // namespace
}  // namespace test_model_ops
}  // namespace npukit
