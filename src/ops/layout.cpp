// Both operators are copies through strided views: a transpose is a permuted
// view of x, a concat copies each input into a slice of y.
#include "npukit/ops/layout.hpp"

#include <algorithm>

#include "npukit/error.hpp"

namespace npukit {

Shape transpose_shape(const Shape& x, std::vector<int64_t>& perm) {
  constexpr const char* fn = "npukit::transpose";
  const auto rank = static_cast<int64_t>(x.size());
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t i = 0; ok && i < rank; ++i) ok = sorted[static_cast<size_t>(i)] == i;
  check(ok, fn, "perm", shape_text(perm),
        "a permutation of 0.." + std::to_string(rank - 1) + " for x of shape " + shape_text(x));
  Shape out;
  for (int64_t p : perm) out.push_back(x[static_cast<size_t>(p)]);
  return out;
}

void transpose(const TensorView& x, const TensorView& y, std::vector<int64_t> perm) {
  constexpr const char* fn = "npukit::transpose";
  const Shape out = transpose_shape(x.shape(), perm);
  y.expect_shape(out, fn, "y");
  check(y.dtype() == x.dtype(), fn, "y.dtype", dtype_name(y.dtype()), dtype_name(x.dtype()));
  Shape st;
  for (int64_t p : perm) st.push_back(x.stride(static_cast<int>(p)));
  copy(TensorView(x.raw(), x.dtype(), out, st, fn), y);
}

Shape concat_shape(const std::vector<Shape>& inputs, int64_t axis) {
  constexpr const char* fn = "npukit::concat";
  check(!inputs.empty(), fn, "inputs", "none", "at least one tensor");
  const Shape& first = inputs[0];
  const auto rank = static_cast<int64_t>(first.size());
  check(rank >= 1, fn, "inputs[0]", "a scalar", "rank 1 to 8");
  check_range(fn, "axis", axis, -rank, rank - 1);
  const size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  Shape out = first;
  out[a] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Shape s = inputs[i];
    bool ok = s.size() == first.size();
    if (ok) {
      s[a] = first[a];
      ok = s == first;
    }
    check(ok, fn, ("inputs[" + std::to_string(i) + "]").c_str(), "shape " + shape_text(inputs[i]),
          "the shape of inputs[0] " + shape_text(first) + " except along axis " +
              std::to_string(axis));
    out[a] += inputs[i][a];
  }
  return out;
}

void concat(const std::vector<TensorView>& inputs, const TensorView& y, int64_t axis) {
  constexpr const char* fn = "npukit::concat";
  std::vector<Shape> shapes;
  for (const TensorView& t : inputs) {
    check(t.dtype() == y.dtype(), fn, "inputs.dtype", dtype_name(t.dtype()), dtype_name(y.dtype()));
    shapes.push_back(t.shape());
  }
  y.expect_shape(concat_shape(shapes, axis), fn, "y");
  const int a = static_cast<int>(axis < 0 ? axis + y.rank() : axis);
  int64_t offset = 0;
  for (const TensorView& t : inputs) {
    auto* base = static_cast<char*>(y.raw()) +
                 offset * y.stride(a) * static_cast<int64_t>(dtype_size(y.dtype()));
    copy(t, TensorView(base, y.dtype(), t.shape(), y.strides(), fn));
    offset += t.dim(a);
  }
}

}  // namespace npukit
