// Limits against unbounded work and wrapped arithmetic (issue #11): the memory
// budget that every Tensor allocation checks, and cvm_requantize's 128-bit
// product (saturates for any int64 input, unchanged inside CVM's contract).
#include <gtest/gtest.h>

#include <random>

#include "npukit/npukit.hpp"
#include "npukit/npy.hpp"
#include "npukit/onnx/model.hpp"
#include "npukit/read_file.hpp"
#include "unit/test_util.hpp"

namespace npukit {
namespace test_bad_input_limits {
namespace {

struct BudgetGuard {
  explicit BudgetGuard(uint64_t b) { set_memory_budget(b); }
  ~BudgetGuard() { set_memory_budget(0); }
};

TEST(MemoryBudget, TensorBeyondBudgetIsAnErrorNamingShapeAndSize) {
  BudgetGuard guard(1 << 20);
  EXPECT_EQ(memory_budget(), 1u << 20);
  try {
    Tensor t(DType::f32, {1, 1, 100000, 100000});
    FAIL() << "allocated 40 GB under a 1 MiB budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.function(), "npukit::Tensor");
    EXPECT_EQ(e.parameter(), "shape");
    EXPECT_NE(e.value().find("[1, 1, 100000, 100000]"), std::string::npos) << e.what();
    EXPECT_NE(e.value().find("40000000000 bytes"), std::string::npos) << e.what();
    EXPECT_NE(e.allowed().find("NPUKIT_MEMORY_LIMIT"), std::string::npos) << e.what();
  }
  // A byte count that would wrap 64 bits.
  EXPECT_THROW(Tensor(DType::f32, {int64_t{1} << 62, 2}), Error);
}

TEST(MemoryBudget, LiveTensorsCountAndAreReleased) {
  const uint64_t before = memory_in_use();
  BudgetGuard guard(before + 3 * 400000);
  {
    Tensor a(DType::f32, {100000});
    Tensor b(DType::f32, {100000});
    EXPECT_EQ(memory_in_use(), before + 800000);
    EXPECT_THROW(Tensor(DType::f32, {200000}), Error);  // 800 KB more does not fit
    Tensor c = std::move(a);                            // moves keep one reservation
    EXPECT_EQ(memory_in_use(), before + 800000);
    Tensor d = b;  // a copy reserves its own
    EXPECT_EQ(memory_in_use(), before + 1200000);
  }
  EXPECT_EQ(memory_in_use(), before);
  Tensor e(DType::f32, {200000});  // fits again once the others are gone
  EXPECT_EQ(e.numel(), 200000);
}

TEST(MemoryBudget, CheckAllocationNamesWhat) {
  BudgetGuard guard(memory_in_use() + 1000);  // static tensors elsewhere hold some
  check_allocation("npukit::test", "input", "tensor 'x'", 250, 4);
  EXPECT_TRUE(test::raises([] { check_allocation("npukit::test", "input", "tensor 'x'", 251, 4); },
                           "npukit::test", "input", "tensor 'x': 1004 bytes"));
  EXPECT_TRUE(test::raises(
      [] { check_allocation("npukit::test", "input", "tensor 'y'", uint64_t{1} << 63, 4); },
      "npukit::test", "input", "more than 2^64 bytes"));
}

// The composition cvm_requantize used before the 128-bit product (valid while
// frac * x fits int64, which CVM's |x| < 2^31, frac < 2^31 guarantees).
int64_t cvm_requantize_composed(int64_t x, CvmFloat f, int precision) {
  const int64_t product = f.frac * x;
  if (f.exp < 0) return cvm_right_shift(product, -f.exp, precision);
  if (f.exp > 0) return cvm_left_shift(product, f.exp, precision);
  return cvm_clip(product, precision);
}

TEST(CvmRequantize, SameAsCompositionInsideContract) {
  const uint32_t seed = 20261126;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> x32(-(int64_t{1} << 31) + 1, (int64_t{1} << 31) - 1);
  std::uniform_int_distribution<int64_t> frac(0, (int64_t{1} << 31) - 1);
  std::uniform_int_distribution<int> exp(-32, 32), prec(1, 32), small(-300, 300);
  for (int i = 0; i < 200000; ++i) {
    const int64_t x = i % 3 == 0 ? small(rng) : x32(rng);
    const CvmFloat f{i % 5 == 0 ? small(rng) : frac(rng), exp(rng)};
    const int p = prec(rng);
    ASSERT_EQ(cvm_requantize(x, f, p), cvm_requantize_composed(x, f, p))
        << "seed " << seed << " case " << i << ": x=" << x << " frac=" << f.frac << " exp=" << f.exp
        << " precision=" << p;
  }
}

TEST(CvmRequantize, SaturatesForAnyInt64) {
  constexpr int64_t big = int64_t{1} << 62;
  EXPECT_EQ(cvm_requantize(int64_t{1} << 40, CvmFloat{big, 0}, 8), 127);
  EXPECT_EQ(cvm_requantize(-(int64_t{1} << 40), CvmFloat{big, 0}, 8), -127);
  EXPECT_EQ(cvm_requantize(INT64_MAX, CvmFloat{INT64_MAX, 32}, 32), INT32_MAX);
  EXPECT_EQ(cvm_requantize(INT64_MIN, CvmFloat{INT64_MAX, -32}, 32), -INT32_MAX);
  EXPECT_EQ(cvm_requantize(INT64_MIN, CvmFloat{INT64_MIN, -1}, 16), 32767);
  // 2^62 * 2^40 / 2^32 = 2^70: still beyond every bound.
  EXPECT_EQ(cvm_requantize(int64_t{1} << 40, CvmFloat{big, -32}, 32), INT32_MAX);
  // Shift range errors are unchanged.
  EXPECT_TRUE(test::raises(
      [] {
        cvm_requantize(1, CvmFloat{1, -33}, 8);
      },
      "npukit::cvm_right_shift", "shift", "33"));
  EXPECT_TRUE(test::raises(
      [] {
        cvm_requantize(1, CvmFloat{1, 33}, 8);
      },
      "npukit::cvm_left_shift", "shift", "33"));
}

}  // namespace
}  // namespace test_bad_input_limits
}  // namespace npukit

namespace npukit {
namespace test_bad_input_limits {
namespace {

TEST(ReadFileBounded, DirectoriesDevicesAndMissingFilesAreErrors) {
  EXPECT_TRUE(test::raises([] { read_file_bounded("f", "path", "/tmp", 1 << 20, "a file"); }, "f",
                           "path", "(a directory)"));
  EXPECT_TRUE(test::raises([] { read_file_bounded("f", "path", "/dev/zero", 1 << 20, "a file"); },
                           "f", "path", "(more than 1048576 bytes)"));
  EXPECT_TRUE(
      test::raises([] { read_file_bounded("f", "path", "/nonexistent/x.npy", 1 << 20, "a file"); },
                   "f", "path", "No such file"));
  EXPECT_TRUE(test::raises(
      [] { read_file_bounded("f", "path", std::string("a\0b", 3), 1 << 20, "a file"); }, "f",
      "path", "'a\\x00b'"));
  // The real readers use it.
  EXPECT_TRUE(test::raises([] { read_npy("/tmp"); }, "npukit::read_npy", "path", "(a directory)"));
  EXPECT_TRUE(test::raises([] { onnx::Model::load("/dev/zero"); }, "npukit::onnx::Model::load",
                           "path", "more than"));
}

TEST(ModelInfer, InputShapesAreChecked) {
  onnx::Model m = onnx::Model::load(NPUKIT_SOURCE_DIR "/models/fashion_mnist_fp32.onnx");
  EXPECT_TRUE(
      test::raises([&] { m.infer({}); }, "npukit::onnx::Model::infer", "input_shapes", "0 shapes"));
  EXPECT_TRUE(test::raises(
      [&] {
        m.infer({{2, 1, 28, 27}});
      },
      "npukit::onnx::Model::infer", "input image", "shape [2, 1, 28, 27]"));
  EXPECT_TRUE(test::raises(
      [&] {
        m.infer({{0, 1, 28, 28}});
      },
      "npukit::onnx::Model::infer", "input image", "shape [0, 1, 28, 28]"));
  // A valid binding plans without running; the next run plans again.
  const auto nodes = m.infer({{5, 1, 28, 28}});
  EXPECT_EQ(nodes.back().output_shapes.at(0), (Shape{5, 10}));
  Tensor x(DType::f32, {3, 1, 28, 28});
  EXPECT_EQ(m.run({x.view()}).at(0).shape(), (Shape{3, 10}));
}

}  // namespace
}  // namespace test_bad_input_limits
}  // namespace npukit

namespace npukit {
namespace test_bad_input_limits {
namespace {

TEST(PoolWorkCap, HugeWindowsAreRefusedBeforeAnyWork) {
  Pool2dParams p;
  p.mode = PoolMode::avg;
  p.window = test::window(20000, 20000);
  // 20000 x 20000 taps per window.
  EXPECT_TRUE(test::raises(
      [&] {
        pool2d_output_shape({1, 1, 20000, 20000}, p);
      },
      "npukit::pool2d", "kernel_shape", "20000 x 20000"));
  // A small kernel over an output padded to 2^20 rows: the tap table would be huge.
  p.window = test::window(128, 1);
  p.window.pad_top = p.window.pad_bottom = 1 << 20;
  EXPECT_TRUE(test::raises(
      [&] {
        pool2d_output_shape({1, 1, 1, 1}, p);
      },
      "npukit::pool2d", "kernel_h"));
  // A global window of 8192 x 8192 is still allowed.
  p.window = test::window(8192, 8192);
  EXPECT_EQ(pool2d_output_shape({1, 1, 8192, 8192}, p), (Shape{1, 1, 1, 1}));
}

}  // namespace
}  // namespace test_bad_input_limits
}  // namespace npukit

namespace npukit {
namespace test_bad_input_limits {
namespace {

// Found by the npy fuzzer: a shape product that overflows int64.
TEST(NpyHeader, ShapeProductOverflowIsAnError) {
  const std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1333333333332, 5, 2233333322, 2), }";
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size());
  file += '\0';
  file += header;
  EXPECT_TRUE(test::raises([&] { parse_npy(file.data(), file.size()); }, "npukit::read_npy", "file",
                           "shape (1333333333332"));
}

// Found by the npy fuzzer: zero elements, but strides that overflow.
TEST(NpyHeader, StridesOverflowWithAZeroDimensionIsAnError) {
  EXPECT_TRUE(test::raises(
      [] {
        Tensor(DType::f32, {0, int64_t{1} << 40, int64_t{1} << 40});
      },
      "npukit::contiguous_strides", "shape", "[0, 1099511627776"));
  EXPECT_EQ(Tensor(DType::f32, {0, 1 << 20, 1 << 20}).numel(), 0);
}

}  // namespace
}  // namespace test_bad_input_limits
}  // namespace npukit
