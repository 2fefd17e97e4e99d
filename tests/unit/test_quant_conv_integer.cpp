// Integer convolutions of seed 001 and MRT: hand-computed outputs, a
// differential check of the seed formula against npukit's fp32 conv2d on
// small integers (exact in fp32), the zero-point expansion against the direct
// sum, and the int32 accumulator at its proven limits.
#include <gtest/gtest.h>

#include <random>

#include "npukit/ops/conv2d.hpp"
#include "npukit/ops/int_conv2d.hpp"

namespace npukit {
namespace test_quant_conv_integer {
namespace {

Tensor run_seed(const Tensor& x, const Tensor& w, const IntConv2dParams& p) {
  Tensor y(DType::s32, int_conv2d_output_shape(x.shape(), w.shape(), p));
  seed_conv2d(x, w, y, p);
  return y;
}

IntConv2dParams params_for(int64_t kh, int64_t kw) {
  IntConv2dParams p;
  p.window.kernel_h = kh;
  p.window.kernel_w = kw;
  return p;
}

TEST(SeedConv2d, HandComputed) {
  const Tensor x = Tensor::from<int8_t>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor w = Tensor::from<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  IntConv2dParams p = params_for(2, 2);
  // 1*1+2*2+4*3+5*4 = 37, then 47, 67, 77
  EXPECT_EQ(run_seed(x, w, p).to_vector<int32_t>(), (std::vector<int32_t>{37, 47, 67, 77}));
  // pad 1, dilation 2, stride 2: each window sees only x[1][1] = 5, under a different weight.
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.window.dilation_h = p.window.dilation_w = 2;
  p.window.stride_h = p.window.stride_w = 2;
  EXPECT_EQ(run_seed(x, w, p).to_vector<int32_t>(), (std::vector<int32_t>{20, 15, 10, 5}));
}

TEST(SeedConv2d, GroupsPickTheirChannels) {
  // C = 4, groups 2, OC = 2: output 0 reads channels 0-1, output 1 reads channels 2-3.
  const Tensor x = Tensor::from<uint8_t>({1, 4, 1, 1}, {1, 2, 3, 4});
  const Tensor w = Tensor::from<int8_t>({2, 2, 1, 1}, {10, 1, -10, -1});
  IntConv2dParams p = params_for(1, 1);
  p.groups = 2;
  EXPECT_EQ(run_seed(x, w, p).to_vector<int32_t>(), (std::vector<int32_t>{12, -34}));
}

// Fills t with random integers in [lo, hi].
template <class T>
Tensor random_tensor(const Shape& s, int lo, int hi, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(shape_numel(s)));
  for (T& e : v) e = static_cast<T>(d(rng));
  return Tensor::from<T>(s, v);
}

Tensor to_f32(const Tensor& t) {
  Tensor f(DType::f32, t.shape());
  float* out = f.data<float>();
  if (t.dtype() == DType::s8) {
    const std::vector<int8_t> v = t.to_vector<int8_t>();
    for (size_t i = 0; i < v.size(); ++i) out[i] = v[i];
  } else {
    const std::vector<uint8_t> v = t.to_vector<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i) out[i] = v[i];
  }
  return f;
}

struct RandomConfig {
  IntConv2dParams p;
  Shape xs, ws;
  std::string text;
};

RandomConfig random_config(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomConfig c;
  const int groups = pick(1, 3), icg = pick(1, 3), opg = pick(1, 3);
  const int kh = pick(1, 3), kw = pick(1, 3);
  c.p.groups = groups;
  c.p.window.kernel_h = kh;
  c.p.window.kernel_w = kw;
  c.p.window.stride_h = pick(1, 3);
  c.p.window.stride_w = pick(1, 3);
  c.p.window.dilation_h = pick(1, 3);
  c.p.window.dilation_w = pick(1, 3);
  c.p.window.pad_top = pick(0, 2);
  c.p.window.pad_bottom = pick(0, 2);
  c.p.window.pad_left = pick(0, 2);
  c.p.window.pad_right = pick(0, 2);
  const int h = (kh - 1) * static_cast<int>(c.p.window.dilation_h) + pick(1, 6);
  const int w = (kw - 1) * static_cast<int>(c.p.window.dilation_w) + pick(1, 6);
  c.xs = {pick(1, 2), groups * icg, h, w};
  c.ws = {groups * opg, icg, kh, kw};
  c.text = "x" + shape_text(c.xs) + " w" + shape_text(c.ws) + " groups " + std::to_string(groups) +
           " stride " + std::to_string(c.p.window.stride_h) + "," +
           std::to_string(c.p.window.stride_w) + " dilation " +
           std::to_string(c.p.window.dilation_h) + "," + std::to_string(c.p.window.dilation_w) +
           " pads " + std::to_string(c.p.window.pad_top) + "," +
           std::to_string(c.p.window.pad_left) + "," + std::to_string(c.p.window.pad_bottom) + "," +
           std::to_string(c.p.window.pad_right);
  return c;
}

TEST(SeedConv2d, MatchesFp32ConvOnSmallIntegers) {
  std::mt19937 rng(3001);  // seed for reproduction
  for (int i = 0; i < 300; ++i) {
    const RandomConfig c = random_config(rng);
    const Tensor x = random_tensor<uint8_t>(c.xs, 0, 255, rng);
    const Tensor w = random_tensor<int8_t>(c.ws, -128, 127, rng);
    const Tensor y = run_seed(x, w, c.p);
    Conv2dParams fp;
    fp.window = c.p.window;
    fp.groups = c.p.groups;
    Tensor yf(DType::f32, conv2d_output_shape(c.xs, c.ws, fp));
    ASSERT_EQ(yf.shape(), y.shape()) << c.text;
    conv2d(to_f32(x), to_f32(w), TensorView(), yf, fp);  // |sums| < 2^24: exact in fp32
    const std::vector<int32_t> a = y.to_vector<int32_t>();
    const std::vector<float> b = yf.to_vector<float>();
    for (size_t k = 0; k < a.size(); ++k)
      ASSERT_EQ(static_cast<float>(a[k]), b[k]) << "config " << i << ": " << c.text << " at " << k;
  }
}

TEST(ZeroPointConv2d, ExpansionEqualsDirectSum) {
  std::mt19937 rng(3002);
  int64_t elements = 0;
  for (int i = 0; i < 400; ++i) {
    const RandomConfig c = random_config(rng);
    const bool x_signed = i % 2, w_signed = (i / 2) % 2;
    const Tensor x = x_signed ? random_tensor<int8_t>(c.xs, -128, 127, rng)
                              : random_tensor<uint8_t>(c.xs, 0, 255, rng);
    const Tensor w = w_signed ? random_tensor<int8_t>(c.ws, -128, 127, rng)
                              : random_tensor<uint8_t>(c.ws, 0, 255, rng);
    IntConv2dParams p = c.p;
    p.x_zero_point = x_signed ? std::uniform_int_distribution<int>(-128, 127)(rng)
                              : std::uniform_int_distribution<int>(0, 255)(rng);
    p.w_zero_point = w_signed ? std::uniform_int_distribution<int>(-128, 127)(rng)
                              : std::uniform_int_distribution<int>(0, 255)(rng);
    const Shape out = int_conv2d_output_shape(c.xs, c.ws, p);
    Tensor a(DType::s32, out), b(DType::s32, out);
    zero_point_conv2d_expanded(x, w, a, p);
    zero_point_conv2d_direct(x, w, b, p);
    ASSERT_EQ(a.to_vector<int32_t>(), b.to_vector<int32_t>())
        << "config " << i << ": " << c.text << " zp_x " << p.x_zero_point << " zp_w "
        << p.w_zero_point;
    elements += a.numel();
  }
  EXPECT_GT(elements, 10000);
}

TEST(ZeroPointConv2d, PaddingIsTheQuantizedRealZero) {
  // One input 7 with zp_x 3 in a 3x3 window padded by 1: the 8 padded taps read 3,
  // so only (7 - 3) * (w_center - zp_w) survives: 4 * (5 - 1) = 16.
  const Tensor x = Tensor::from<uint8_t>({1, 1, 1, 1}, {7});
  const Tensor w = Tensor::from<uint8_t>({1, 1, 3, 3}, {9, 9, 9, 9, 5, 9, 9, 9, 9});
  IntConv2dParams p = params_for(3, 3);
  p.window.pad_top = p.window.pad_bottom = p.window.pad_left = p.window.pad_right = 1;
  p.x_zero_point = 3;
  p.w_zero_point = 1;
  Tensor y(DType::s32, {1, 1, 1, 1});
  zero_point_conv2d_expanded(x, w, y, p);
  EXPECT_EQ(y.to_vector<int32_t>()[0], 16);
}

TEST(ZeroPointConv2d, MrtRequantization) {
  // S = (10 - 5)(3 - 2) + (20 - 5)(1 - 2) = -10
  const Tensor x = Tensor::from<uint8_t>({1, 1, 1, 2}, {10, 20});
  const Tensor w = Tensor::from<uint8_t>({1, 1, 1, 2}, {3, 1});
  IntConv2dParams p = params_for(1, 2);
  p.x_zero_point = 5;
  p.w_zero_point = 2;
  EXPECT_EQ(mrt_conv2d(x, w, p, {1, -2}, 8).to_vector<int32_t>()[0], -2);  // -2.5 -> -2
  EXPECT_EQ(mrt_conv2d(x, w, p, {3, -1}, 8).to_vector<int32_t>()[0], -15);
  EXPECT_EQ(mrt_conv2d(x, w, p, {100, 0}, 8).to_vector<int32_t>()[0], -127);  // clip
  EXPECT_THROW(mrt_conv2d(x, w, p, {1, -2}, 0), Error);
}

TEST(IntConv2dOverflow, SeedAtTheInt8Limit) {
  const int64_t limit = int_conv2d_max_taps(DType::s8, DType::s8, 0, 0);
  ASSERT_EQ(limit, 131071);  // floor((2^31 - 1) / 128^2)
  // Every product is (-128)(-128) = 2^14: the sum 131071 * 2^14 = 2147467264 fits.
  const Tensor x = Tensor::from<int8_t>({1, limit, 1, 1}, std::vector<int8_t>(limit, -128));
  const Tensor w = Tensor::from<int8_t>({1, limit, 1, 1}, std::vector<int8_t>(limit, -128));
  EXPECT_EQ(run_seed(x, w, params_for(1, 1)).to_vector<int32_t>()[0], 2147467264);
  const Tensor x2 = Tensor::from<int8_t>({1, limit + 1, 1, 1}, std::vector<int8_t>(limit + 1, 1));
  const Tensor w2 = Tensor::from<int8_t>({1, limit + 1, 1, 1}, std::vector<int8_t>(limit + 1, 1));
  try {
    run_seed(x2, w2, params_for(1, 1));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "w");
    EXPECT_NE(e.value().find("131072 taps"), std::string::npos);
    EXPECT_NE(e.allowed().find("at most 131071"), std::string::npos);
  }
}

TEST(IntConv2dOverflow, ZeroPointExpansionAtTheUint8Limit) {
  const int64_t limit = int_conv2d_max_taps(DType::u8, DType::u8, 255, 255);
  ASSERT_EQ(limit, 8256);  // floor((2^31 - 1) / (4 * 255^2))
  IntConv2dParams p = params_for(1, 1);
  p.x_zero_point = 255;
  p.w_zero_point = 255;
  // Extremes of each term: x = 0 (window sum 0, products 0) and w = 0; then x = 255.
  for (uint8_t xv : {uint8_t{0}, uint8_t{255}})
    for (uint8_t wv : {uint8_t{0}, uint8_t{255}}) {
      const Tensor x = Tensor::from<uint8_t>({1, limit, 1, 1}, std::vector<uint8_t>(limit, xv));
      const Tensor w = Tensor::from<uint8_t>({1, limit, 1, 1}, std::vector<uint8_t>(limit, wv));
      Tensor y(DType::s32, {1, 1, 1, 1});
      zero_point_conv2d_expanded(x, w, y, p);
      const int64_t want = limit * (int64_t{xv} - 255) * (int64_t{wv} - 255);
      EXPECT_EQ(y.to_vector<int32_t>()[0], want) << int{xv} << " " << int{wv};
    }
  const Tensor x = Tensor::from<uint8_t>({1, limit + 1, 1, 1}, std::vector<uint8_t>(limit + 1, 0));
  Tensor y(DType::s32, {1, 1, 1, 1});
  EXPECT_THROW(zero_point_conv2d_expanded(x, x, y, p), Error);
  // The same size is fine without zero points.
  EXPECT_NO_THROW(zero_point_conv2d_expanded(x, x, y, params_for(1, 1)));
}

TEST(IntConv2d, Errors) {
  const Tensor x = Tensor::from<int8_t>({1, 4, 2, 2}, std::vector<int8_t>(16, 1));
  const Tensor w = Tensor::from<int8_t>({2, 2, 1, 1}, std::vector<int8_t>(4, 1));
  IntConv2dParams p = params_for(1, 1);
  p.groups = 3;
  EXPECT_THROW(run_seed(x, w, p), Error);  // 3 does not divide 4
  p.groups = 1;
  EXPECT_THROW(run_seed(x, w, p), Error);  // w must have C/groups = 4 input channels
  p.groups = 2;
  EXPECT_NO_THROW(run_seed(x, w, p));
  p.window.kernel_h = 2;
  EXPECT_THROW(run_seed(x, w, p), Error);  // kernel differs from w
  p.window.kernel_h = 1;
  p.window.ins_h = 1;
  EXPECT_THROW(run_seed(x, w, p), Error);
  p.window.ins_h = 0;
  Tensor bad(DType::s32, {1, 2, 1, 1});
  EXPECT_THROW(seed_conv2d(x, w, bad, p), Error);  // wrong output shape
  Tensor f(DType::f32, {1, 2, 2, 2});
  EXPECT_THROW(seed_conv2d(x, w, f, p), Error);  // wrong output dtype
  EXPECT_THROW(run_seed(to_f32(x), w, p), Error);
}

}  // namespace
}  // namespace test_quant_conv_integer
}  // namespace npukit
