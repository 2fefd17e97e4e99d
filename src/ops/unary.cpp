#include "npukit/ops/unary.hpp"

#include "npukit/error.hpp"
#include "ops/cpu/unary_kernels.hpp"
#include "ops/elementwise_blocks.hpp"

namespace npukit {

const char* unary_op_name(UnaryOp op) {
  static const char* names[] = {"sigmoid", "hard_sigmoid", "hard_swish", "tanh",      "leaky_relu",
                                "erf",     "gelu",         "gelu_tanh",  "sqrt",      "exp",
                                "log",     "neg",          "abs",        "reciprocal"};
  const auto i = static_cast<size_t>(op);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "invalid";
}

void unary(UnaryOp op, const TensorView& x, const TensorView& y, const UnaryParams& p) {
  constexpr const char* fn = "npukit::unary";
  check(static_cast<size_t>(op) <= static_cast<size_t>(UnaryOp::reciprocal), fn, "op",
        std::to_string(static_cast<int>(op)), "a UnaryOp value");
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  check(x.empty() == y.empty() || x.numel() == 0, fn, "x", "a view without data",
        "views with data");
  if (x.numel() == 0) return;
  for_each_4d_block({x, y}, [op, &p](const std::vector<TensorView>& v) {
    cpu::UnaryProblem u{op, p, v[0], v[1]};
    cpu::unary_kernels().run(u);
  });
}

}  // namespace npukit
