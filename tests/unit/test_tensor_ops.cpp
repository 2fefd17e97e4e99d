// Tensor operators of any dtype and rank (npukit/ops/tensor_ops.hpp) and the
// rank-8 copy under them: hand-computed cases for every rule (Slice clamping,
// Pad modes, Cast's x86 conversions, Gather's negative indices, integer
// Div/Mod), then seeded random cases against brute-force definitions written
// independently of the kernels (membership tests instead of size formulas).
// The operators are single-threaded loops: thread count does not apply.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "npukit/error.hpp"
#include "npukit/ops/elementwise.hpp"
#include "npukit/ops/tensor_ops.hpp"

namespace npukit {
namespace test_tensor_ops {
namespace {

constexpr uint32_t kSeed = 20261126;

template <class T>
std::vector<T> values(const Tensor& t) {
  return t.to_vector<T>();
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

TEST(TensorOps, CopyHandlesRankEightAndNegativeStrides) {
  // x = 0..255 in a 2^8 tensor; y = x with every axis reversed: y[i] = 255 - i.
  const Shape s(8, 2);
  Tensor x = Tensor::from<int64_t>(s, iota(256));
  Shape st = x.view().strides();
  for (int64_t& v : st) v = -v;
  Tensor y(DType::s64, s);
  copy(TensorView(x.data<int64_t>() + 255, DType::s64, s, st), y.view());
  const std::vector<int64_t> got = values<int64_t>(y);
  for (int64_t i = 0; i < 256; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], 255 - i) << i;
  EXPECT_THROW(Tensor(DType::f32, Shape(9, 1)), Error);
}

TEST(TensorOps, ReluRunsAboveRankFour) {
  // Element-wise kernels take any rank a tensor can have (0 to 8); rank 5 is
  // swin_t's shape. (Rank 9 cannot be built: see the test above.)
  Tensor x = Tensor::from<float>({1, 1, 1, 1, 2}, {-1.5f, 2.0f});
  Tensor y(DType::f32, {1, 1, 1, 1, 2});
  relu(x, y);
  EXPECT_EQ(y.data<float>()[0], 0.0f);
  EXPECT_EQ(y.data<float>()[1], 2.0f);
}

TEST(TensorOps, SliceClampsAndStepsBackward) {
  Tensor x = Tensor::from<int64_t>({6}, iota(6));
  auto run = [&](int64_t start, int64_t end, int64_t step) {
    const auto a = slice_axes({6}, {start}, {end}, {}, {step});
    Tensor y(DType::s64, slice_shape(a));
    slice(x, y, a);
    return values<int64_t>(y);
  };
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(run(1, 4, 1), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(run(-2, kMax, 1), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(run(kMax, kMin, -1), (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(run(-1, -7, -2), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(run(4, 1, 1), (std::vector<int64_t>{}));
  EXPECT_EQ(run(0, 6, kMax), (std::vector<int64_t>{0}));
  EXPECT_EQ(run(5, -100, kMin), (std::vector<int64_t>{5}));
  EXPECT_THROW(slice_axes({6}, {0}, {1}, {}, {0}), Error);
  EXPECT_THROW(slice_axes({6, 2}, {0, 0}, {1, 1}, {1, -1}, {}), Error);  // repeated axis
  EXPECT_THROW(slice_axes({6}, {0}, {1}, {1}, {}), Error);               // axis out of range
}

// Brute force: element i of an axis is taken when it lies between the clamped
// start and end on the step's lattice.
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += dim;
    return std::clamp(v, lo, hi);
  };
  std::vector<int64_t> out;
  if (step > 0) {
    const int64_t s = norm(start, 0, dim), e = norm(end, 0, dim);
    for (int64_t i = 0; i < dim; ++i)
      if (i >= s && i < e && (i - s) % step == 0) out.push_back(i);
  } else {
    // ONNX Runtime clamps a backward start to [0, dim - 1] (Python would give
    // an empty slice for a start before the axis).
    const int64_t s = norm(start, 0, dim - 1), e = norm(end, -1, dim - 1);
    for (int64_t i = dim - 1; i >= 0; --i)
      if (i <= s && i > e && (s - i) % step == 0) out.push_back(i);
  }
  return out;
}

TEST(TensorOps, SliceMatchesBruteForceRandom) {
  std::mt19937_64 rng(kSeed);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 400; ++it) {
    const int r = static_cast<int>(uni(1, 5));
    Shape s;
    for (int i = 0; i < r; ++i) s.push_back(uni(0, 5));
    const int64_t n = shape_numel(s);
    Tensor x = Tensor::from<int64_t>(s, iota(n));
    std::vector<int64_t> starts, ends, axes, steps;
    for (int i = 0; i < r; ++i) {
      if (uni(0, 3) == 0) continue;
      axes.push_back(uni(0, 1) ? i : i - r);
      starts.push_back(uni(-8, 8));
      ends.push_back(uni(-8, 8));
      const int64_t st = uni(-3, 3);
      steps.push_back(st == 0 ? 1 : st);
    }
    const std::string cfg = "seed " + std::to_string(kSeed) + " case " + std::to_string(it) +
                            " x " + shape_text(s) + " starts " + shape_text(starts) + " ends " +
                            shape_text(ends) + " axes " + shape_text(axes) + " steps " +
                            shape_text(steps);
    const auto a = slice_axes(s, starts, ends, axes, steps);
    Tensor y(DType::s64, slice_shape(a));
    slice(x, y, a);
    // Expected: the product of per-axis index lists, in row-major order.
    std::vector<std::vector<int64_t>> idx(static_cast<size_t>(r));
    for (int i = 0; i < r; ++i) {
      idx[static_cast<size_t>(i)] =
          slice_indices(s[static_cast<size_t>(i)], 0, s[static_cast<size_t>(i)], 1);
      for (size_t k = 0; k < axes.size(); ++k)
        if ((axes[k] + r) % r == i)
          idx[static_cast<size_t>(i)] =
              slice_indices(s[static_cast<size_t>(i)], starts[k], ends[k], steps[k]);
    }
    std::vector<int64_t> want = {0};
    for (int i = 0; i < r; ++i) {
      std::vector<int64_t> next;
      const int64_t stride = x.view().stride(i);
      for (int64_t base : want)
        for (int64_t k : idx[static_cast<size_t>(i)]) next.push_back(base + k * stride);
      want = next;
    }
    ASSERT_EQ(values<int64_t>(y), want) << cfg;
  }
}

TEST(TensorOps, PadModesByHand) {
  Tensor x = Tensor::from<float>({3}, {1, 2, 3});
  auto run = [&](PadMode m, std::vector<int64_t> pads, const TensorView& v = TensorView()) {
    Tensor y(DType::f32, pad_shape({3}, pads, m));
    pad(x, v, y, pads, m);
    return values<float>(y);
  };
  EXPECT_EQ(run(PadMode::reflect, {2, 2}), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(run(PadMode::edge, {2, 2}), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(run(PadMode::wrap, {2, 2}), (std::vector<float>{2, 3, 1, 2, 3, 1, 2}));
  Tensor seven = Tensor::from<float>({}, {7});
  EXPECT_EQ(run(PadMode::constant, {1, 0}, seven), (std::vector<float>{7, 1, 2, 3}));
  EXPECT_EQ(run(PadMode::constant, {-1, 1}), (std::vector<float>{2, 3, 0}));  // crop + pad
  EXPECT_EQ(run(PadMode::edge, {0, 0}), (std::vector<float>{1, 2, 3}));
  // Negative pads crop first; the mode then repeats the cropped extent (ORT).
  EXPECT_EQ(run(PadMode::edge, {-1, 2}), (std::vector<float>{2, 3, 3, 3}));
  EXPECT_EQ(run(PadMode::reflect, {1, -1}), (std::vector<float>{2, 1, 2}));
  EXPECT_THROW(pad_shape({3}, {2, -1}, PadMode::reflect), Error);        // 2 >= cropped size 2
  EXPECT_THROW(pad_shape({3}, {1, -1}, PadMode::wrap), Error);           // wrap with a crop
  EXPECT_THROW(pad_shape({3, 2}, {0, -2, 1, 0}, PadMode::edge), Error);  // an axis cropped away
  EXPECT_THROW(pad_shape({3}, {3, 0}, PadMode::reflect), Error);         // pad >= axis size
  EXPECT_THROW(pad_shape({3}, {-2, -2}, PadMode::constant), Error);
  EXPECT_THROW(pad_shape({0}, {1, 0}, PadMode::edge), Error);
  EXPECT_THROW(pad_shape({3}, {1}, PadMode::edge), Error);
}

TEST(TensorOps, PadMatchesBruteForceRandom) {
  std::mt19937_64 rng(kSeed + 1);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int it = 0; it < 300; ++it) {
    const int r = static_cast<int>(uni(1, 4));
    const auto mode = static_cast<PadMode>(uni(0, 3));
    Shape s;
    std::vector<int64_t> pads(static_cast<size_t>(2 * r));
    for (int i = 0; i < r; ++i) s.push_back(uni(1, 4));
    for (int i = 0; i < 2 * r; ++i) {
      const int64_t d = s[static_cast<size_t>(i % r)];
      pads[static_cast<size_t>(i)] =
          uni(mode == PadMode::wrap ? 0 : -1, mode == PadMode::reflect ? d - 1 : 3);
    }
    const std::string cfg = "seed " + std::to_string(kSeed + 1) + " case " + std::to_string(it) +
                            " x " + shape_text(s) + " pads " + shape_text(pads) + " mode " +
                            std::to_string(static_cast<int>(mode));
    Shape ys;
    try {
      ys = pad_shape(s, pads, mode);
    } catch (const Error&) {
      continue;  // a crop below zero: the shape function's own cases above
    }
    Tensor x = Tensor::from<int64_t>(s, iota(shape_numel(s)));
    Tensor v = Tensor::from<int64_t>({}, {-1});
    Tensor y(DType::s64, ys);
    pad(x, v, y, pads, mode);
    const std::vector<int64_t> got = values<int64_t>(y);
    // Brute force per output index: walk each axis coordinate back into x.
    const Shape xst = x.view().strides();
    for (int64_t o = 0; o < shape_numel(ys); ++o) {
      int64_t rem = o, src = 0;
      bool inside = true;
      for (int i = r - 1; i >= 0; --i) {
        const auto ui = static_cast<size_t>(i);
        const int64_t p = rem % ys[ui];
        rem /= ys[ui];
        // Definition: crop x by the negative pads, then pad the cropped axis
        // [first, first + d) by the positive ones.
        const int64_t b = pads[ui], e = pads[ui + static_cast<size_t>(r)];
        const int64_t first = std::max<int64_t>(-b, 0);
        const int64_t d = s[ui] - first - std::max<int64_t>(-e, 0);
        int64_t k = p - std::max<int64_t>(b, 0);
        if (mode == PadMode::edge) k = std::clamp<int64_t>(k, 0, d - 1);
        if (mode == PadMode::wrap) k = ((k % d) + d) % d;
        if (mode == PadMode::reflect) {
          // Walk away from the edge and bounce once.
          if (k < 0) k = -k;
          if (k >= d) k = (d - 1) - (k - (d - 1));
        }
        if (k < 0 || k >= d) inside = false;
        src += (first + k) * xst[ui];
      }
      ASSERT_EQ(got[static_cast<size_t>(o)], inside ? src : -1) << cfg << " output " << o;
    }
  }
}

TEST(TensorOps, CastFollowsX86Conversions) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> f = {2.9f,           -2.9f,  nan,   inf,   -inf,   2147483648.0f,
                                -2147483648.0f, 300.7f, -1.0f, -0.0f, 1e-40f, 9.3e18f};
  Tensor x = Tensor::from<float>({12}, f);
  Tensor s32(DType::s32, {12}), s64(DType::s64, {12}), u8(DType::u8, {12}), s8(DType::s8, {12}),
      b8(DType::b8, {12});
  cast(x, s32);
  cast(x, s64);
  cast(x, u8);
  cast(x, s8);
  cast(x, b8);
  const int32_t m32 = std::numeric_limits<int32_t>::min();
  const int64_t m64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(values<int32_t>(s32),
            (std::vector<int32_t>{2, -2, m32, m32, m32, m32, m32, 300, -1, 0, 0, m32}));
  // 9.3e18 is past INT64_MAX: the indefinite INT64_MIN.
  EXPECT_EQ(values<int64_t>(s64), (std::vector<int64_t>{2, -2, m64, m64, m64, 2147483648LL,
                                                        -2147483648LL, 300, -1, 0, 0, m64}));
  // 8-bit targets: the low byte of the int32 conversion (300 -> 44, -1 -> 255).
  EXPECT_EQ(values<uint8_t>(u8), (std::vector<uint8_t>{2, 254, 0, 0, 0, 0, 0, 44, 255, 0, 0, 0}));
  EXPECT_EQ(values<int8_t>(s8), (std::vector<int8_t>{2, -2, 0, 0, 0, 0, 0, 44, -1, 0, 0, 0}));
  const auto* b = static_cast<const uint8_t*>(b8.view().raw());
  EXPECT_EQ(std::vector<uint8_t>(b, b + 12),
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1}));
  // Integer narrowing keeps low bits; int to float rounds to nearest even.
  Tensor big = Tensor::from<int64_t>({3}, {(int64_t{1} << 40) + 5, -1, 16777217});
  Tensor n32(DType::s32, {3}), nf(DType::f32, {3});
  cast(big, n32);
  cast(big, nf);
  EXPECT_EQ(values<int32_t>(n32), (std::vector<int32_t>{5, -1, 16777217}));
  EXPECT_EQ(values<float>(nf), (std::vector<float>{1099511627776.0f, -1.0f, 16777216.0f}));
}

TEST(TensorOps, GatherNegativeIndicesAndRangeError) {
  Tensor x = Tensor::from<float>({2, 3}, {0, 1, 2, 10, 11, 12});
  Tensor idx = Tensor::from<int64_t>({2}, {-1, 0});
  Tensor y(DType::f32, gather_shape({2, 3}, {2}, -1));
  gather(x, idx, y, -1);
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 0, 12, 10}));
  Tensor bad = Tensor::from<int64_t>({1}, {3});
  Tensor y1(DType::f32, {2, 1});
  try {
    gather(x, bad, y1, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "indices");
    EXPECT_EQ(e.value(), "3");
  }
  // Scalar indices drop the axis.
  Tensor one = Tensor::from<int64_t>({}, {1});
  Tensor row(DType::f32, gather_shape({2, 3}, {}, 0));
  gather(x, one, row, 0);
  EXPECT_EQ(row.shape(), (Shape{3}));
  EXPECT_EQ(values<float>(row), (std::vector<float>{10, 11, 12}));
}

TEST(TensorOps, IntegerDivTruncatesAndModFollowsDivisor) {
  Tensor a = Tensor::from<int64_t>({4}, {-7, 7, -7, 7});
  Tensor b = Tensor::from<int64_t>({4}, {2, -2, -2, 2});
  Tensor y(DType::s64, {4});
  int_arith(IntOp::div, a, b, y);
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{-3, -3, 3, 3}));
  int_arith(IntOp::mod, a, b, y);
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, -1, -1, 1}));
  Tensor zero = Tensor::from<int64_t>({}, {0});
  EXPECT_THROW(int_arith(IntOp::div, a, zero, y), Error);
}

TEST(TensorOps, CompareTreatsNanAsUnordered) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = Tensor::from<float>({4}, {nan, -0.0f, 1.0f, 2.0f});
  Tensor b = Tensor::from<float>({4}, {nan, 0.0f, 2.0f, 1.0f});
  Tensor y(DType::b8, {4});
  auto bits = [&]() {
    const auto* p = static_cast<const uint8_t*>(y.view().raw());
    return std::vector<uint8_t>(p, p + 4);
  };
  compare(CompareOp::equal, a, b, y);
  EXPECT_EQ(bits(), (std::vector<uint8_t>{0, 1, 0, 0}));
  compare(CompareOp::less_equal, a, b, y);
  EXPECT_EQ(bits(), (std::vector<uint8_t>{0, 1, 1, 0}));
  compare(CompareOp::greater, a, b, y);
  EXPECT_EQ(bits(), (std::vector<uint8_t>{0, 0, 0, 1}));
}

}  // namespace
}  // namespace test_tensor_ops
}  // namespace npukit
