// Einsum, for the two batched matrix products attention layers export
// (torchvision's maxvit: "BGHID,BGHJD->BGHIJ" and "BGHIJ,BGHJD->BGHID"):
// '<batch>ij,<batch>jk-><batch>ik' and '<batch>id,<batch>jd-><batch>ij', the
// same batch letters in the same order everywhere and equal batch sizes. They
// run as one fp32 matrix product per batch (src/ops/matmul.cpp); other
// equations are refused naming the forms accepted.
#include <algorithm>
#include <cctype>
#include <optional>

#include "npukit/error.hpp"
#include "npukit/ops/matmul.hpp"
#include "onnx/attributes.hpp"
#include "onnx/math_planners.hpp"

namespace npukit::onnx {

namespace {

constexpr const char* kForms =
    "a batched matrix product '<batch>ij,<batch>jk-><batch>ik' or '<batch>id,<batch>jd->"
    "<batch>ij' (same batch letters in the same order)";

struct EinsumForm {
  bool transpose_b = false;  // '<batch>id,<batch>jd-><batch>ij'
  size_t batch = 0;          // number of batch letters
};

std::optional<EinsumForm> parse(std::string eq) {
  eq.erase(std::remove_if(eq.begin(), eq.end(), [](unsigned char ch) { return std::isspace(ch); }),
           eq.end());
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow)
    return std::nullopt;
  const std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1),
                    o = eq.substr(arrow + 2);
  const size_t r = a.size();
  if (r < 2 || b.size() != r || o.size() != r) return std::nullopt;
  for (const std::string* t : {&a, &b, &o})
    for (char ch : *t)
      if (!std::isalpha(static_cast<unsigned char>(ch)) ||
          std::count(t->begin(), t->end(), ch) != 1)
        return std::nullopt;
  const std::string batch = a.substr(0, r - 2);
  if (b.substr(0, r - 2) != batch || o.substr(0, r - 2) != batch) return std::nullopt;
  const char i = a[r - 2], x = a[r - 1], y = b[r - 2], z = b[r - 1], p = o[r - 2], q = o[r - 1];
  for (char ch : {i, x, y, z, p, q})
    if (batch.find(ch) != std::string::npos) return std::nullopt;
  if (x == y && p == i && q == z && i != z && i != x && x != z) return EinsumForm{false, r - 2};
  if (x == z && p == i && q == y && i != y && i != x && x != y) return EinsumForm{true, r - 2};
  return std::nullopt;
}

}  // namespace

NodePlan plan_einsum(const PlanContext& c) {
  expect_onnxruntime_profile(c);
  expect_attrs(c.node, {"equation"});
  const std::string eq = attr_string(c.node, "equation", "");
  check(c.in.size() == 2, "Einsum", "inputs", std::to_string(c.in.size()),
        "2 (" + std::string(kForms) + ")");
  const auto form = parse(eq);
  check(form.has_value(), "Einsum", "equation", "'" + eq + "'", kForms);
  const Operand& a = operand(c, 0, {Elem::f32});
  const Operand& b = operand(c, 1, {Elem::f32});
  const size_t nb = form->batch;
  check(a.shape.size() == nb + 2 && b.shape.size() == nb + 2, "Einsum", "inputs",
        "shapes " + shape_text(a.shape) + " and " + shape_text(b.shape),
        "ranks matching the equation '" + eq + "'");
  int64_t batch = 1;
  for (size_t k = 0; k < nb; ++k) {
    check(a.shape[k] == b.shape[k], "Einsum", "inputs",
          "shapes " + shape_text(a.shape) + " and " + shape_text(b.shape),
          "equal batch sizes (no broadcasting)");
    batch *= a.shape[k];
  }
  const int64_t I = a.shape[nb], K = a.shape[nb + 1];
  const int64_t N = form->transpose_b ? b.shape[nb] : b.shape[nb + 1];
  const int64_t Kb = form->transpose_b ? b.shape[nb + 1] : b.shape[nb];
  check(Kb == K, "Einsum", "inputs",
        "shapes " + shape_text(a.shape) + " and " + shape_text(b.shape),
        "a contracted axis of one size in both ('" + eq + "')");
  Shape y(a.shape.begin(), a.shape.begin() + static_cast<std::ptrdiff_t>(nb));
  y.push_back(I);
  y.push_back(N);
  const bool tb = form->transpose_b;
  return {
      {make_operand(Elem::f32, y)}, [=](const auto& in, const auto& out) {
        // The runner's buffers are contiguous: batch axes merge into one.
        const TensorView a3 = TensorView::contiguous(in[0].raw(), DType::f32, {batch, I, K});
        const TensorView b3 = tb ? TensorView(in[1].raw(), DType::f32, {batch, K, N}, {N * K, 1, K})
                                 : TensorView::contiguous(in[1].raw(), DType::f32, {batch, K, N});
        matmul_broadcast(a3, b3, TensorView::contiguous(out[0].raw(), DType::f32, {batch, I, N}));
      }};
}

}  // namespace npukit::onnx
