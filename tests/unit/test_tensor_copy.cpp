// npukit::copy against an element-by-element copy on seeded random views:
// ranks 0-8, size-1 axes, permuted axis orders, gaps between rows, negative
// strides, element sizes 1/2/4/8. copy merges axes on which both views are
// dense; this checks every element lands where the logical index says and no
// byte outside the destination view changes. A failure prints seed and case.
// Large dense runs are split over the threads: checked at 1-3 threads.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "unit/test_util.hpp"

namespace npukit {
namespace test_tensor_copy {
namespace {

struct RandomView {
  std::vector<uint8_t> buf;
  TensorView view;
  std::string text;
};

// A view of `shape` in its own buffer: axes laid out in a random order, with a
// random gap after some, and some walked backwards.
RandomView random_view(std::mt19937& g, DType dt, const Shape& shape) {
  const int r = static_cast<int>(shape.size());
  const auto es = static_cast<int64_t>(dtype_size(dt));
  std::vector<int> order(static_cast<size_t>(r));
  std::iota(order.begin(), order.end(), 0);
  if (g() % 2) std::shuffle(order.begin(), order.end(), g);  // else dense row-major candidates
  std::reverse(order.begin(), order.end());                  // innermost first
  Shape strides(static_cast<size_t>(r), 0);
  int64_t step = 1;
  for (int a : order) {
    strides[static_cast<size_t>(a)] = step;
    step *= shape[static_cast<size_t>(a)] + (g() % 4 == 0 ? 1 : 0);
  }
  int64_t base = 0, extent = 1;
  for (int a = 0; a < r; ++a) {
    const int64_t span = (shape[static_cast<size_t>(a)] - 1) * strides[static_cast<size_t>(a)];
    extent += span;
    if (g() % 5 == 0) {  // backwards along this axis
      base += span;
      strides[static_cast<size_t>(a)] = -strides[static_cast<size_t>(a)];
    }
  }
  RandomView v;
  v.buf.resize(static_cast<size_t>(extent * es));
  for (uint8_t& b : v.buf) b = static_cast<uint8_t>(g());
  v.view = TensorView(v.buf.data() + base * es, dt, shape, strides);
  v.text = "strides " + shape_text(strides) + " base " + std::to_string(base);
  return v;
}

TEST(TensorCopy, MatchesElementwiseCopyOnRandomViews) {
  const uint32_t seed = 20261126;
  std::mt19937 g(seed);
  const DType dtypes[] = {DType::u8, DType::s16, DType::f32, DType::s64};
  int merged_runs = 0;
  for (int i = 0; i < 3000; ++i) {
    const int r = static_cast<int>(g() % 9);
    Shape shape;
    for (int a = 0; a < r; ++a) shape.push_back(g() % 4 == 0 ? 1 : 1 + g() % (r > 5 ? 3 : 6));
    const DType dt = dtypes[g() % 4];
    RandomView src = random_view(g, dt, shape), dst = random_view(g, dt, shape);
    merged_runs += src.view.is_contiguous() && dst.view.is_contiguous();
    std::vector<uint8_t> want = dst.buf;
    // Element by element over the logical index.
    const auto es = static_cast<int64_t>(dtype_size(dt));
    const int64_t n = shape_numel(shape);
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e, so = 0, dof = 0;
      for (int a = r - 1; a >= 0; --a) {
        const int64_t k = rest % shape[static_cast<size_t>(a)];
        rest /= shape[static_cast<size_t>(a)];
        so += k * src.view.stride(a);
        dof += k * dst.view.stride(a);
      }
      const auto* from = static_cast<const uint8_t*>(src.view.raw()) + so * es;
      const auto to = static_cast<uint8_t*>(dst.view.raw()) + dof * es - dst.buf.data();
      std::memcpy(want.data() + to, from, static_cast<size_t>(es));
    }
    copy(src.view, dst.view);
    const bool same = want == dst.buf;
    EXPECT_TRUE(same) << "seed " << seed << ", case " << i << ": " << dtype_name(dt) << " shape "
                      << shape_text(shape) << ", src " << src.text << ", dst " << dst.text;
    if (!same) break;
  }
  EXPECT_GT(merged_runs, 300);  // dense pairs (one memcpy) are a good part of the cases
}

// A dense pair is one run, copied over the threads in 16 KB blocks when it
// is 128 KB or more: every byte lands, none past the view changes, for sizes
// around the block and the two-grain threshold, 1-3 threads, and a
// channels-last pair (one run too).
TEST(TensorCopy, LargeRunsSplitOverThreadsCopyEveryByte) {
  test::SettingsRestore restore;
  const uint32_t seed = 20261127;
  std::mt19937 g(seed);
  constexpr int64_t kGuard = 64;
  for (int threads = 1; threads <= 3; ++threads) {
    set_num_threads(threads);
    for (int64_t bytes : {int64_t{1}, int64_t{16383}, int64_t{65536}, int64_t{131068},
                          int64_t{131072}, int64_t{131076}, int64_t{1048588}}) {
      std::vector<uint8_t> src(static_cast<size_t>(bytes)),
          dst(static_cast<size_t>(bytes + 2 * kGuard));
      for (uint8_t& b : src) b = static_cast<uint8_t>(g());
      for (uint8_t& b : dst) b = static_cast<uint8_t>(g());
      std::vector<uint8_t> want = dst;
      std::copy(src.begin(), src.end(), want.begin() + kGuard);
      const TensorView from(src.data(), DType::u8, {bytes}, {1});
      const TensorView to(dst.data() + kGuard, DType::u8, {bytes}, {1});
      copy(from, to);
      ASSERT_TRUE(want == dst) << "seed " << seed << ", threads " << threads << ", " << bytes
                               << " bytes";
    }
    // Channels-last (NHWC strides behind an NCHW shape) on both sides: 1x64x56x56 f32, 800 KB.
    const Shape shape{1, 64, 56, 56}, nhwc{56 * 56 * 64, 1, 56 * 64, 64};
    std::vector<float> a(static_cast<size_t>(shape_numel(shape))), b(a.size(), -1.0f);
    for (float& v : a) v = static_cast<float>(g() % 1000);
    copy(TensorView(a.data(), DType::f32, shape, nhwc),
         TensorView(b.data(), DType::f32, shape, nhwc));
    ASSERT_TRUE(a == b) << "seed " << seed << ", threads " << threads
                        << ", channels-last 1x64x56x56";
  }
}

}  // namespace
}  // namespace test_tensor_copy
}  // namespace npukit
