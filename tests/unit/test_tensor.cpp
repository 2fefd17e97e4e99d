#include <gtest/gtest.h>

#include "npukit/tensor.hpp"

namespace npukit {
namespace test_tensor {
namespace {

TEST(Tensor, NhwcStridesKeepLogicalOrder) {
  Tensor t(DType::f32, {1, 2, 2, 3}, Layout::nhwc);
  EXPECT_EQ(t.view().strides(), (Shape{12, 1, 6, 2}));
  t.view().at<float>(0, 1, 1, 2) = 5.0f;
  EXPECT_EQ(t.data<float>()[1 * 6 + 2 * 2 + 1], 5.0f);
  const std::vector<float> v = t.to_vector<float>();
  EXPECT_EQ(v[1 * 6 + 1 * 3 + 2], 5.0f);  // logical NCHW position of (0, 1, 1, 2)
}

TEST(Tensor, RejectsRankAboveEight) {
  EXPECT_NO_THROW(Tensor(DType::f32, {1, 1, 1, 1, 1}));
  EXPECT_THROW(Tensor(DType::f32, {1, 1, 1, 1, 1, 1, 1, 1, 1}), Error);
}

TEST(Tensor, RejectsNegativeSize) {
  try {
    Tensor(DType::u8, {2, -1});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "shape");
    EXPECT_EQ(e.value(), "[2, -1]");
    EXPECT_NE(std::string(e.what()).find("npukit::Tensor"), std::string::npos);
  }
}

TEST(Tensor, ElementCountOverflowIsAnError) {
  const Shape huge{int64_t{1} << 32, int64_t{1} << 32};
  EXPECT_EQ(shape_numel({int64_t{1} << 31, int64_t{1} << 31}), int64_t{1} << 62);
  try {
    shape_numel(huge);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "shape");
    EXPECT_NE(std::string(e.what()).find("below 2^63"), std::string::npos) << e.what();
  }
}

TEST(Tensor, DataChecksDtype) {
  Tensor t(DType::s8, {4});
  EXPECT_THROW(t.data<float>(), Error);
  EXPECT_NO_THROW(t.data<int8_t>());
}

TEST(Tensor, FromChecksCount) {
  EXPECT_THROW(Tensor::from<float>({2, 2}, {1, 2, 3}), Error);
}

TEST(Tensor, CopyBetweenLayouts) {
  Tensor a = Tensor::from<int32_t>({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor b(DType::s32, {1, 2, 1, 2}, Layout::nhwc);
  copy(a, b);
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(std::vector<int32_t>(b.data<int32_t>(), b.data<int32_t>() + 4),
            (std::vector<int32_t>{1, 3, 2, 4}));
}

TEST(DType, Names) {
  EXPECT_EQ(dtype_from_name("uint8"), DType::u8);
  EXPECT_EQ(dtype_size(DType::s16), 2u);
  EXPECT_THROW(dtype_from_name("float64"), Error);
}

}  // namespace
}  // namespace test_tensor
}  // namespace npukit
