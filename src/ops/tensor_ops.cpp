// Shape functions and validation of the tensor operators (tensor_ops.hpp):
// ONNX's rules for Gather, Slice, Pad and broadcasting, checked once when a
// node is planned; the loops are in reference/tensor_ops.cpp.
#include "npukit/ops/tensor_ops.hpp"

#include <algorithm>
#include <limits>

#include "npukit/error.hpp"

namespace npukit {

Shape broadcast_shapes(const std::vector<Shape>& shapes, const char* function) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t d = s[i];
      check(d == o || d == 1 || o == 1, function, ("input " + std::to_string(k)).c_str(),
            "shape " + shape_text(s), "a shape that broadcasts with the others (equal axes or 1)");
      if (o == 1) o = d;
    }
  }
  return out;
}

Shape gather_shape(const Shape& x, const Shape& indices, int64_t axis) {
  constexpr const char* fn = "npukit::gather";
  const auto rank = static_cast<int64_t>(x.size());
  check(rank >= 1, fn, "x", "a scalar", "rank 1 or more");
  check_range(fn, "axis", axis, -rank, rank - 1);
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  Shape out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.end());
  check(out.size() <= static_cast<size_t>(kMaxRank), fn, "indices", "shape " + shape_text(indices),
        "a result of rank up to 8 (x " + shape_text(x) + ")");
  return out;
}

std::vector<SliceAxis> slice_axes(const Shape& x, const std::vector<int64_t>& starts,
                                  const std::vector<int64_t>& ends,
                                  const std::vector<int64_t>& axes_in,
                                  const std::vector<int64_t>& steps) {
  constexpr const char* fn = "npukit::slice";
  const auto rank = static_cast<int64_t>(x.size());
  const size_t n = starts.size();
  check(ends.size() == n, fn, "ends", shape_text(ends),
        std::to_string(n) + " values (one per start)");
  std::vector<int64_t> axes = axes_in;
  if (axes.empty())
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  check(axes.size() == n, fn, "axes", shape_text(axes_in),
        std::to_string(n) + " values (one per start)");
  check(steps.empty() || steps.size() == n, fn, "steps", shape_text(steps),
        std::to_string(n) + " values (one per start)");
  std::vector<SliceAxis> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = {0, 1, x[i]};
  std::vector<bool> seen(x.size(), false);
  for (size_t k = 0; k < n; ++k) {
    int64_t a = axes[k];
    check_range(fn, "axes", a, -rank, rank - 1);
    if (a < 0) a += rank;
    const auto ai = static_cast<size_t>(a);
    check(!seen[ai], fn, "axes", shape_text(axes_in), "distinct axes");
    seen[ai] = true;
    const int64_t dim = x[ai];
    const int64_t step = steps.empty() ? 1 : steps[k];
    check(step != 0, fn, "steps", shape_text(steps), "non-zero steps");
    // ONNX: negative positions count from the end, then clamp to the axis
    // ([0, dim] forward, [-1, dim - 1] backward). Adding dim to a negative
    // int64 cannot overflow.
    int64_t start = starts[k], end = ends[k];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    // ONNX Runtime reads INT32_MAX and INT64_MAX ends as "to the end" in either direction.
    if (ends[k] == std::numeric_limits<int32_t>::max() ||
        ends[k] == std::numeric_limits<int64_t>::max())
      end = step < 0 ? -1 : dim;
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);  // dim 0: start -1, size 0
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // step == INT64_MIN cannot be negated: one element at most.
      size = start > end
                 ? (step == std::numeric_limits<int64_t>::min() ? 1 : (start - end - 1) / -step + 1)
                 : 0;
    }
    out[ai] = {start, step, size};
  }
  return out;
}

Shape slice_shape(const std::vector<SliceAxis>& axes) {
  Shape out;
  for (const SliceAxis& a : axes) out.push_back(a.size);
  return out;
}

PadMode pad_mode_from_name(const std::string& name, const char* function) {
  if (name == "constant") return PadMode::constant;
  if (name == "reflect") return PadMode::reflect;
  if (name == "edge") return PadMode::edge;
  if (name == "wrap") return PadMode::wrap;
  fail(function, "mode", "'" + name + "'", "constant, reflect, edge or wrap");
}

Shape pad_shape(const Shape& x, const std::vector<int64_t>& pads, PadMode mode) {
  constexpr const char* fn = "npukit::pad";
  const size_t r = x.size();
  check(pads.size() == 2 * r, fn, "pads", shape_text(pads),
        std::to_string(2 * r) + " values (begin and end per axis of x " + shape_text(x) + ")");
  Shape out(r);
  const bool empty = shape_numel(x) == 0;
  for (size_t i = 0; i < r; ++i) {
    const int64_t b = pads[i], e = pads[i + r], d = x[i];
    int64_t o = 0;
    check(!__builtin_add_overflow(d, b, &o) && !__builtin_add_overflow(o, e, &o) && o >= 0, fn,
          "pads", shape_text(pads),
          "pads that leave axis " + std::to_string(i) + " (size " + std::to_string(d) +
              ") a size >= 0");
    out[i] = o;
    if (mode == PadMode::constant) continue;
    // Negative pads crop first (ONNX Runtime); the mode then repeats elements
    // of the cropped extent, which must hold some (on every axis, as ORT).
    const int64_t extent = o - std::max<int64_t>(b, 0) - std::max<int64_t>(e, 0);
    const std::string axis = " (axis " + std::to_string(i) + ", size " + std::to_string(d) +
                             " after cropping " + std::to_string(extent) + ")";
    if (empty) {
      check(d > 0 || (b <= 0 && e <= 0), fn, "pads", shape_text(pads),
            "no padding of an empty axis in a non-constant mode" + axis);
      continue;
    }
    check(extent > 0, fn, "pads", shape_text(pads),
          "pads that leave every axis an element in a non-constant mode" + axis);
    if (mode == PadMode::reflect && (b > 0 || e > 0))
      check(extent >= 2 && b < extent && e < extent, fn, "pads", shape_text(pads),
            "reflect pads below the cropped axis size, which must be 2 or more" + axis);
    // ONNX Runtime's wrap with a crop does not repeat the cropped extent (its
    // rule is not established here): refused rather than guessed.
    if (mode == PadMode::wrap)
      check(b >= 0 && e >= 0 && b <= d && e <= d, fn, "pads", shape_text(pads),
            "wrap pads from 0 to the axis size" + axis);
  }
  return out;
}

}  // namespace npukit
