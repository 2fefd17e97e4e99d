#include "npukit/ops/fp32_arith.hpp"

#include <cmath>

#include "npukit/error.hpp"
#include "npukit/parallel.hpp"

namespace npukit {

const char* arith_op_name(ArithOp op) {
  switch (op) {
    case ArithOp::add:
      return "add";
    case ArithOp::sub:
      return "sub";
    case ArithOp::mul:
      return "mul";
    case ArithOp::div:
      return "div";
    case ArithOp::max:
      return "max";
    case ArithOp::min:
      return "min";
    case ArithOp::mac:
      return "mac";
  }
  return "invalid";
}

namespace {
void check4(const TensorView& t, const TensorView& y, const char* fn, const char* name) {
  t.expect_dtype(DType::f32, fn, name);
  t.expect_shape(y.shape(), fn, name);
}

template <class F>
void each(const TensorView& y, F f) {
  const int64_t C = y.dim(1), H = y.dim(2), W = y.dim(3);
  parallel_for(y.dim(0) * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) f(n, c, h, w);
  });
}
}  // namespace

void arith_binary(ArithOp op, const TensorView& a, const TensorView& b, const TensorView& y,
                  const ElementwiseParams& p) {
  constexpr const char* fn = "npukit::arith_binary";
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_rank(4, fn, "y");
  check4(a, y, fn, "a");
  check4(b, y, fn, "b");
  const Fp32Arith f{p.flush_denormals};
  each(y, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const float u = f.in(a.at<float>(n, c, h, w)), v = f.in(b.at<float>(n, c, h, w));
    float& out = y.at<float>(n, c, h, w);
    float r;
    switch (op) {
      case ArithOp::add:
        r = u + v;
        break;
      case ArithOp::sub:
        r = u - v;
        break;
      case ArithOp::mul:
        r = u * v;
        break;
      case ArithOp::div:
        r = u / v;
        break;
      case ArithOp::max:
        r = u > v ? u : v;
        break;
      case ArithOp::min:
        r = u < v ? u : v;
        break;
      default:
        r = f.add(out, f.out(u * v));  // mac
    }
    r = f.out(r);
    out = p.result_add && op != ArithOp::mac ? f.add(out, r) : r;
  });
}

void arith_unary(ArithUnaryOp op, const TensorView& x, const TensorView& y,
                 const ElementwiseParams& p) {
  constexpr const char* fn = "npukit::arith_unary";
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_rank(4, fn, "y");
  check4(x, y, fn, "x");
  const Fp32Arith f{p.flush_denormals};
  each(y, [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const float v = f.in(x.at<float>(n, c, h, w));
    float r;
    switch (op) {
      case ArithUnaryOp::neg:
        r = -v;
        break;
      case ArithUnaryOp::reciprocal:
        r = 1.0f / v;
        break;
      case ArithUnaryOp::sqrt:
        r = std::sqrt(v);
        break;
      case ArithUnaryOp::rsqrt:
        r = 1.0f / std::sqrt(v);
        break;
      case ArithUnaryOp::exp:
        r = std::exp(v);
        break;
      case ArithUnaryOp::sigmoid:
        r = 1.0f / (1.0f + std::exp(-v));
        break;
      default:
        r = std::tanh(v);
    }
    y.at<float>(n, c, h, w) = f.out(r);
  });
}

}  // namespace npukit
