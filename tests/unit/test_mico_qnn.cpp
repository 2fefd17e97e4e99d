// The MiCo-Lib C API (seed 003): hand-computed cases, every kernel/stride/
// padding MiCo accepts and many it does not, and the documented failure
// behaviour (message on stderr, abort, y untouched) as death tests.
#include <gtest/gtest.h>

#include <vector>

#define REF  // declare the _Ref functions, as MiCo's tests do
#include "npukit/compat/mico_qnn.h"

namespace test_mico_qnn {
namespace {

struct Q8 {
  std::vector<int8_t> data;
  Tensor4D_Q8 t{};
  Q8(size_t n, size_t c, size_t h, size_t w, std::vector<int8_t> v = {}) {
    data = v.empty() ? std::vector<int8_t>(n * c * h * w, 0) : std::move(v);
    t.shape[0] = n;
    t.shape[1] = c;
    t.shape[2] = h;
    t.shape[3] = w;
    t.data = data.data();
    t.scale = 1.0f;
    t.wq = 8;
  }
};

size_t out_size(size_t in, size_t k, size_t s, size_t p) {
  return (in + 2 * p - k) / s + 1;
}

// Independent restatement of MiCo's documented semantics, window by window.
int8_t oracle(const Q8& x, size_t n, size_t c, size_t oh, size_t ow, size_t k, size_t s, size_t p,
              bool is_max) {
  int sum = 0, count = 0, best = -128;
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j) {
      const long h = static_cast<long>(oh * s + i) - static_cast<long>(p);
      const long w = static_cast<long>(ow * s + j) - static_cast<long>(p);
      if (h < 0 || w < 0 || h >= static_cast<long>(x.t.shape[2]) ||
          w >= static_cast<long>(x.t.shape[3]))
        continue;
      const int v =
          x.data[((n * x.t.shape[1] + c) * x.t.shape[2] + static_cast<size_t>(h)) * x.t.shape[3] +
                 static_cast<size_t>(w)];
      sum += v;
      ++count;
      best = v > best ? v : best;
    }
  if (count == 0) return 0;
  return static_cast<int8_t>(is_max ? best : sum / count);  // C division truncates
}

TEST(MicoQnn, HandComputed) {
  // 1x1x3x3 [1..9] minus 5: [-4 -3 -2; -1 0 1; 2 3 4]; k 2, s 1, p 0.
  Q8 x(1, 1, 3, 3, {-4, -3, -2, -1, 0, 1, 2, 3, 4});
  x.t.scale = 0.25f;
  Q8 y(1, 1, 2, 2);
  MiCo_Q8_AvgPool2D(&y.t, &x.t, 2, 1, 0);
  // (-4-3-1+0)/4 = -8/4 = -2; (-3-2+0+1)/4 = -1; (-1+0+2+3)/4 = 1; (0+1+3+4)/4 = 2.
  EXPECT_EQ(y.data, (std::vector<int8_t>{-2, -1, 1, 2}));
  EXPECT_EQ(y.t.scale, 0.25f);
  MiCo_Q8_MaxPool2D(&y.t, &x.t, 2, 1, 0);
  EXPECT_EQ(y.data, (std::vector<int8_t>{0, 1, 3, 4}));
  // k 3, s 2, p 1 -> 2x2: corner (0,0) window rows/cols {-1,0,1}: -4 -3 -1 0,
  // sum -8 / 4 = -2; (0,1): cols {1,2,3}: -3 -2 0 1 -> -4/4 = -1;
  // (1,0): rows {1,2,3}: -1 0 2 3 -> 1; (1,1): 0 1 3 4 -> 2.
  MiCo_Q8_AvgPool2D(&y.t, &x.t, 3, 2, 1);
  EXPECT_EQ(y.data, (std::vector<int8_t>{-2, -1, 1, 2}));
  // Truncation toward zero: (-4 -3 -1) / 3 would need a 3-tap window; use
  // k 2 s 2 p 1 on the top-left: window {-1,0}x{-1,0} holds only -4 -> -4;
  // (0,1) holds -3 -2 -> -5/2 = -2 (floor would be -3).
  MiCo_Q8_AvgPool2D(&y.t, &x.t, 2, 2, 1);
  EXPECT_EQ(y.data[0], -4);
  EXPECT_EQ(y.data[1], -2);
}

TEST(MicoQnn, MaxIgnoresPaddingAndEmptyWindowIsZero) {
  Q8 x(1, 1, 1, 1, {-100});
  Q8 y(1, 1, 3, 3);
  // k 1, p 1: only the centre window holds the element; the others are empty -> 0.
  MiCo_Q8_MaxPool2D(&y.t, &x.t, 1, 1, 1);
  EXPECT_EQ(y.data, (std::vector<int8_t>{0, 0, 0, 0, -100, 0, 0, 0, 0}));
  // k 2, p 1: every window holds the element; padding (-128) never wins over -100.
  Q8 y2(1, 1, 2, 2);
  MiCo_Q8_MaxPool2D(&y2.t, &x.t, 2, 1, 1);
  EXPECT_EQ(y2.data, (std::vector<int8_t>{-100, -100, -100, -100}));
  Q8 m(1, 1, 1, 1, {-128});
  MiCo_Q8_AvgPool2D(&y2.t, &m.t, 2, 1, 1);  // -128 counts as an element: -128/1
  EXPECT_EQ(y2.data, (std::vector<int8_t>{-128, -128, -128, -128}));
}

TEST(MicoQnn, EveryKernelStridePaddingMatchesSemantics) {
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int8_t>(state >> 24);
  };
  int configs = 0;
  for (size_t k = 1; k <= 5; ++k)
    for (size_t s = 1; s <= 4; ++s)
      for (size_t p = 0; p <= 5; ++p)
        for (size_t h : {1, 4, 7}) {
          const size_t w = h + 2;
          if (h + 2 * p < k) continue;
          Q8 x(2, 3, h, w);
          for (auto& v : x.data) v = next();
          const size_t oh = out_size(h, k, s, p), ow = out_size(w, k, s, p);
          for (bool is_max : {false, true}) {
            Q8 y(2, 3, oh, ow);
            Q8 yr(2, 3, oh, ow);
            if (is_max) {
              MiCo_Q8_MaxPool2D(&y.t, &x.t, k, s, p);
              MiCo_Q8_MaxPool2D_Ref(&yr.t, &x.t, k, s, p);
            } else {
              MiCo_Q8_AvgPool2D(&y.t, &x.t, k, s, p);
              MiCo_Q8_AvgPool2D_Ref(&yr.t, &x.t, k, s, p);
            }
            ASSERT_EQ(y.data, yr.data);
            for (size_t n = 0; n < 2; ++n)
              for (size_t c = 0; c < 3; ++c)
                for (size_t i = 0; i < oh; ++i)
                  for (size_t j = 0; j < ow; ++j)
                    ASSERT_EQ(y.data[((n * 3 + c) * oh + i) * ow + j],
                              oracle(x, n, c, i, j, k, s, p, is_max))
                        << "k " << k << " s " << s << " p " << p << " h " << h << " max " << is_max;
            ++configs;
          }
        }
  EXPECT_GT(configs, 500);
}

using MicoQnnDeathTest = ::testing::Test;

TEST_F(MicoQnnDeathTest, InvalidArgumentsAbortWithMessage) {
  Q8 x(1, 1, 4, 4), y(1, 1, 2, 2);
  EXPECT_DEATH(MiCo_Q8_AvgPool2D(&y.t, &x.t, 0, 1, 0),
               "npukit: error: MiCo_Q8_AvgPool2D: parameter 'kernel_size' = 0");
  EXPECT_DEATH(MiCo_Q8_MaxPool2D(&y.t, &x.t, 2, 0, 0),
               "npukit: error: MiCo_Q8_MaxPool2D: parameter 'stride' = 0");
  EXPECT_DEATH(MiCo_Q8_AvgPool2D(nullptr, &x.t, 2, 2, 0), "parameter 'y' = NULL");
  EXPECT_DEATH(MiCo_Q8_MaxPool2D(&y.t, nullptr, 2, 2, 0), "parameter 'x' = NULL");
  // k 2, s 1 on 4x4 gives 3x3, not 2x2.
  EXPECT_DEATH(MiCo_Q8_AvgPool2D(&y.t, &x.t, 2, 1, 0), "parameter 'y->shape' = \\[1, 1, 2, 2\\]");
  // A kernel larger than the padded input.
  EXPECT_DEATH(MiCo_Q8_MaxPool2D_Ref(&y.t, &x.t, 7, 1, 1),
               "MiCo_Q8_MaxPool2D_Ref: parameter 'kernel_h'");
  Q8 c(1, 2, 2, 2);  // channel count differs from x
  EXPECT_DEATH(MiCo_Q8_AvgPool2D(&c.t, &x.t, 2, 2, 0), "y->shape");
}

}  // namespace
}  // namespace test_mico_qnn
