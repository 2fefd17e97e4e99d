// pool2d's boundary checks and the semantics fixed by issue #12 §3: MLAS's
// loop rejects a divisor it does not have, the dtype error points to the
// quantized average's real home, the sequential f32 sum honours
// flush_denormals on every partial sum (every kernel level, every thread
// count), and fp32_accumulation_name has its own home.
#include <bit>

#include "unit/test_util.hpp"

namespace npukit {
namespace test_pool2d_checks {
namespace {

using test::raises;

struct SettingsGuard {
  ~SettingsGuard() {
    set_num_threads(0);
    set_max_isa(host_isa());
    set_impl(Impl::fast);
  }
};

TEST(Pool2dChecks, MlasLoopRejectsTheClippedWindowDivisor) {
  Pool2dParams p;
  p.mode = PoolMode::avg;
  p.window = test::window(3, 3, 2, 2);
  test::set_pads(p.window, 1, 1, 1, 1);
  p.loop = PoolLoop::mlas;
  p.divisor = AvgDivisor::clipped_window;
  const Tensor x = test::random_f32({1, 3, 9, 9}, 1);
  Tensor y(DType::f32, {1, 3, 5, 5});
  EXPECT_TRUE(raises([&] { pool2d(x, y, p); }, "npukit::pool2d", "divisor", "clipped_window"));
  // Max pooling has no divisor: accepted whatever the field says.
  p.mode = PoolMode::max;
  EXPECT_NO_THROW(pool2d(x, y, p));
  // The divisors MLAS has.
  p.mode = PoolMode::avg;
  for (AvgDivisor d : {AvgDivisor::kernel_area, AvgDivisor::valid_count}) {
    p.divisor = d;
    EXPECT_NO_THROW(pool2d(x, y, p)) << avg_divisor_name(d);
  }
}

TEST(Pool2dChecks, OnnxruntimeProfileNeverPairsMlasWithClippedWindow) {
  // Every onnxruntime average the profile can produce runs (opset 19 keeps
  // clipped_window on ONNX Runtime's own loop or its NCHWc kernel).
  for (bool include_pad : {false, true})
    for (bool ceil : {false, true})
      for (int64_t opset : {11, 18, 19, 22})
        for (int64_t channels : {3, 16}) {
          Pool2dParams p;
          p.mode = PoolMode::avg;
          p.window = test::window(3, 3, 2, 2);
          test::set_pads(p.window, 1, 1, 1, 1);
          p.window.ceil_mode = ceil;
          p.count_include_pad = include_pad;
          p.opset = opset;
          apply_profile(p, Profile::onnxruntime);
          const Tensor x = test::random_f32({1, channels, 10, 10}, 2);
          EXPECT_NO_THROW(test::run_pool(x, p))
              << "include_pad " << include_pad << " ceil " << ceil << " opset " << opset;
        }
}

TEST(Pool2dChecks, QuantizedAverageErrorNamesItsEntryPoint) {
  Pool2dParams p;
  p.mode = PoolMode::avg;
  p.window = test::window(2, 2);
  const Tensor x(DType::u8, {1, 1, 4, 4});
  Tensor y(DType::u8, {1, 1, 3, 3});
  EXPECT_TRUE(raises([&] { pool2d(x, y, p); }, "npukit::pool2d", "x.dtype", "u8"));
  try {
    pool2d(x, y, p);
  } catch (const Error& e) {
    const std::string allowed = e.allowed();
    EXPECT_NE(allowed.find("qlinear_average_pool"), std::string::npos) << allowed;
    EXPECT_NE(allowed.find("npukit/ops/quantized.hpp"), std::string::npos) << allowed;
  }
}

TEST(Pool2dChecks, Fp32AccumulationNames) {
  EXPECT_STREQ(fp32_accumulation_name(Fp32Accumulation::sequential), "sequential");
  EXPECT_STREQ(fp32_accumulation_name(Fp32Accumulation::interleaved), "interleaved");
  EXPECT_STREQ(fp32_accumulation_name(static_cast<Fp32Accumulation>(9)), "invalid");
}

// 2x2 windows, stride 2, taps r0c0, r0c1, r1c0, r1c1 = 2^-125, -1.5*2^-126,
// 2^-126, 0: the second partial sum is the denormal 2^-127. Flushed (FTZ on
// every partial sum) the window sums to 2^-126; unflushed to 1.5*2^-126.
// 64 columns put the interior on the fast row kernels (column lanes).
TEST(Pool2dChecks, SequentialSumFlushesEveryPartialSum) {
  SettingsGuard guard;
  const float a = 0x1p-125f, b = -0x1.8p-126f, c = 0x1p-126f;
  const int64_t H = 4, W = 64;
  for (int64_t channels : {1, 16}) {  // 16: also the packed and channel lanes
    for (Layout layout : {Layout::nchw, Layout::nhwc}) {
      Tensor dense(DType::f32, {1, channels, H, W});
      float* d = dense.data<float>();
      for (int64_t i = 0; i < dense.numel(); ++i) {
        const int64_t h = i / W % H, w = i % W;
        d[i] = h % 2 == 0 ? (w % 2 == 0 ? a : b) : (w % 2 == 0 ? c : 0.0f);
      }
      Tensor x(DType::f32, dense.shape(), layout);
      copy(dense, x);
      for (bool flush : {false, true}) {
        Pool2dParams p;
        p.mode = PoolMode::sum;
        p.window = test::window(2, 2, 2, 2);
        p.flush_denormals = flush;
        const float want = flush ? c : 0x1.8p-126f;
        for (int level = static_cast<int>(host_isa()); level >= -1; --level) {
          set_impl(level < 0 ? Impl::reference : Impl::fast);
          set_max_isa(level < 0 ? host_isa() : static_cast<Isa>(level));
          for (int threads : {1, 2, 3}) {
            set_num_threads(threads);
            Tensor y(DType::f32, pool2d_output_shape(x.shape(), p), layout);
            pool2d(x, y, p);
            const std::vector<float> got = y.to_vector<float>();
            int64_t bad = 0;
            for (float v : got) bad += std::bit_cast<uint32_t>(v) != std::bit_cast<uint32_t>(want);
            EXPECT_EQ(bad, 0) << "channels " << channels << " " << layout_name(layout) << " flush "
                              << flush << " level "
                              << (level < 0 ? "reference" : isa_name(static_cast<Isa>(level)))
                              << " threads " << threads;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace test_pool2d_checks
}  // namespace npukit

namespace npukit {
namespace test_pool2d_checks {
namespace {

// When both addends are NaN x86 returns the first (the running sum): inf,
// -inf, then a positive quiet NaN leave the default NaN 0xffc00000 from
// inf + -inf. A kernel whose compiler swapped the add's operands returns
// 0x7fc00000 instead (seen with GCC on the packed-channel lanes).
TEST(Pool2dChecks, SumKeepsTheRunningNaNWhenBothAddendsAreNaN) {
  SettingsGuard guard;
  for (int64_t channels : {1, 5, 16, 32, 48, 64, 70}) {
    for (Layout layout : {Layout::nchw, Layout::nhwc}) {
      for (bool ort : {false, true}) {
        Tensor dense(DType::f32, {2, channels, 4, 8});
        float* d = dense.data<float>();
        for (int64_t i = 0; i < dense.numel(); ++i) {
          const int64_t e = i % 32;
          d[i] = e == 0   ? test::kInf
                 : e == 1 ? -test::kInf
                 : e == 2 ? std::bit_cast<float>(0x7fc00000u)
                          : 1.0f;
        }
        Tensor x(DType::f32, dense.shape(), layout);
        copy(dense, x);
        Pool2dParams p = global_pool2d_params(x.shape(), PoolMode::avg);
        if (ort) apply_global_profile(p, Profile::onnxruntime);
        // MLAS's whole-image order spreads the three over its four lanes and
        // combines them differently; the reference says what it gives.
        const PoolLoop loop = effective_pool_loop(p, channels);
        uint32_t want = 0xffc00000u;
        if (loop == PoolLoop::mlas) {
          set_impl(Impl::reference);
          const std::vector<float> r = test::run_pool(x, p).to_vector<float>();
          want = std::bit_cast<uint32_t>(r[0]);
        }
        for (int level = static_cast<int>(host_isa()); level >= -1; --level) {
          set_impl(level < 0 ? Impl::reference : Impl::fast);
          set_max_isa(level < 0 ? host_isa() : static_cast<Isa>(level));
          for (int threads : {1, 2}) {
            set_num_threads(threads);
            Tensor y(DType::f32, pool2d_output_shape(x.shape(), p), layout);
            pool2d(x, y, p);
            int64_t bad = 0;
            for (float v : y.to_vector<float>()) bad += std::bit_cast<uint32_t>(v) != want;
            EXPECT_EQ(bad, 0) << "channels " << channels << " " << layout_name(layout) << " loop "
                              << pool_loop_name(effective_pool_loop(p, channels)) << " level "
                              << (level < 0 ? "reference" : isa_name(static_cast<Isa>(level)))
                              << " threads " << threads;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace test_pool2d_checks
}  // namespace npukit
