// QLinearConvCall, the QLinearConv call the ONNX runner validates once at plan
// time: the same bytes as qlinear_conv (and the reference) for the calls it
// was made for, at 1/2/3 threads and from two threads at once; every other
// call takes qlinear_conv's path (same bytes or same error); parameters that
// qlinear_conv refuses are refused when the call is made, with its message.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_problem.hpp"
#include "ops/qlinear_conv_call.hpp"

namespace npukit {
namespace test_qconv_call {
namespace {

struct Case {
  const char* name;
  DType x_dtype;
  int64_t n, c, oc, hw, k, stride, groups;
  bool bias, channels_last;
  Profile profile;
};

struct Layer {
  Tensor x, w, bias, x_storage;
  TensorView xv;  // x, or a channels-last view of the same values
  QLinearConvParams p;
};

void fill_codes(Tensor& t, std::mt19937& rng) {
  std::uniform_int_distribution<int> code(0, 255);
  auto* b = static_cast<uint8_t*>(t.view().raw());
  for (int64_t i = 0; i < t.numel(); ++i) b[i] = static_cast<uint8_t>(code(rng));
}

Layer make_layer(const Case& k, std::mt19937& rng) {
  Layer l;
  l.x = Tensor(k.x_dtype, {k.n, k.c, k.hw, k.hw});
  l.w = Tensor(DType::s8, {k.oc, k.c / k.groups, k.k, k.k});
  fill_codes(l.x, rng);
  fill_codes(l.w, rng);
  l.xv = l.x.view();
  if (k.channels_last) {  // the runner's int8 layout: NHWC bytes behind an NCHW view
    l.x_storage = Tensor(k.x_dtype, {k.n, k.hw, k.hw, k.c});
    l.xv = TensorView::contiguous(l.x_storage.view().raw(), k.x_dtype, l.x.shape(), Layout::nhwc);
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t c = 0; c < k.c; ++c)
        for (int64_t h = 0; h < k.hw; ++h)
          for (int64_t w = 0; w < k.hw; ++w)
            l.xv.at<uint8_t>(n, c, h, w) = l.x.view().at<uint8_t>(n, c, h, w);
  }
  Window2d& win = l.p.window;
  win.kernel_h = win.kernel_w = k.k;
  win.stride_h = win.stride_w = k.stride;
  win.pad_top = win.pad_bottom = win.pad_left = win.pad_right = k.k / 2;
  l.p.groups = k.groups;
  l.p.x_scale = 0.02f, l.p.x_zero_point = k.x_dtype == DType::u8 ? 17 : -9;
  l.p.y_scale = 0.7f, l.p.y_zero_point = k.x_dtype == DType::u8 ? 120 : 3;
  std::uniform_real_distribution<float> scale(0.01f, 0.05f);
  std::uniform_int_distribution<int> bias(-20000, 20000);
  l.p.w.scale.clear();
  l.p.w.zero_point.assign(1, 0);  // symmetric weights, as the torchvision models
  l.bias = Tensor(DType::s32, {k.oc});
  for (int64_t o = 0; o < k.oc; ++o) {
    l.p.w.scale.push_back(scale(rng));
    l.bias.data<int32_t>()[o] = bias(rng);
  }
  l.p.has_bias = k.bias;
  apply_profile(l.p, k.profile);
  return l;
}

std::vector<uint8_t> bytes(const TensorView& t) {
  std::vector<uint8_t> out;
  for (int64_t n = 0; n < t.dim(0); ++n)
    for (int64_t c = 0; c < t.dim(1); ++c)
      for (int64_t h = 0; h < t.dim(2); ++h)
        for (int64_t w = 0; w < t.dim(3); ++w) out.push_back(t.at<uint8_t>(n, c, h, w));
  return out;
}

const Case kCases[] = {
    {"3x3 u8 pad 1, bias", DType::u8, 1, 24, 40, 9, 3, 1, 1, true, false, Profile::onnxruntime},
    {"3x3 s8 stride 2, no bias", DType::s8, 2, 8, 20, 11, 3, 2, 1, false, false,
     Profile::onnxruntime},
    {"1x1 u8 channels-last", DType::u8, 1, 32, 72, 7, 1, 1, 1, true, true, Profile::onnxruntime},
    {"depthwise 3x3 u8 channels-last", DType::u8, 1, 48, 48, 14, 3, 1, 48, true, true,
     Profile::onnxruntime},
    {"depthwise 3x3 u8 stride 2", DType::u8, 1, 32, 32, 13, 3, 2, 32, true, false,
     Profile::onnxruntime},
    {"3x3 u8 pytorch", DType::u8, 1, 16, 24, 8, 3, 1, 1, true, false, Profile::pytorch},
};

TEST(QLinearConvCall, SameBytesAsQlinearConvAtOneTwoThreeThreads) {
  const uint32_t seed = 9011;
  std::mt19937 rng(seed);
  const int saved = num_threads();
  for (const Case& k : kCases) {
    Layer l = make_layer(k, rng);
    const TensorView bias = k.bias ? l.bias.view() : TensorView();
    const Shape out = qlinear_conv_output_shape(l.x.shape(), l.w.shape(), l.p);
    Tensor want(k.x_dtype, out);
    qconv_reference(qlinear_conv_problem(l.x, l.w, bias, want, l.p));
    const auto pk = pack_qlinear_conv_weights(l.w, bias, l.p, k.x_dtype);
    const QLinearConvCall call(k.x_dtype, l.x.shape(), l.w, bias, l.p, pk);
    EXPECT_TRUE(call.epilogue_checked()) << k.name;
    for (const int threads : {1, 2, 3}) {
      set_num_threads(threads);
      Tensor y(k.x_dtype, out);
      std::memset(y.view().raw(), 0x5a, static_cast<size_t>(y.numel()));
      ASSERT_TRUE(call.planned_for(l.xv, l.w, bias, y)) << k.name;
      call.run(l.xv, l.w, bias, y);
      EXPECT_EQ(bytes(y), bytes(want))
          << "seed " << seed << ", " << k.name << ", threads " << threads;
    }
  }
  set_num_threads(saved);
}

TEST(QLinearConvCall, OverlappingRunsOfOneCallGiveTheReferencesBytes) {
  const uint32_t seed = 9012;
  std::mt19937 rng(seed);
  const Case& k = kCases[3];  // depthwise, channels-last
  Layer l = make_layer(k, rng);
  const Shape out = qlinear_conv_output_shape(l.x.shape(), l.w.shape(), l.p);
  Tensor want(k.x_dtype, out);
  qconv_reference(qlinear_conv_problem(l.x, l.w, l.bias, want, l.p));
  const QLinearConvCall call(k.x_dtype, l.x.shape(), l.w, l.bias, l.p,
                             pack_qlinear_conv_weights(l.w, l.bias, l.p, k.x_dtype));
  int bad[2] = {0, 0};
  auto run = [&](int t) {
    Tensor y(k.x_dtype, out);
    for (int i = 0; i < 30; ++i) {
      std::memset(y.view().raw(), 0x5a, static_cast<size_t>(y.numel()));
      call.run(l.xv, l.w, l.bias, y);
      bad[t] += bytes(y) != bytes(want);
    }
  };
  std::thread t0(run, 0), t1(run, 1);
  t0.join(), t1.join();
  EXPECT_EQ(bad[0] + bad[1], 0) << "seed " << seed << ": runs differing from the reference";
}

TEST(QLinearConvCall, OtherCallsTakeQlinearConvsPath) {
  const uint32_t seed = 9013;
  std::mt19937 rng(seed);
  const Case& k = kCases[0];
  Layer l = make_layer(k, rng);
  const Shape out = qlinear_conv_output_shape(l.x.shape(), l.w.shape(), l.p);
  const QLinearConvCall call(k.x_dtype, l.x.shape(), l.w, l.bias, l.p,
                             pack_qlinear_conv_weights(l.w, l.bias, l.p, k.x_dtype));
  // Other weights with the same values: not the planned view, same bytes.
  Tensor w2(DType::s8, l.w.shape());
  std::memcpy(w2.view().raw(), l.w.view().raw(), static_cast<size_t>(l.w.numel()));
  Tensor y(k.x_dtype, out), want(k.x_dtype, out);
  qlinear_conv(l.x, l.w, l.bias, want, l.p);
  EXPECT_FALSE(call.planned_for(l.x, w2, l.bias, y));
  call.run(l.x, w2, l.bias, y);
  EXPECT_EQ(bytes(y), bytes(want)) << "seed " << seed;
  // Wrong calls: qlinear_conv's errors, word for word.
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Tensor y_small(k.x_dtype, {1, 40, 8, 8}), y_s8(DType::s8, out);
  for (Tensor* bad_y : {&y_small, &y_s8}) {
    EXPECT_FALSE(call.planned_for(l.x, l.w, l.bias, *bad_y));
    const std::string got = message([&] { call.run(l.x, l.w, l.bias, *bad_y); });
    const std::string expected = message([&] { qlinear_conv(l.x, l.w, l.bias, *bad_y, l.p); });
    EXPECT_NE(expected, "no error");
    EXPECT_EQ(got, expected);
  }
}

TEST(QLinearConvCall, RefusedParametersRaiseQlinearConvsErrorWhenMade) {
  const uint32_t seed = 9014;
  std::mt19937 rng(seed);
  const Case& k = kCases[0];
  Layer l = make_layer(k, rng);
  l.bias.data<int32_t>()[3] = INT32_MAX;  // the accumulator could overflow
  QLinearConvParams zero_scale = l.p;
  zero_scale.y_scale = 0.0f;
  for (const QLinearConvParams* p : {&l.p, &zero_scale}) {
    Tensor y(k.x_dtype, qlinear_conv_output_shape(l.x.shape(), l.w.shape(), *p));
    std::string expected = "no error", got = "no error";
    try {
      qlinear_conv(l.x, l.w, l.bias, y, *p);
    } catch (const Error& e) {
      expected = e.what();
    }
    try {
      QLinearConvCall call(k.x_dtype, l.x.shape(), l.w, l.bias, *p, nullptr);
    } catch (const Error& e) {
      got = e.what();
    }
    EXPECT_NE(expected, "no error");
    EXPECT_EQ(got, expected);
  }
}

}  // namespace
}  // namespace test_qconv_call
}  // namespace npukit
