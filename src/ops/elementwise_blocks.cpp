#include "ops/elementwise_blocks.hpp"

#include "npukit/error.hpp"

namespace npukit {

namespace {

struct Collapsed {
  Shape shape;
  std::vector<Shape> strides;  // one per view
};

// Drops size-1 axes and merges neighbours that every view walks as one axis.
Collapsed collapse(const std::vector<TensorView>& views) {
  const Shape& shape = views.front().shape();
  Collapsed c;
  c.strides.resize(views.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = !c.shape.empty();
    for (size_t k = 0; merge && k < views.size(); ++k)
      merge = c.strides[k].back() == views[k].stride(static_cast<int>(i)) * shape[i];
    if (merge) {
      c.shape.back() *= shape[i];
      for (size_t k = 0; k < views.size(); ++k)
        c.strides[k].back() = views[k].stride(static_cast<int>(i));
      continue;
    }
    c.shape.push_back(shape[i]);
    for (size_t k = 0; k < views.size(); ++k)
      c.strides[k].push_back(views[k].stride(static_cast<int>(i)));
  }
  return c;
}

// The last four axes of a collapsed problem, padded in front with size-1
// axes whose strides keep a contiguous view contiguous.
std::vector<TensorView> blocks_at(const std::vector<TensorView>& views, const Collapsed& c,
                                  const int64_t* pos) {
  const size_t r = c.shape.size(), lead = r > 4 ? r - 4 : 0;
  std::vector<TensorView> out;
  out.reserve(views.size());
  for (size_t k = 0; k < views.size(); ++k) {
    Shape sh(c.shape.begin() + static_cast<std::ptrdiff_t>(lead), c.shape.end());
    Shape st(c.strides[k].begin() + static_cast<std::ptrdiff_t>(lead), c.strides[k].end());
    while (sh.size() < 4) {
      st.insert(st.begin(), st.empty() ? 1 : st.front() * sh.front());
      sh.insert(sh.begin(), 1);
    }
    int64_t offset = 0;
    for (size_t i = 0; i < lead; ++i) offset += pos[i] * c.strides[k][i];
    auto* base = static_cast<char*>(views[k].raw());
    if (base) base += offset * static_cast<int64_t>(dtype_size(views[k].dtype()));
    out.emplace_back(base, views[k].dtype(), std::move(sh), std::move(st));
  }
  return out;
}

}  // namespace

void for_each_4d_block(const std::vector<TensorView>& views,
                       const std::function<void(const std::vector<TensorView>&)>& block) {
  check(!views.empty(), "npukit::for_each_4d_block", "views", "none", "at least one view");
  const Shape& shape = views.front().shape();
  for (const TensorView& v : views)
    check(v.shape() == shape, "npukit::for_each_4d_block", "views", shape_text(v.shape()),
          "one shape " + shape_text(shape));
  const Collapsed c = collapse(views);
  for (int64_t d : c.shape)
    if (d == 0) {  // nothing to compute, but the kernel still sees the shapes
      int64_t zero[kMaxRank] = {};
      Collapsed empty{{0}, std::vector<Shape>(views.size(), Shape{1})};
      block(blocks_at(views, empty, zero));
      return;
    }
  const size_t lead = c.shape.size() > 4 ? c.shape.size() - 4 : 0;
  int64_t pos[kMaxRank] = {};
  while (true) {
    block(blocks_at(views, c, pos));
    size_t i = lead;
    for (; i > 0; --i) {
      if (++pos[i - 1] < c.shape[i - 1]) break;
      pos[i - 1] = 0;
    }
    if (i == 0) return;
  }
}

}  // namespace npukit
