// The pooling faces' allocation-free call validation (core/window_output.hpp)
// and the problem structs' borrowed views (ops/borrowed_view.hpp). The public
// pool2d and qlinear_average_pool used to check y against the Shape vector of
// pool2d_output_shape / qlinear_average_pool_output_shape: on random windows
// and output shapes, some valid and many not, each must still throw exactly
// the message that path threw (function, parameter, value, allowed range),
// and run when it passed.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "npukit/error.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/tensor.hpp"
#include "ops/borrowed_view.hpp"

namespace npukit {
namespace test_pool_call_validation {
namespace {

// The message `f` throws, or nothing.
template <class F>
std::optional<std::string> thrown(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

// A window with each field usually valid, sometimes out of its range.
Window2d random_window(std::mt19937& rng, bool allow_bad) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto bad = [&] { return allow_bad && pick(0, 11) == 0; };
  Window2d w;
  w.kernel_h = bad() ? pick(-2, 0) : pick(1, 4);
  w.kernel_w = bad() ? pick(-2, 0) : pick(1, 4);
  w.stride_h = bad() ? pick(-1, 0) : pick(1, 3);
  w.stride_w = bad() ? pick(-1, 0) : pick(1, 3);
  // Valid pads below the kernel: every window keeps an input tap (a window of
  // padding alone is a valid call whose average some profiles refuse to round).
  const int64_t pad_h = std::clamp<int64_t>(w.kernel_h - 1, 0, 2);
  const int64_t pad_w = std::clamp<int64_t>(w.kernel_w - 1, 0, 2);
  w.pad_top = bad() ? pick(-3, -1) : pick(0, pad_h);
  w.pad_bottom = bad() ? pick(-3, -1) : pick(0, pad_h);
  w.pad_left = bad() ? pick(-3, -1) : pick(0, pad_w);
  w.pad_right = bad() ? pick(-3, -1) : pick(0, pad_w);
  w.ceil_mode = pick(0, 1) == 1;
  w.truncated_count = allow_bad && pick(0, 7) == 0;
  return w;
}

// The output shape the window gives, or (when that throws, or one time in
// four) a shape that differs in one dim or in rank.
Shape random_y_shape(std::mt19937& rng, const Shape& x, const std::optional<Shape>& want) {
  Shape y = want ? *want : Shape{x[0], x[1], 1, 1};
  const int change = std::uniform_int_distribution<int>(0, 7)(rng);
  if (change < 4) y[static_cast<size_t>(change)] += change % 2 ? 1 : -1;
  if (change == 4) y.pop_back();
  for (int64_t& d : y) d = std::max<int64_t>(d, 1);
  return y;
}

TEST(PoolCallValidation, Pool2dThrowsTheOutputShapeMessagesAndRunsTheRest) {
  constexpr unsigned kSeed = 20261313;
  std::mt19937 rng(kSeed);
  const Profile profiles[] = {Profile::pytorch, Profile::onnxruntime, Profile::bm1684};
  int thrown_cases = 0, run_cases = 0;
  for (int i = 0; i < 1500; ++i) {
    const Shape xs = {std::uniform_int_distribution<int64_t>(1, 2)(rng),
                      std::uniform_int_distribution<int64_t>(1, 17)(rng),
                      std::uniform_int_distribution<int64_t>(1, 6)(rng),
                      std::uniform_int_distribution<int64_t>(1, 6)(rng)};
    Pool2dParams p;
    p.mode = i % 3 == 0 ? PoolMode::max : PoolMode::avg;
    p.count_include_pad = true;
    apply_profile(p, profiles[i % 3]);
    p.window = random_window(rng, true);  // after the profile: its pad check is not tested here
    if (i % 5 == 0) p.loop = PoolLoop::mlas;
    const std::optional<Shape> want = thrown([&] { (void)pool2d_output_shape(xs, p); })
                                          ? std::nullopt
                                          : std::optional(pool2d_output_shape(xs, p));
    const Shape ys = i % 4 == 0 ? random_y_shape(rng, xs, want) : want.value_or(Shape{1, 1, 1, 1});
    Tensor x(DType::f32, xs), y(DType::f32, ys);
    // What pool2d checked before: y against the Shape of pool2d_output_shape.
    const auto before = thrown([&] {
      x.view().expect_rank(4, "npukit::pool2d", "x");
      y.view().expect_shape(pool2d_output_shape(xs, p), "npukit::pool2d", "y");
    });
    const auto now = thrown([&] { pool2d(x, y, p); });
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " case " + std::to_string(i) + ": x " +
                 shape_text(xs) + ", y " + shape_text(ys));
    if (before) {
      ++thrown_cases;
      ASSERT_TRUE(now.has_value());
      EXPECT_EQ(*now, *before);
    } else {
      ++run_cases;
      EXPECT_FALSE(now.has_value()) << *now;
    }
  }
  // Both sides of the check were exercised.
  EXPECT_GT(thrown_cases, 300);
  EXPECT_GT(run_cases, 300);
}

TEST(PoolCallValidation, QLinearAveragePoolThrowsTheOutputShapeMessages) {
  constexpr unsigned kSeed = 20261314;
  std::mt19937 rng(kSeed);
  int thrown_cases = 0, run_cases = 0;
  for (int i = 0; i < 1000; ++i) {
    const Shape xs = {std::uniform_int_distribution<int64_t>(1, 2)(rng),
                      std::uniform_int_distribution<int64_t>(1, 17)(rng),
                      std::uniform_int_distribution<int64_t>(1, 7)(rng),
                      std::uniform_int_distribution<int64_t>(1, 7)(rng)};
    QLinearAvgPoolParams p;
    p.count_include_pad = i % 2 == 0;
    apply_profile(p, i % 3 == 0 ? Profile::pytorch : Profile::onnxruntime);
    p.window = random_window(rng, true);
    if (i % 6 == 0) {  // a global window (the global kernels' list)
      p.window = Window2d{};
      p.window.kernel_h = xs[2];
      p.window.kernel_w = xs[3];
    }
    const bool shape_ok = !thrown([&] { (void)qlinear_average_pool_output_shape(xs, p); });
    const std::optional<Shape> want =
        shape_ok ? std::optional(qlinear_average_pool_output_shape(xs, p)) : std::nullopt;
    const Shape ys = i % 4 == 1 ? random_y_shape(rng, xs, want) : want.value_or(Shape{1, 1, 1, 1});
    const DType dt = i % 2 ? DType::u8 : DType::s8;
    Tensor x(dt, xs), y(dt, ys);
    const char* fn = "npukit::qlinear_average_pool";
    const auto before = thrown([&] {
      x.view().expect_rank(4, fn, "x");
      y.view().expect_shape(qlinear_average_pool_output_shape(xs, p), fn, "y");
    });
    const auto now = thrown([&] { qlinear_average_pool(x, y, p); });
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " case " + std::to_string(i) + ": x " +
                 shape_text(xs) + ", y " + shape_text(ys));
    if (before) {
      ++thrown_cases;
      ASSERT_TRUE(now.has_value());
      EXPECT_EQ(*now, *before);
    } else {
      ++run_cases;
      EXPECT_FALSE(now.has_value()) << *now;
    }
  }
  EXPECT_GT(thrown_cases, 200);
  EXPECT_GT(run_cases, 200);
}

TEST(PoolCallValidation, RankErrorsKeepTheirMessages) {
  Tensor x3(DType::f32, {1, 2, 3}), x(DType::f32, {1, 2, 3, 3}), y3(DType::f32, {1, 2, 1});
  const auto x_rank = thrown([&] { global_pool2d(x3, x, PoolMode::max); });
  ASSERT_TRUE(x_rank.has_value());
  EXPECT_NE(x_rank->find("npukit::global_pool2d"), std::string::npos) << *x_rank;
  const auto y_rank = thrown([&] { global_pool2d(x, y3, PoolMode::avg); });
  ASSERT_TRUE(y_rank.has_value());
  EXPECT_EQ(*y_rank, *thrown([&] { y3.view().expect_shape({1, 2, 1, 1}, "npukit::pool2d", "y"); }));
}

TEST(BorrowedView, BorrowsLvaluesAndKeepsTemporaries) {
  Tensor t(DType::u8, {1, 3, 4, 5});
  const BorrowedView borrowed(t.view());
  EXPECT_EQ(&borrowed.view(), &t.view());  // no copy
  std::optional<BorrowedView> owner;
  owner.emplace(TensorView(t.data<uint8_t>(), DType::u8, {1, 3, 4, 5}, {60, 20, 5, 1}));
  BorrowedView copy = *owner;
  owner.reset();  // the copy holds its own view, not a pointer into the destroyed one
  EXPECT_EQ(copy.shape(), (Shape{1, 3, 4, 5}));
  EXPECT_EQ(copy.stride(1), 20);
  EXPECT_EQ(copy.raw(), t.view().raw());
  copy = borrowed;
  EXPECT_EQ(&copy.view(), &t.view());
}

}  // namespace
}  // namespace test_pool_call_validation
}  // namespace npukit
