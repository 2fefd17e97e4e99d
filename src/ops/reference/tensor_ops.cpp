// Loops of the tensor operators (tensor_ops.hpp): one odometer over the
// output's index, elements moved as bytes except where the value matters
// (comparisons, logic, Cast).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"
#include "npukit/ops/tensor_ops.hpp"

namespace npukit {

namespace {

// Calls f(pos) for every index of `shape` in row-major order (once for a scalar).
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  for (int64_t d : shape)
    if (d == 0) return;
  const int r = static_cast<int>(shape.size());
  int64_t pos[kMaxRank] = {};
  while (true) {
    f(static_cast<const int64_t*>(pos));
    int i = r - 1;
    for (; i >= 0; --i) {
      if (++pos[i] < shape[static_cast<size_t>(i)]) break;
      pos[i] = 0;
    }
    if (i < 0) return;
  }
}

int64_t offset_of(const TensorView& v, const int64_t* pos) {
  int64_t o = 0;
  for (int i = 0; i < v.rank(); ++i) o += pos[i] * v.stride(i);
  return o;
}

char* byte_at(const TensorView& v, int64_t offset) {
  return static_cast<char*>(v.raw()) + offset * static_cast<int64_t>(dtype_size(v.dtype()));
}

void expect_same_dtype(const TensorView& a, const TensorView& b, const char* fn,
                       const char* parameter) {
  check(a.dtype() == b.dtype(), fn, parameter, dtype_name(b.dtype()), dtype_name(a.dtype()));
}

// Calls f(T{}) with the C++ type of a dtype (bool for b8: bytes 0 and 1).
template <class F>
void visit(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      return f(float{});
    case DType::s8:
      return f(int8_t{});
    case DType::u8:
      return f(uint8_t{});
    case DType::s16:
      return f(int16_t{});
    case DType::s32:
      return f(int32_t{});
    case DType::s64:
      return f(int64_t{});
    case DType::b8:
      return f(bool{});
  }
}

// x86-64 cvttss2si: truncation, and the "integer indefinite" (the type's
// minimum) for NaN and values outside the range.
template <class I>
I truncate_like_x86(float x) {
  constexpr float lo = -static_cast<float>(std::numeric_limits<I>::max()) - 1.0f;  // -2^(n-1)
  if (!(x >= lo && x < -lo)) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}

template <class D, class S>
D convert(S s) {
  if constexpr (std::is_same_v<D, bool>) {
    return s != S{};
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float>) {
    return s;
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, int64_t>) {
    return truncate_like_x86<int64_t>(s);
  } else if constexpr (std::is_same_v<S, float>) {
    return static_cast<D>(truncate_like_x86<int32_t>(s));  // low bits of the int32
  } else {
    return static_cast<D>(s);  // integers: low bits; to float: nearest even
  }
}

}  // namespace

void gather(const TensorView& x, const TensorView& indices, const TensorView& y, int64_t axis) {
  constexpr const char* fn = "npukit::gather";
  y.expect_shape(gather_shape(x.shape(), indices.shape(), axis), fn, "y");
  expect_same_dtype(x, y, fn, "y.dtype");
  check(indices.dtype() == DType::s64 || indices.dtype() == DType::s32, fn, "indices.dtype",
        dtype_name(indices.dtype()), "s64 or s32");
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  const int q = indices.rank();
  const int64_t n = x.dim(a);
  const size_t es = dtype_size(x.dtype());
  for_each_index(y.shape(), [&](const int64_t* pos) {
    int64_t io = 0;
    for (int i = 0; i < q; ++i) io += pos[a + i] * indices.stride(i);
    int64_t k = indices.dtype() == DType::s64 ? static_cast<const int64_t*>(indices.raw())[io]
                                              : static_cast<const int32_t*>(indices.raw())[io];
    if (k < -n || k >= n) check_range(fn, "indices", k, -n, n - 1);
    if (k < 0) k += n;
    int64_t xo = k * x.stride(a);
    for (int i = 0; i < a; ++i) xo += pos[i] * x.stride(i);
    for (int i = a + 1; i < x.rank(); ++i) xo += pos[i - 1 + q] * x.stride(i);
    std::memcpy(byte_at(y, offset_of(y, pos)), byte_at(x, xo), es);
  });
}

void slice(const TensorView& x, const TensorView& y, const std::vector<SliceAxis>& axes) {
  constexpr const char* fn = "npukit::slice";
  check(axes.size() == static_cast<size_t>(x.rank()), fn, "axes",
        std::to_string(axes.size()) + " axes", "one per axis of x");
  y.expect_shape(slice_shape(axes), fn, "y");
  // A strided view of x: first element, steps (negative walks backward) and sizes.
  int64_t first = 0;
  Shape strides;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t st = x.stride(static_cast<int>(i));
    if (axes[i].size > 0) first += axes[i].start * st;
    strides.push_back(axes[i].step * st);
  }
  if (y.numel() == 0) return;
  copy(TensorView(byte_at(x, first), x.dtype(), slice_shape(axes), strides, fn), y);
}

void pad(const TensorView& x, const TensorView& value, const TensorView& y,
         const std::vector<int64_t>& pads, PadMode mode) {
  constexpr const char* fn = "npukit::pad";
  y.expect_shape(pad_shape(x.shape(), pads, mode), fn, "y");
  expect_same_dtype(x, y, fn, "y.dtype");
  const size_t es = dtype_size(x.dtype());
  char fill_bytes[8] = {};
  if (!value.empty()) {
    expect_same_dtype(x, value, fn, "value.dtype");
    check(value.numel() == 1, fn, "value", "shape " + shape_text(value.shape()), "one element");
    std::memcpy(fill_bytes, value.raw(), es);
  }
  // Negative pads crop: per axis, the kept range [first, first + extent) of x
  // and the output position where it starts.
  const int r = x.rank();
  std::vector<int64_t> first(static_cast<size_t>(r)), extent(first), lead(first);
  for (int i = 0; i < r; ++i) {
    const auto u = static_cast<size_t>(i);
    const int64_t b = pads[u], e = pads[u + static_cast<size_t>(r)];
    first[u] = std::max<int64_t>(-b, 0);
    extent[u] = x.dim(i) - first[u] - std::max<int64_t>(-e, 0);
    lead[u] = std::max<int64_t>(b, 0);
  }
  for_each_index(y.shape(), [&](const int64_t* pos) {
    int64_t xo = 0;
    bool inside = true;
    for (int i = 0; i < r; ++i) {
      const auto u = static_cast<size_t>(i);
      const int64_t d = extent[u];
      int64_t k = pos[i] - lead[u];
      if (k < 0 || k >= d) {
        switch (mode) {
          case PadMode::constant:
            inside = false;
            break;
          case PadMode::edge:
            k = k < 0 ? 0 : d - 1;
            break;
          case PadMode::reflect:
            k = k < 0 ? -k : 2 * (d - 1) - k;
            break;
          case PadMode::wrap:
            k = ((k % d) + d) % d;
            break;
        }
      }
      xo += (first[u] + k) * x.stride(i);
    }
    char* out = byte_at(y, offset_of(y, pos));
    std::memcpy(out, inside ? byte_at(x, xo) : fill_bytes, es);
  });
}

void expand(const TensorView& x, const TensorView& y) {
  constexpr const char* fn = "npukit::expand";
  expect_same_dtype(x, y, fn, "y.dtype");
  copy(broadcast_view(x, y.shape(), fn, "x"), y);
}

void fill(const TensorView& y, const TensorView& value) {
  constexpr const char* fn = "npukit::fill";
  expect_same_dtype(y, value, fn, "value.dtype");
  check(value.numel() == 1, fn, "value", "shape " + shape_text(value.shape()), "one element");
  const size_t es = dtype_size(y.dtype());
  for_each_index(y.shape(), [&](const int64_t* pos) {
    std::memcpy(byte_at(y, offset_of(y, pos)), value.raw(), es);
  });
}

void where(const TensorView& cond, const TensorView& a, const TensorView& b, const TensorView& y) {
  constexpr const char* fn = "npukit::where";
  check(cond.dtype() == DType::b8, fn, "cond.dtype", dtype_name(cond.dtype()), "b8");
  expect_same_dtype(y, a, fn, "a.dtype");
  expect_same_dtype(y, b, fn, "b.dtype");
  const TensorView c = broadcast_view(cond, y.shape(), fn, "cond");
  const TensorView av = broadcast_view(a, y.shape(), fn, "a");
  const TensorView bv = broadcast_view(b, y.shape(), fn, "b");
  const size_t es = dtype_size(y.dtype());
  const auto* cp = static_cast<const uint8_t*>(c.raw());
  for_each_index(y.shape(), [&](const int64_t* pos) {
    const bool pick_a = cp[offset_of(c, pos)] != 0;
    const TensorView& src = pick_a ? av : bv;
    std::memcpy(byte_at(y, offset_of(y, pos)), byte_at(src, offset_of(src, pos)), es);
  });
}

void compare(CompareOp op, const TensorView& a, const TensorView& b, const TensorView& y) {
  constexpr const char* fn = "npukit::compare";
  expect_same_dtype(a, b, fn, "b.dtype");
  check(y.dtype() == DType::b8, fn, "y.dtype", dtype_name(y.dtype()), "b8");
  const TensorView av = broadcast_view(a, y.shape(), fn, "a");
  const TensorView bv = broadcast_view(b, y.shape(), fn, "b");
  auto* yp = static_cast<uint8_t*>(y.raw());
  visit(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* ap = static_cast<const T*>(av.raw());
    const T* bp = static_cast<const T*>(bv.raw());
    for_each_index(y.shape(), [&](const int64_t* pos) {
      const T u = ap[offset_of(av, pos)], v = bp[offset_of(bv, pos)];
      bool r = false;
      switch (op) {
        case CompareOp::equal:
          r = u == v;
          break;
        case CompareOp::less:
          r = u < v;
          break;
        case CompareOp::greater:
          r = u > v;
          break;
        case CompareOp::less_equal:
          r = u <= v;
          break;
        case CompareOp::greater_equal:
          r = u >= v;
          break;
      }
      yp[offset_of(y, pos)] = r;
    });
  });
}

void logic(LogicOp op, const TensorView& a, const TensorView& b, const TensorView& y) {
  constexpr const char* fn = "npukit::logic";
  for (const TensorView* t : {&a, &b, &y})
    check(t->dtype() == DType::b8, fn, "dtype", dtype_name(t->dtype()), "b8");
  const TensorView av = broadcast_view(a, y.shape(), fn, "a");
  const TensorView bv = broadcast_view(b, y.shape(), fn, "b");
  const auto* ap = static_cast<const uint8_t*>(av.raw());
  const auto* bp = static_cast<const uint8_t*>(bv.raw());
  auto* yp = static_cast<uint8_t*>(y.raw());
  for_each_index(y.shape(), [&](const int64_t* pos) {
    const bool u = ap[offset_of(av, pos)] != 0, v = bp[offset_of(bv, pos)] != 0;
    yp[offset_of(y, pos)] = op == LogicOp::and_ ? (u && v) : op == LogicOp::or_ ? (u || v) : u != v;
  });
}

void logic_not(const TensorView& x, const TensorView& y) {
  constexpr const char* fn = "npukit::logic_not";
  check(x.dtype() == DType::b8 && y.dtype() == DType::b8, fn, "dtype", dtype_name(x.dtype()), "b8");
  y.expect_shape(x.shape(), fn, "y");
  const auto* xp = static_cast<const uint8_t*>(x.raw());
  auto* yp = static_cast<uint8_t*>(y.raw());
  for_each_index(y.shape(),
                 [&](const int64_t* pos) { yp[offset_of(y, pos)] = xp[offset_of(x, pos)] == 0; });
}

void int_arith(IntOp op, const TensorView& a, const TensorView& b, const TensorView& y) {
  constexpr const char* fn = "npukit::int_arith";
  expect_same_dtype(a, b, fn, "b.dtype");
  expect_same_dtype(a, y, fn, "y.dtype");
  check(a.dtype() == DType::s64 || a.dtype() == DType::s32, fn, "a.dtype", dtype_name(a.dtype()),
        "s64 or s32");
  const TensorView av = broadcast_view(a, y.shape(), fn, "a");
  const TensorView bv = broadcast_view(b, y.shape(), fn, "b");
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using U = std::make_unsigned_t<T>;
    const T* ap = static_cast<const T*>(av.raw());
    const T* bp = static_cast<const T*>(bv.raw());
    T* yp = static_cast<T*>(y.raw());
    for_each_index(y.shape(), [&](const int64_t* pos) {
      const T u = ap[offset_of(av, pos)], v = bp[offset_of(bv, pos)];
      T r = 0;
      if ((op == IntOp::div || op == IntOp::mod) && v == 0)
        fail(fn, "b", "a zero divisor", "non-zero divisors");
      switch (op) {
        case IntOp::add:
          r = static_cast<T>(static_cast<U>(u) + static_cast<U>(v));
          break;
        case IntOp::sub:
          r = static_cast<T>(static_cast<U>(u) - static_cast<U>(v));
          break;
        case IntOp::mul:
          r = static_cast<T>(static_cast<U>(u) * static_cast<U>(v));
          break;
        case IntOp::div:  // MIN / -1 wraps to MIN (two's complement)
          r = v == -1 ? static_cast<T>(U{0} - static_cast<U>(u)) : static_cast<T>(u / v);
          break;
        case IntOp::mod: {
          r = v == -1 ? T{0} : static_cast<T>(u % v);
          if (r != 0 && ((r < 0) != (v < 0))) r = static_cast<T>(r + v);
          break;
        }
      }
      yp[offset_of(y, pos)] = r;
    });
  };
  if (a.dtype() == DType::s64)
    run(int64_t{});
  else
    run(int32_t{});
}

namespace {
template <class F>
void visit_range_type(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      return f(float{});
    case DType::s32:
      return f(int32_t{});
    case DType::s64:
      return f(int64_t{});
    default:
      fail("npukit::range", "dtype", dtype_name(t), "f32, s32 or s64");
  }
}
}  // namespace

int64_t range_count(const TensorView& start, const TensorView& limit, const TensorView& delta) {
  constexpr const char* fn = "npukit::range";
  for (const TensorView* t : {&start, &limit, &delta}) {
    check(t->numel() == 1, fn, "inputs", "shape " + shape_text(t->shape()), "scalars");
    expect_same_dtype(start, *t, fn, "dtype");
  }
  int64_t n = 0;
  visit_range_type(start.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T s = *static_cast<const T*>(start.raw()), l = *static_cast<const T*>(limit.raw()),
            d = *static_cast<const T*>(delta.raw());
    check(d != 0, fn, "delta", "0", "a non-zero step");
    // The difference wraps in the integer type, as in ONNX Runtime.
    T diff;
    if constexpr (std::is_integral_v<T>)
      diff = static_cast<T>(static_cast<std::make_unsigned_t<T>>(l) -
                            static_cast<std::make_unsigned_t<T>>(s));
    else
      diff = l - s;
    const double q = std::ceil(1.0 * static_cast<double>(diff) / static_cast<double>(d));
    check(!(q > static_cast<double>(int64_t{1} << 40)), fn, "limit",
          "a range of " + std::to_string(q) + " elements", "at most 2^40 elements");
    n = q > 0 ? static_cast<int64_t>(q) : 0;  // NaN counts 0
  });
  return n;
}

void range(const TensorView& start, const TensorView& delta, const TensorView& y) {
  constexpr const char* fn = "npukit::range";
  expect_same_dtype(start, y, fn, "y.dtype");
  check(y.rank() == 1, fn, "y", "shape " + shape_text(y.shape()), "a 1-D tensor");
  visit_range_type(start.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T v = *static_cast<const T*>(start.raw());
    const T d = *static_cast<const T*>(delta.raw());
    T* yp = static_cast<T*>(y.raw());
    for (int64_t i = 0; i < y.dim(0); ++i) {
      yp[i * y.stride(0)] = v;
      if constexpr (std::is_integral_v<T>)
        v = static_cast<T>(static_cast<std::make_unsigned_t<T>>(v) +
                           static_cast<std::make_unsigned_t<T>>(d));
      else
        v = v + d;
    }
  });
}

void scatter_nd(const TensorView& data, const TensorView& indices, const TensorView& updates,
                const TensorView& y) {
  constexpr const char* fn = "npukit::scatter_nd";
  expect_same_dtype(data, y, fn, "y.dtype");
  expect_same_dtype(data, updates, fn, "updates.dtype");
  check(indices.dtype() == DType::s64, fn, "indices.dtype", dtype_name(indices.dtype()), "s64");
  y.expect_shape(data.shape(), fn, "y");
  const int q = indices.rank();
  check(q >= 1, fn, "indices", "a scalar", "rank 1 or more");
  const int64_t k = indices.dim(q - 1);
  check(k >= 1 && k <= data.rank(), fn, "indices", "shape " + shape_text(indices.shape()),
        "a last axis from 1 to the rank of data " + shape_text(data.shape()));
  Shape want(indices.shape().begin(), indices.shape().end() - 1);
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  updates.expect_shape(want, fn, "updates");
  copy(data, y);
  // One slice per index tuple: the trailing axes of data from k on.
  const Shape tuples(indices.shape().begin(), indices.shape().end() - 1);
  const Shape tail(data.shape().begin() + k, data.shape().end());
  Shape tail_y, tail_u;
  for (int i = static_cast<int>(k); i < data.rank(); ++i) tail_y.push_back(y.stride(i));
  for (int i = q - 1; i < updates.rank(); ++i) tail_u.push_back(updates.stride(i));
  const auto* ip = static_cast<const int64_t*>(indices.raw());
  for_each_index(tuples, [&](const int64_t* pos) {
    int64_t io = 0, uo = 0, yo = 0;
    for (int i = 0; i + 1 < q; ++i) {
      io += pos[i] * indices.stride(i);
      uo += pos[i] * updates.stride(i);
    }
    for (int64_t j = 0; j < k; ++j) {
      const int64_t n = data.dim(static_cast<int>(j));
      int64_t v = ip[io + j * indices.stride(q - 1)];
      if (v < -n || v >= n) check_range(fn, "indices", v, -n, n - 1);
      if (v < 0) v += n;
      yo += v * y.stride(static_cast<int>(j));
    }
    copy(TensorView(byte_at(updates, uo), updates.dtype(), tail, tail_u, fn),
         TensorView(byte_at(y, yo), y.dtype(), tail, tail_y, fn));
  });
}

void cast(const TensorView& x, const TensorView& y) {
  constexpr const char* fn = "npukit::cast";
  y.expect_shape(x.shape(), fn, "y");
  visit(x.dtype(), [&](auto stag) {
    using S = decltype(stag);
    visit(y.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      const S* xp = static_cast<const S*>(x.raw());
      D* yp = static_cast<D*>(y.raw());
      for_each_index(y.shape(), [&](const int64_t* pos) {
        yp[offset_of(y, pos)] = convert<D>(xp[offset_of(x, pos)]);
      });
    });
  });
}

}  // namespace npukit
