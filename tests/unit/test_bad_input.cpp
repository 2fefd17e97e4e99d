// Bad input at every public entry: each raises npukit::Error naming the
// function, the parameter and the offending value (and what was allowed).
#include "unit/test_util.hpp"

namespace npukit {
namespace test_bad_input {
namespace {

using test::raises;

// ---------------------------------------------------------------- pooling

constexpr const char* kPool = "npukit::pool2d";

Pool2dParams pool(Window2d w, PoolMode m = PoolMode::avg) {
  Pool2dParams p;
  p.mode = m;
  p.window = w;
  return p;
}

// Calls pool2d on a 1x1x4x4 f32 input with an output of the right shape when
// the window is valid (so that the window is the only thing wrong).
void pool_4x4(const Window2d& w) {
  const Tensor x(DType::f32, {1, 1, 4, 4});
  Tensor y(DType::f32, {1, 1, 1, 1});
  pool2d(x, y, pool(w));
}

Window2d with(void (*edit)(Window2d&)) {
  Window2d w = test::window(2, 2);
  edit(w);
  return w;
}

TEST(BadInput, PoolWindowFields) {
  EXPECT_TRUE(
      raises([] { pool_4x4(with([](Window2d& w) { w.kernel_h = 0; })); }, kPool, "kernel_h", "0"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.kernel_w = -1; })); }, kPool,
                     "kernel_w", "-1"));
  EXPECT_TRUE(
      raises([] { pool_4x4(with([](Window2d& w) { w.stride_h = 0; })); }, kPool, "stride_h", "0"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.stride_w = -2; })); }, kPool,
                     "stride_w", "-2"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.dilation_h = 0; })); }, kPool,
                     "dilation_h", "0"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.dilation_w = 0; })); }, kPool,
                     "dilation_w", "0"));
  EXPECT_TRUE(
      raises([] { pool_4x4(with([](Window2d& w) { w.ins_h = -1; })); }, kPool, "ins_h", "-1"));
  EXPECT_TRUE(
      raises([] { pool_4x4(with([](Window2d& w) { w.ins_w = -3; })); }, kPool, "ins_w", "-3"));
  EXPECT_TRUE(
      raises([] { pool_4x4(with([](Window2d& w) { w.pad_top = -1; })); }, kPool, "pad_top", "-1"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.pad_bottom = -1; })); }, kPool,
                     "pad_bottom", "-1"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.pad_left = -1; })); }, kPool,
                     "pad_left", "-1"));
  EXPECT_TRUE(raises([] { pool_4x4(with([](Window2d& w) { w.pad_right = -1; })); }, kPool,
                     "pad_right", "-1"));
}

TEST(BadInput, PoolKernelLargerThanPaddedInput) {
  // k 6 on 4 + pads 1 + 0 = 5.
  EXPECT_TRUE(raises(
      [] {
        pool_4x4(with([](Window2d& w) {
          w.kernel_h = 6;
          w.pad_top = 1;
        }));
      },
      kPool, "kernel_h", "6"));
  // k 3 dilation 2: extent 5 > 4.
  EXPECT_TRUE(raises(
      [] {
        pool_4x4(with([](Window2d& w) {
          w.kernel_w = 3;
          w.dilation_w = 2;
        }));
      },
      kPool, "kernel_w", "extent 5"));
  // ceil_mode does not make a too-large kernel fit.
  EXPECT_TRUE(raises(
      [] {
        pool_4x4(with([](Window2d& w) {
          w.kernel_h = 5;
          w.ceil_mode = true;
        }));
      },
      kPool, "kernel_h", "5"));
}

TEST(BadInput, PoolShapes) {
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {1, 4, 4});
        Tensor y(DType::f32, {1, 1, 1, 1});
        pool2d(x, y, pool(test::window(2, 2)));
      },
      kPool, "x", "[1, 4, 4]"));
  EXPECT_TRUE(raises(
      [] {
        pool2d_output_shape({1, 4, 4}, pool(test::window(2, 2)));
      },
      kPool, "x", "[1, 4, 4]"));
  EXPECT_TRUE(raises(
      [] {
        pool2d_output_shape({0, 1, 4, 4}, pool(test::window(2, 2)));
      },
      kPool, "x.N", "0"));
  EXPECT_TRUE(raises(
      [] {
        pool2d_output_shape({1, 0, 4, 4}, pool(test::window(2, 2)));
      },
      kPool, "x.C", "0"));
  EXPECT_TRUE(raises(
      [] {
        pool2d_output_shape({1, 1, 0, 4}, pool(test::window(2, 2)));
      },
      kPool, "x.H", "0"));
  EXPECT_TRUE(raises(
      [] {
        pool2d_output_shape({1, 1, 4, -2}, pool(test::window(2, 2)));
      },
      kPool, "x.W", "-2"));
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {1, 1, 4, 4});
        Tensor y(DType::f32, {1, 1, 2, 2});  // k2 s1 gives 3x3
        pool2d(x, y, pool(test::window(2, 2)));
      },
      kPool, "y", "[1, 1, 2, 2]"));
}

TEST(BadInput, PoolDtypes) {
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {1, 1, 2, 2});
        Tensor y(DType::s8, {1, 1, 1, 1});
        pool2d(x, y, pool(test::window(2, 2)));
      },
      kPool, "y.dtype", "s8"));
  for (PoolMode m : {PoolMode::avg, PoolMode::sum}) {
    EXPECT_TRUE(raises(
        [m] {
          const Tensor x(DType::s8, {1, 1, 2, 2});
          Tensor y(DType::s8, {1, 1, 1, 1});
          pool2d(x, y, pool(test::window(2, 2), m));
        },
        kPool, "x.dtype", "s8"));
  }
  for (DType t : {DType::s16, DType::s32}) {
    EXPECT_TRUE(raises(
        [t] {
          const Tensor x(t, {1, 1, 2, 2});
          Tensor y(t, {1, 1, 1, 1});
          pool2d(x, y, pool(test::window(2, 2), PoolMode::max));
        },
        kPool, "x.dtype", dtype_name(t)));
  }
}

TEST(BadInput, GlobalPool) {
  const char* fn = "npukit::global_pool2d";
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {1, 1, 2, 2});
        Tensor y(DType::f32, {1, 1, 1, 1});
        global_pool2d(x, y, PoolMode::sum);
      },
      fn, "mode", "sum"));
  EXPECT_TRUE(raises([] { global_pool2d_params({4, 4}, PoolMode::avg); }, fn, "x", "[4, 4]"));
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {1, 1, 2, 2});
        Tensor y(DType::f32, {1, 1, 2, 2});
        global_pool2d(x, y, PoolMode::max);
      },
      kPool, "y", "[1, 1, 2, 2]"));
}

// ---------------------------------------------------------------- convolution

constexpr const char* kConv = "npukit::conv2d";

struct ConvCase {
  Shape x{1, 4, 5, 5}, w{2, 4, 3, 3}, y{1, 2, 3, 3}, bias{2};
  DType xt = DType::f32, wt = DType::f32, yt = DType::f32, bt = DType::f32;
  Conv2dParams p;
  ConvCase() { p.window = test::window(3, 3); }
  void run() const {
    const Tensor tx(xt, x), tw(wt, w), tb(bt, bias);
    Tensor ty(yt, y);
    conv2d(tx, tw, tb, ty, p);
  }
};

template <class Edit>
::testing::AssertionResult conv_raises(Edit edit, const char* parameter, const char* value) {
  ConvCase c;
  edit(c);
  return raises([&] { c.run(); }, kConv, parameter, value);
}

TEST(BadInput, ConvValidCaseRuns) {
  ConvCase c;
  c.p.has_bias = true;
  EXPECT_NO_THROW(c.run());
}

TEST(BadInput, ConvShapesAndGroups) {
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.x = {4, 5, 5}; }, "x", "[4, 5, 5]"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.w = {2, 4, 3}; }, "w", "[2, 4, 3]"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.x = {0, 4, 5, 5}; }, "x.N", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.x = {1, 0, 5, 5}; }, "x.C", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.x = {1, 4, 0, 5}; }, "x.H", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.w = {0, 4, 3, 3}; }, "w.OC", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.w = {2, 3, 3, 3}; }, "w", "[2, 3, 3, 3]"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.groups = 0; }, "groups", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.groups = -2; }, "groups", "-2"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.groups = 8; }, "groups", "8"));  // > C
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.groups = 3; }, "groups", "3"));  // 4 % 3
  // groups 4 divides C = 4 but not OC = 2.
  EXPECT_TRUE(conv_raises(
      [](ConvCase& c) {
        c.p.groups = 4;
        c.w = {2, 1, 3, 3};
      },
      "groups", "4"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.kernel_h = 2; }, "kernel_h", "2"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.kernel_w = 4; }, "kernel_w", "4"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.y = {1, 2, 3, 4}; }, "y", "[1, 2, 3, 4]"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.y = {1, 3, 3, 3}; }, "y", "[1, 3, 3, 3]"));
}

TEST(BadInput, ConvWindow) {
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.stride_h = 0; }, "stride_h", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.dilation_w = 0; }, "dilation_w", "0"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.pad_left = -1; }, "pad_left", "-1"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.pad_bottom = -4; }, "pad_bottom", "-4"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.ins_w = -1; }, "ins_w", "-1"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.ceil_mode = true; }, "ceil_mode", "true"));
  // 3x3 kernel, dilation 3: extent 7 > 5.
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.p.window.dilation_h = 3; }, "kernel_h", "extent 7"));
  // 7x7 kernel on 5x5.
  EXPECT_TRUE(conv_raises(
      [](ConvCase& c) {
        c.w = {2, 4, 7, 7};
        c.p.window = test::window(7, 7);
      },
      "kernel_h", "7"));
}

TEST(BadInput, ConvDtypesAndBias) {
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.xt = DType::s8; }, "x.dtype", "s8"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.wt = DType::u8; }, "w.dtype", "u8"));
  EXPECT_TRUE(conv_raises([](ConvCase& c) { c.yt = DType::s32; }, "y.dtype", "s32"));
  EXPECT_TRUE(conv_raises(
      [](ConvCase& c) {
        c.p.has_bias = true;
        c.bias = {3};
      },
      "bias", "[3]"));
  EXPECT_TRUE(conv_raises(
      [](ConvCase& c) {
        c.p.has_bias = true;
        c.bias = {1, 2, 1, 2};
      },
      "bias", "[1, 2, 1, 2]"));
  EXPECT_TRUE(conv_raises(
      [](ConvCase& c) {
        c.p.has_bias = true;
        c.bt = DType::s32;
      },
      "bias.dtype", "s32"));
  // has_bias with no bias tensor at all.
  EXPECT_TRUE(raises(
      [] {
        ConvCase c;
        c.p.has_bias = true;
        const Tensor x(DType::f32, c.x), w(DType::f32, c.w);
        Tensor y(DType::f32, c.y);
        conv2d(x, w, TensorView(), y, c.p);
      },
      kConv, "bias", "[]"));
}

TEST(BadInput, Depthwise) {
  const char* fn = "npukit::depthwise2d";
  auto run = [](Shape xs, Shape ws, int64_t mult, Window2d win, bool has_bias = false,
                Shape bs = {2}) {
    Depthwise2dParams p;
    p.window = win;
    p.multiplier = mult;
    p.has_bias = has_bias;
    const Tensor x(DType::f32, xs), w(DType::f32, ws), b(DType::f32, bs);
    Tensor y(DType::f32, depthwise2d_output_shape(xs, ws, p));
    depthwise2d(x, w, b, y, p);
  };
  EXPECT_NO_THROW(run({1, 2, 4, 4}, {2, 1, 3, 3}, 1, test::window(3, 3), true));
  EXPECT_TRUE(raises(
      [&] {
        run({1, 2, 4, 4}, {2, 1, 3, 3}, 0, test::window(3, 3));
      },
      fn, "multiplier", "0"));
  EXPECT_TRUE(raises(
      [&] {
        run({1, 2, 4, 4}, {3, 1, 3, 3}, 1, test::window(3, 3));
      },
      fn, "w", "[3, 1, 3, 3]"));
  EXPECT_TRUE(raises(
      [&] {
        run({1, 2, 4, 4}, {4, 2, 3, 3}, 2, test::window(3, 3));
      },
      fn, "w", "[4, 2, 3, 3]"));
  EXPECT_TRUE(raises(
      [&] {
        run({2, 4, 4}, {2, 1, 3, 3}, 1, test::window(3, 3));
      },
      fn, "x", "[2, 4, 4]"));
  // Window errors name depthwise2d, not the convolution it runs on.
  EXPECT_TRUE(raises(
      [&] {
        run({1, 2, 4, 4}, {2, 1, 3, 3}, 1, test::window(3, 3, 0, 1));
      },
      fn, "stride_h", "0"));
  EXPECT_TRUE(raises(
      [&] {
        run({1, 2, 4, 4}, {2, 1, 5, 5}, 1, test::window(5, 5));
      },
      fn, "kernel_h", "5"));
  EXPECT_TRUE(raises(
      [&] {
        run({1, 2, 4, 4}, {2, 1, 3, 3}, 1, test::window(3, 3), true, {3});
      },
      fn, "bias", "[3]"));
  EXPECT_TRUE(raises(
      [] {
        Depthwise2dParams p;
        p.window = test::window(1, 1);
        const Tensor x(DType::s8, {1, 1, 1, 1}), w(DType::f32, {1, 1, 1, 1});
        Tensor y(DType::f32, {1, 1, 1, 1});
        depthwise2d(x, w, Tensor(), y, p);
      },
      fn, "x.dtype", "s8"));
}

// ---------------------------------------------------------------- matmul

constexpr const char* kMm = "npukit::matmul";

::testing::AssertionResult mm_raises(Shape a, Shape b, Shape y, const char* parameter,
                                     const char* value, DType at = DType::f32,
                                     DType bt = DType::f32, DType yt = DType::f32, Shape bias = {},
                                     DType biast = DType::f32) {
  return raises(
      [&] {
        const Tensor ta(at, a), tb(bt, b), tbias(biast, bias);
        Tensor ty(yt, y);
        matmul(ta, tb, tbias, ty, {!bias.empty(), false});
      },
      kMm, parameter, value);
}

TEST(BadInput, Matmul) {
  EXPECT_FALSE(mm_raises({2, 3}, {3, 4}, {2, 4}, "none", ""));  // a valid call raises nothing
  EXPECT_TRUE(mm_raises({1, 2, 3}, {3, 4}, {2, 4}, "a", "[1, 2, 3]"));
  EXPECT_TRUE(mm_raises({2, 3}, {3}, {2, 4}, "b", "[3]"));
  EXPECT_TRUE(mm_raises({0, 3}, {3, 4}, {0, 4}, "a.rows", "0"));
  EXPECT_TRUE(mm_raises({2, 0}, {0, 4}, {2, 4}, "a.cols", "0"));
  EXPECT_TRUE(mm_raises({2, 3}, {3, 0}, {2, 0}, "b.cols", "0"));
  EXPECT_TRUE(mm_raises({2, 3}, {4, 2}, {2, 2}, "b", "[4, 2]"));
  EXPECT_TRUE(mm_raises({2, 3}, {3, 4}, {4, 2}, "y", "[4, 2]"));
  EXPECT_TRUE(mm_raises({2, 3}, {3, 4}, {2, 4}, "a.dtype", "s8", DType::s8));
  EXPECT_TRUE(mm_raises({2, 3}, {3, 4}, {2, 4}, "b.dtype", "u8", DType::f32, DType::u8));
  EXPECT_TRUE(
      mm_raises({2, 3}, {3, 4}, {2, 4}, "y.dtype", "s16", DType::f32, DType::f32, DType::s16));
  EXPECT_TRUE(
      mm_raises({2, 3}, {3, 4}, {2, 4}, "bias", "[3]", DType::f32, DType::f32, DType::f32, {3}));
  EXPECT_TRUE(mm_raises({2, 3}, {3, 4}, {2, 4}, "bias", "[2, 4]", DType::f32, DType::f32,
                        DType::f32, {2, 4}));
  EXPECT_TRUE(mm_raises({2, 3}, {3, 4}, {2, 4}, "bias.dtype", "s32", DType::f32, DType::f32,
                        DType::f32, {4}, DType::s32));
}

// ---------------------------------------------------------------- gemm

constexpr const char* kGemm = "npukit::gemm";

// gemm on f32 tensors of these shapes (c absent when empty).
::testing::AssertionResult gemm_raises(Shape a, Shape b, Shape c, Shape y, const char* parameter,
                                       const char* value, GemmParams p = {}) {
  return raises(
      [&] {
        const Tensor ta(DType::f32, a), tb(DType::f32, b), tc(DType::f32, c);
        Tensor ty(DType::f32, y);
        gemm(ta, tb, c.empty() ? TensorView() : tc.view(), ty, p);
      },
      kGemm, parameter, value);
}

// The checks build their messages only on failure (they run on every call):
// each still names the parameter and the value.
TEST(BadInput, Gemm) {
  EXPECT_FALSE(gemm_raises({2, 3}, {3, 4}, {4}, {2, 4}, "none", ""));  // a valid call
  EXPECT_TRUE(gemm_raises({2, 3, 1}, {3, 4}, {}, {2, 4}, "a", "[2, 3, 1]"));
  EXPECT_TRUE(gemm_raises({2, 3}, {3}, {}, {2, 4}, "b", "[3]"));
  EXPECT_TRUE(gemm_raises({2, 3}, {4, 4}, {}, {2, 4}, "b", "[4, 4]"));
  EXPECT_TRUE(gemm_raises({2, 3}, {3, 4}, {1, 1, 4}, {2, 4}, "c", "[1, 1, 4]"));
  // c must broadcast to y's [2, 4] (broadcast_view's check).
  EXPECT_TRUE(gemm_raises({2, 3}, {3, 4}, {3}, {2, 4}, "c", "[3]"));
  EXPECT_TRUE(gemm_raises({2, 3}, {3, 4}, {2, 3}, {2, 4}, "c", "[2, 3]"));
  EXPECT_TRUE(gemm_raises({2, 3}, {3, 4}, {}, {2, 5}, "y", "[2, 5]"));
  GemmParams mlas;
  mlas.alpha = 2.0f;
  mlas.mlas_k_block = 256;
  EXPECT_TRUE(gemm_raises({2, 3}, {3, 4}, {}, {2, 4}, "alpha", "2", mlas));
}

// ---------------------------------------------------------------- element-wise

TEST(BadInput, Relu) {
  const char* fn = "npukit::relu";
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::s8, {4});
        Tensor y(DType::s8, {4});
        relu(x, y);
      },
      fn, "x.dtype", "s8"));
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {4});
        Tensor y(DType::f32, {5});
        relu(x, y);
      },
      fn, "y", "[5]"));
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {4});
        Tensor y(DType::s32, {4});
        relu(x, y);
      },
      fn, "y.dtype", "s32"));
  EXPECT_TRUE(raises(
      [] {
        const Tensor x(DType::f32, {2, 0});
        Tensor y(DType::f32, {2, 0});
        relu(x, y);
      },
      fn, "x", "[2, 0]"));
}

TEST(BadInput, ChannelOps) {
  const Tensor x(DType::f32, {1, 2, 2, 2});
  Tensor y(DType::f32, {1, 2, 2, 2});
  const Tensor c2(DType::f32, {2}), c3(DType::f32, {3}), c2_4d(DType::f32, {1, 2, 1, 1});
  const Tensor c2_bad(DType::f32, {1, 2, 1, 2}), c2_int(DType::s32, {2});
  EXPECT_NO_THROW(bias(x, c2_4d, y));
  EXPECT_TRUE(raises([&] { bias(x, c3, y); }, "npukit::bias", "b", "[3]"));
  EXPECT_TRUE(raises([&] { bias(x, c2_bad, y); }, "npukit::bias", "b", "[1, 2, 1, 2]"));
  EXPECT_TRUE(raises([&] { bias(x, c2_int, y); }, "npukit::bias", "b.dtype", "s32"));
  EXPECT_TRUE(raises(
      [&] {
        const Tensor x3(DType::f32, {2, 2, 2});
        Tensor y3(DType::f32, {2, 2, 2});
        bias(x3, c2, y3);
      },
      "npukit::bias", "x", "[2, 2, 2]"));
  EXPECT_TRUE(raises([&] { scale(x, c3, y); }, "npukit::scale", "s", "[3]"));
  EXPECT_TRUE(raises([&] { scale(x, c2_int, y); }, "npukit::scale", "s.dtype", "s32"));
  EXPECT_TRUE(raises(
      [&] {
        Tensor y2(DType::f32, {1, 2, 2, 1});
        scale(x, c2, y2);
      },
      "npukit::scale", "y", "[1, 2, 2, 1]"));
  EXPECT_TRUE(raises([&] { scale_bias(x, c3, c2, y); }, "npukit::scale_bias", "s", "[3]"));
  EXPECT_TRUE(raises([&] { scale_bias(x, c2, c3, y); }, "npukit::scale_bias", "b", "[3]"));
  EXPECT_TRUE(raises(
      [&] {
        const Tensor xi(DType::u8, {1, 2, 2, 2});
        scale_bias(xi, c2, c2, y);
      },
      "npukit::scale_bias", "x.dtype", "u8"));
}

// ---------------------------------------------------------------- tensors and names

TEST(BadInput, TensorViews) {
  float buf[4] = {};
  const char* fn = "npukit::TensorView";
  EXPECT_TRUE(raises([&] { TensorView(buf, DType::f32, {2, 2}, {2}); }, fn, "strides", "[2]"));
  EXPECT_TRUE(raises(
      [&] {
        TensorView(buf, DType::f32, {1, 1, 1, 1, 1, 1, 1, 1, 4}, {4, 4, 4, 4, 4, 4, 4, 4, 1});
      },
      fn, "shape", "[1, 1, 1, 1, 1, 1, 1, 1, 4]"));
  EXPECT_TRUE(raises([&] { TensorView(buf, DType::f32, {2, -2}, {2, 1}); }, fn, "shape", "-2"));
  EXPECT_TRUE(raises([&] { TensorView(nullptr, DType::f32, {2}, {1}); }, fn, "data", "null"));
  EXPECT_TRUE(raises([&] { TensorView::contiguous(buf, DType::f32, {4}).expect_rank(4, "f", "x"); },
                     "f", "x", "[4]"));
  EXPECT_TRUE(raises(
      [] {
        contiguous_strides({2, 2}, Layout::nhwc);
      },
      "npukit::contiguous_strides", "shape", "[2, 2]"));
}

TEST(BadInput, Names) {
  EXPECT_TRUE(
      raises([] { profile_from_name("torch"); }, "npukit::profile_from_name", "name", "'torch'"));
  EXPECT_TRUE(
      raises([] { dtype_from_name("float16"); }, "npukit::dtype_from_name", "name", "'float16'"));
}

}  // namespace
}  // namespace test_bad_input
}  // namespace npukit
