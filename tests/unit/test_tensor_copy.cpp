// npukit::copy against an element-by-element copy on seeded random views:
// ranks 0-8, size-1 axes, permuted axis orders, gaps between rows, negative
// strides, element sizes 1/2/4/8. copy merges axes on which both views are
// dense; this checks every element lands where the logical index says and no
// byte outside the destination view changes. A failure prints seed and case.
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

}  // namespace
}  // namespace test_tensor_copy
}  // namespace npukit
