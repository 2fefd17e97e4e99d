#include "npukit/ops/layer_norm.hpp"

#include <vector>

#include "npukit/error.hpp"

namespace npukit {

namespace {
// A contiguous copy of t's elements (row-major), or nullptr for an empty view.
const float* dense(const TensorView& t, std::vector<float>& store) {
  if (t.empty()) return nullptr;
  if (t.is_contiguous()) return static_cast<const float*>(t.raw());
  Tensor tmp(DType::f32, t.shape());
  copy(t, tmp.view());
  const float* p = static_cast<const float*>(tmp.view().raw());
  store.assign(p, p + t.numel());
  return store.data();
}
}  // namespace

void layer_norm(const TensorView& x, const TensorView& scale, const TensorView& bias,
                const TensorView& y, const TensorView& mean, const TensorView& inv_std_dev,
                const LayerNormParams& p) {
  constexpr const char* fn = "npukit::layer_norm";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  const int64_t rank = x.rank();
  check(rank >= 1, fn, "x", "a scalar", "rank 1 to 4");
  check_range(fn, "axis", p.axis, -rank, rank - 1);
  const int64_t axis = p.axis < 0 ? p.axis + rank : p.axis;
  int64_t rows = 1, n = 1;
  Shape stat_shape;
  for (int64_t i = 0; i < rank; ++i) {
    (i < axis ? rows : n) *= x.dim(static_cast<int>(i));
    stat_shape.push_back(i < axis ? x.dim(static_cast<int>(i)) : 1);
  }
  auto expect_inner = [&](const TensorView& t, const char* name) {
    if (t.empty()) return;
    t.expect_dtype(DType::f32, fn, name);
    check(t.numel() == n, fn, name, "shape " + shape_text(t.shape()),
          std::to_string(n) + " elements (x.shape[axis:] of " + shape_text(x.shape()) + ")");
  };
  check(!scale.empty(), fn, "scale", "absent", "a tensor (required)");
  expect_inner(scale, "scale");
  expect_inner(bias, "bias");
  for (const TensorView* s : {&mean, &inv_std_dev})
    if (!s->empty()) {
      s->expect_dtype(DType::f32, fn, "mean/inv_std_dev dtype");
      s->expect_shape(stat_shape, fn, s == &mean ? "mean" : "inv_std_dev");
    }
  std::vector<float> xs, ss, bs, ys, ms, is;
  const float* xp = dense(x, xs);
  const float* sp = dense(scale, ss);
  const float* bp = dense(bias, bs);
  const bool y_dense = y.is_contiguous();
  if (!y_dense) ys.resize(static_cast<size_t>(x.numel()));
  float* yp = y_dense ? static_cast<float*>(y.raw()) : ys.data();
  const bool m_dense = mean.empty() || mean.is_contiguous();
  const bool i_dense = inv_std_dev.empty() || inv_std_dev.is_contiguous();
  if (!m_dense) ms.resize(static_cast<size_t>(rows));
  if (!i_dense) is.resize(static_cast<size_t>(rows));
  float* mp = mean.empty() ? nullptr : m_dense ? static_cast<float*>(mean.raw()) : ms.data();
  float* ip = inv_std_dev.empty() ? nullptr
              : i_dense           ? static_cast<float*>(inv_std_dev.raw())
                                  : is.data();
  ref::layer_norm_f32(xp, sp, bp, yp, mp, ip, rows, n, p.epsilon);
  if (!y_dense) copy(TensorView::contiguous(ys.data(), DType::f32, x.shape()), y);
  if (!m_dense) copy(TensorView::contiguous(ms.data(), DType::f32, stat_shape), mean);
  if (!i_dense) copy(TensorView::contiguous(is.data(), DType::f32, stat_shape), inv_std_dev);
}

}  // namespace npukit
