// ONNX-style scale / zero point, QuantizeLinear / DequantizeLinear element
// math, per tensor and per axis. Expected values are computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "npukit/quant/onnx_quant.hpp"

namespace npukit {
namespace test_quant_onnx_params {
namespace {

TEST(OnnxQuant, QuantizeValueRoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(onnx_quantize_value(2.5f, 1.0f, 0, DType::u8), 2);
  EXPECT_EQ(onnx_quantize_value(3.5f, 1.0f, 0, DType::u8), 4);
  EXPECT_EQ(onnx_quantize_value(-0.5f, 1.0f, 0, DType::s8), 0);
  EXPECT_EQ(onnx_quantize_value(-1.5f, 1.0f, 0, DType::s8), -2);
  EXPECT_EQ(onnx_quantize_value(1.25f, 0.5f, 10, DType::u8), 12);  // 2.5 -> 2, + 10
  EXPECT_EQ(onnx_quantize_value(1000.0f, 1.0f, 0, DType::u8), 255);
  EXPECT_EQ(onnx_quantize_value(-1000.0f, 1.0f, 0, DType::u8), 0);
  EXPECT_EQ(onnx_quantize_value(-1000.0f, 1.0f, 0, DType::s8), -128);
  EXPECT_EQ(onnx_quantize_value(-1.0f, 1.0f, -128, DType::s8), -128);  // saturation after adding zp
  EXPECT_EQ(onnx_quantize_value(INFINITY, 1.0f, 0, DType::s8), 127);
  EXPECT_EQ(onnx_quantize_value(-INFINITY, 1.0f, 0, DType::u8), 0);
  EXPECT_EQ(onnx_quantize_value(1e30f, 1e-30f, 0, DType::u8), 255);
  EXPECT_THROW(onnx_quantize_value(std::nanf(""), 1.0f, 0, DType::u8), Error);
  EXPECT_EQ(onnx_dequantize_value(10, 0.5f, 3), 3.5f);
  EXPECT_EQ(onnx_dequantize_value(-128, 0.25f, 0), -32.0f);
}

TEST(OnnxQuant, CalibrateAsymmetric) {
  const Tensor x = Tensor::from<float>({3}, {-1.0f, 0.0f, 3.0f});
  OnnxQuantParams p = onnx_calibrate(x, DType::u8);
  EXPECT_EQ(p.scale[0], 4.0f / 255.0f);
  EXPECT_EQ(p.zero_point[0], 64);  // 0 - (-1) / (4/255) = 63.75 -> 64
  p = onnx_calibrate(x, DType::s8);
  EXPECT_EQ(p.zero_point[0], -64);  // -128 + 63.75 = -64.25 -> -64
  // The range always includes 0: an all-positive tensor gets zp = qmin.
  p = onnx_calibrate(Tensor::from<float>({2}, {1.0f, 2.0f}), DType::u8);
  EXPECT_EQ(p.scale[0], 2.0f / 255.0f);
  EXPECT_EQ(p.zero_point[0], 0);
  p = onnx_calibrate(Tensor::from<float>({2}, {1.0f, 2.0f}), DType::s8);
  EXPECT_EQ(p.zero_point[0], -128);
  // All-negative: zp = qmax.
  p = onnx_calibrate(Tensor::from<float>({2}, {-1.0f, -2.0f}), DType::u8);
  EXPECT_EQ(p.zero_point[0], 255);
}

TEST(OnnxQuant, CalibrateSymmetric) {
  const Tensor x = Tensor::from<float>({2}, {-2.0f, 1.0f});
  OnnxQuantParams p = onnx_calibrate(x, DType::s8, OnnxCalibration::symmetric);
  EXPECT_EQ(p.scale[0], 2.0f / 127.0f);
  EXPECT_EQ(p.zero_point[0], 0);
  EXPECT_EQ(onnx_quantize(x, p).to_vector<int8_t>(),
            (std::vector<int8_t>{-127, 64}));  // 63.5 -> 64
  p = onnx_calibrate(x, DType::u8, OnnxCalibration::symmetric);
  EXPECT_EQ(p.scale[0], 4.0f / 255.0f);
  EXPECT_EQ(p.zero_point[0], 128);
}

TEST(OnnxQuant, PerAxisQuantizeDequantize) {
  // 2 x 2, axis 1: column 0 scale 0.5 zp 0, column 1 scale 0.25 zp 100.
  const OnnxQuantParams p{DType::u8, 1, {0.5f, 0.25f}, {0, 100}};
  const Tensor x = Tensor::from<float>({2, 2}, {1.0f, 1.0f, 0.75f, -1.0f});
  // [1/0.5, 1/0.25 + 100, 0.75/0.5 = 1.5 -> 2, -4 + 100]
  const Tensor q = onnx_quantize(x, p);
  EXPECT_EQ(q.to_vector<uint8_t>(), (std::vector<uint8_t>{2, 104, 2, 96}));
  EXPECT_EQ(onnx_dequantize(q, p).to_vector<float>(),
            (std::vector<float>{1.0f, 1.0f, 1.0f, -1.0f}));
  const OnnxQuantParams a = onnx_calibrate(x, DType::u8, OnnxCalibration::asymmetric, 0);
  ASSERT_EQ(a.scale.size(), 2u);
  EXPECT_EQ(a.scale[0], 1.0f / 255.0f);  // row 0 range [0, 1]
  EXPECT_EQ(a.zero_point[0], 0);
  EXPECT_EQ(a.scale[1], 1.75f / 255.0f);  // row 1 range [-1, 0.75]
}

TEST(OnnxQuant, Requantize) {
  const OnnxQuantParams from{DType::u8, -1, {0.5f}, {10}};
  const OnnxQuantParams to{DType::s8, -1, {0.25f}, {0}};
  const Tensor q = Tensor::from<uint8_t>({3}, {14, 10, 255});
  // (14-10)*0.5 = 2 -> 8; 0 -> 0; 122.5 -> 490 -> 127
  EXPECT_EQ(onnx_requantize(q, from, to).to_vector<int8_t>(), (std::vector<int8_t>{8, 0, 127}));
}

TEST(OnnxQuant, Errors) {
  const Tensor x = Tensor::from<float>({2}, {0.0f, 0.0f});
  EXPECT_THROW(onnx_calibrate(x, DType::u8), Error);
  EXPECT_THROW(onnx_calibrate(x, DType::s8, OnnxCalibration::symmetric), Error);
  const Tensor y = Tensor::from<float>({2}, {1.0f, 2.0f});
  try {
    onnx_calibrate(y, DType::s32);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "dtype");
    EXPECT_EQ(e.allowed(), "s8 or u8");
  }
  EXPECT_THROW(onnx_quantize(y, {DType::u8, -1, {0.0f}, {0}}), Error);     // scale 0
  EXPECT_THROW(onnx_quantize(y, {DType::u8, -1, {1.0f}, {256}}), Error);   // zp out of u8
  EXPECT_THROW(onnx_quantize(y, {DType::s8, -1, {1.0f}, {-129}}), Error);  // zp out of s8
  EXPECT_THROW(onnx_quantize(y, {DType::u8, 0, {1.0f}, {0}}), Error);      // 2 channels expected
  EXPECT_THROW(onnx_quantize(y, {DType::u8, 1, {1.0f}, {0}}), Error);      // axis out of range
  EXPECT_THROW(onnx_dequantize(Tensor::from<int8_t>({1}, {1}), {DType::u8, -1, {1.0f}, {0}}),
               Error);
}

}  // namespace
}  // namespace test_quant_onnx_params
}  // namespace npukit
