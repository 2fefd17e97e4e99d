// Every refusal of scales and zero points (detail::check_quant_params, which
// runs on every quantize / dequantize / QLinearConv call and builds its
// messages only on failure): the function, parameter, value and allowed range
// each message names, per tensor and per axis.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "npukit/error.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/tensor.hpp"

namespace test_quant_param_errors {
namespace {

using namespace npukit;

struct Want {
  std::string parameter, value, allowed;
};

void expect_refusal(const std::function<void()>& call, const Want& w, const std::string& what) {
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), w.parameter) << what;
    EXPECT_EQ(e.value(), w.value) << what;
    EXPECT_EQ(e.allowed(), w.allowed) << what;
    EXPECT_FALSE(e.function().empty()) << what;
  }
}

// x: 2 x 3 floats quantized to u8 along `axis` with the given scales / zero points.
void quantize(std::vector<float> scale, std::vector<int32_t> zp, int64_t axis, DType code) {
  const Tensor x = Tensor::from<float>({2, 3}, {0.f, 1.f, 2.f, 3.f, 4.f, 5.f});
  Tensor y(code, {2, 3});
  QuantizeParams p;
  p.q.scale = std::move(scale);
  p.q.zero_point = std::move(zp);
  p.q.axis = axis;
  quantize_linear(x, y, p);
}

TEST(QuantParamErrors, QuantizeNamesParameterValueAndRange) {
  using V = std::vector<float>;
  using Z = std::vector<int32_t>;
  auto q = [](V s, Z z, int64_t axis, DType code) { return [=] { quantize(s, z, axis, code); }; };
  expect_refusal(q(V{}, Z{0}, 1, DType::u8),
                 {"y_scale", "no values", "1 value or 1 per axis index"}, "no scale");
  expect_refusal(q(V{1.f, 1.f}, Z{0}, 1, DType::u8),
                 {"y_scale", "2 values", "1 or 3 (the size of axis 1)"},
                 "2 scales on an axis of 3");
  expect_refusal(q(V{1.f}, Z{0, 0}, 1, DType::u8),
                 {"y_zero_point", "2 values", "0, 1 or 3 (the size of axis 1)"},
                 "2 zero points on an axis of 3");
  quantize({1.f}, {0, 0}, 0, DType::u8);  // 2 zero points on the axis of 2: fine
}

TEST(QuantParamErrors, EachBadValueIsNamed) {
  // Per axis 1 (3 channels): one bad scale or zero point among good ones.
  for (int bad = 0; bad < 3; ++bad) {
    std::vector<float> s{0.5f, 0.25f, 1.f};
    s[static_cast<size_t>(bad)] = bad == 1 ? -0.25f : 0.0f;
    expect_refusal(
        [&] {
          quantize(s, {0, 0, 0}, 1, DType::u8);
        },
        {"y_scale", std::to_string(s[static_cast<size_t>(bad)]), "a finite scale > 0"},
        "scale " + std::to_string(bad));
  }
  expect_refusal(
      [] {
        quantize({1.f}, {0, 256, 0}, 1, DType::u8);
      },
      {"y_zero_point", "256", "[0, 255]"}, "u8 zero point 256");
  expect_refusal([] { quantize({1.f}, {-1}, 1, DType::u8); }, {"y_zero_point", "-1", "[0, 255]"},
                 "u8 zero point -1");
  expect_refusal(
      [] {
        quantize({1.f}, {0, 0, -129}, 1, DType::s8);
      },
      {"y_zero_point", "-129", "[-128, 127]"}, "s8 zero point -129");
  expect_refusal(
      [] {
        quantize({1.f, 1.f, 1.f}, {0}, 2, DType::u8);
      },
      {"axis", "2", "[0, 1]"}, "axis past the rank");
  // Extremes that pass.
  quantize({1.f}, {0, 255, 128}, 1, DType::u8);
  quantize({1.f}, {-128, 127, 0}, 1, DType::s8);
}

// No system averages codes (int_mean) or dequantized taps (float_mean) over
// the window clipped to the padding (issue #12 §3): the call is refused,
// naming the divisor, where it used to divide by the valid count silently.
TEST(QuantParamErrors, AverageOfCodesRefusesTheClippedWindowDivisor) {
  for (QAvgArith arith : {QAvgArith::float_mean, QAvgArith::int_mean}) {
    for (AvgDivisor divisor : {AvgDivisor::clipped_window, AvgDivisor::kernel_area}) {
      QLinearAvgPoolParams p;
      p.window.kernel_h = p.window.kernel_w = 3;
      p.window.stride_h = p.window.stride_w = 2;
      p.window.pad_top = p.window.pad_left = p.window.pad_bottom = p.window.pad_right = 1;
      p.window.ceil_mode = true;
      p.arith = arith;
      p.divisor = divisor;
      const Tensor x(DType::u8, {1, 2, 4, 5});
      Tensor y(DType::u8, qlinear_average_pool_output_shape(x.shape(), p));
      const std::string what =
          std::string(qavg_arith_name(arith)) + " / " + avg_divisor_name(divisor);
      if (divisor == AvgDivisor::kernel_area) {
        EXPECT_NO_THROW(qlinear_average_pool(x, y, p))
            << what;  // the check is not a blanket refusal
        continue;
      }
      expect_refusal([&] { qlinear_average_pool(x, y, p); },
                     {"divisor", "clipped_window",
                      std::string("kernel_area or valid_count (") + qavg_arith_name(arith) +
                          " has no clipped-window divisor)"},
                     what);
    }
  }
}

}  // namespace
}  // namespace test_quant_param_errors
