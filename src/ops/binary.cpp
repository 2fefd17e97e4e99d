#include "npukit/ops/binary.hpp"

#include <algorithm>

#include "npukit/error.hpp"
#include "ops/cpu/elementwise_fast.hpp"
#include "ops/elementwise_blocks.hpp"

namespace npukit {

const char* binary_op_name(BinaryOp op) {
  return op == BinaryOp::add ? "add" : "mul";
}

Shape broadcast_shape(const Shape& a, const Shape& b, const char* function) {
  check(a.size() <= kMaxRank, function, "a", "shape " + shape_text(a), "rank 0 to 8");
  check(b.size() <= kMaxRank, function, "b", "shape " + shape_text(b), "rank 0 to 8");
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    check(da == db || da == 1 || db == 1, function, "b", "shape " + shape_text(b),
          "a shape that broadcasts with a " + shape_text(a) + " (equal axes or 1)");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

TensorView broadcast_view(const TensorView& t, const Shape& shape, const char* function,
                          const char* parameter) {
  // The message is built only on failure: this runs on every call of a
  // broadcasting operator (a Gemm's bias: ~3 us per call when built eagerly).
  const auto refuse = [&] {
    fail(function, parameter, "shape " + shape_text(t.shape()),
         "a shape that broadcasts to " + shape_text(shape));
  };
  const size_t rank = shape.size();
  if (static_cast<size_t>(t.rank()) > rank) refuse();
  Shape st(rank, 0);
  const size_t off = rank - static_cast<size_t>(t.rank());
  for (size_t i = 0; i < static_cast<size_t>(t.rank()); ++i) {
    const int64_t d = t.dim(static_cast<int>(i));
    if (d != shape[off + i] && d != 1) refuse();
    st[off + i] = d == 1 ? 0 : t.stride(static_cast<int>(i));
  }
  return TensorView(t.raw(), t.dtype(), shape, st, function);
}

void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& y) {
  constexpr const char* fn = "npukit::binary";
  a.expect_dtype(DType::f32, fn, "a.dtype");
  b.expect_dtype(DType::f32, fn, "b.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  const Shape out = broadcast_shape(a.shape(), b.shape(), fn);
  y.expect_shape(out, fn, "y");
  cpu::EwProblem e;
  e.op = op == BinaryOp::add ? cpu::EwOp::add : cpu::EwOp::mul;
  for_each_4d_block({broadcast_view(a, out, fn, "a"), broadcast_view(b, out, fn, "b"), y},
                    [&e](const std::vector<TensorView>& v) {
                      e.a = v[0];
                      e.b = v[1];
                      e.y = v[2];
                      cpu::binary_kernels().run(e);
                    });
}

}  // namespace npukit
