#include "npukit/ops/gemm.hpp"

#include <climits>
#include <string>

#include "npukit/error.hpp"
#include "npukit/ops/binary.hpp"
#include "ops/cpu/gemm_fast.hpp"
#include "ops/gemm_call.hpp"
#include "ops/same_view.hpp"

namespace npukit {

Shape gemm_output_shape(const Shape& a, const Shape& b, const GemmParams& p) {
  // The messages are built only on failure: this runs on every call.
  constexpr const char* fn = "npukit::gemm";
  if (a.size() != 2) fail(fn, "a", "shape " + shape_text(a), "a 2-D matrix");
  if (b.size() != 2) fail(fn, "b", "shape " + shape_text(b), "a 2-D matrix");
  const int64_t m = p.trans_a ? a[1] : a[0], k = p.trans_a ? a[0] : a[1];
  const int64_t kb = p.trans_b ? b[1] : b[0], n = p.trans_b ? b[0] : b[1];
  if (k != kb)
    fail(fn, "b", "shape " + shape_text(b),
         "inner size " + std::to_string(k) + " to match a " + shape_text(a) +
             (p.trans_b ? " (b transposed)" : ""));
  return {m, n};
}

cpu::GemmProblem detail::checked_gemm_problem(const TensorView& a, const TensorView& b,
                                              const TensorView& c, const TensorView& y,
                                              const GemmParams& p) {
  constexpr const char* fn = "npukit::gemm";
  a.expect_dtype(DType::f32, fn, "a.dtype");
  b.expect_dtype(DType::f32, fn, "b.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  const Shape out = gemm_output_shape(a.shape(), b.shape(), p);
  y.expect_shape(out, fn, "y");
  auto t = [](const TensorView& v, bool trans) {
    return trans ? TensorView(v.raw(), v.dtype(), {v.dim(1), v.dim(0)}, {v.stride(1), v.stride(0)})
                 : v;
  };
  TensorView cv;
  if (!c.empty()) {
    c.expect_dtype(DType::f32, fn, "c.dtype");
    if (c.rank() > 2) fail(fn, "c", "shape " + shape_text(c.shape()), "rank 0 to 2");
    cv = broadcast_view(c, out, fn, "c");
  }
  if (p.mlas_k_block != 0) {
    check_range(fn, "mlas_k_block", p.mlas_k_block, 1, INT32_MAX);
    if (p.alpha != 1.0f)
      fail(fn, "alpha", std::to_string(p.alpha),
           "1 with mlas_k_block (MLAS's order is modelled for alpha = 1)");
  }
  return {t(a, p.trans_a), t(b, p.trans_b), cv, y, p.alpha, p.beta, p.mlas_k_block};
}

void gemm(const TensorView& a, const TensorView& b, const TensorView& c, const TensorView& y,
          const GemmParams& p) {
  cpu::gemm_kernels().run(detail::checked_gemm_problem(a, b, c, y, p));
}

GemmCall::GemmCall(const GemmParams& p) : p_(p) {}

void GemmCall::operator()(const TensorView& a, const TensorView& b, const TensorView& c,
                          const TensorView& y) {
  const bool same = variant_ != nullptr && impl() == impl_ && max_isa() == isa_ &&
                    same_view(a, a_) && same_view(b, b_) && same_view(c, c_) && same_view(y, y_);
  if (!same) {
    variant_ = nullptr;
    problem_ = detail::checked_gemm_problem(a, b, c, y, p_);
    a_ = a;
    b_ = b;
    c_ = c;
    y_ = y;
    impl_ = impl();
    isa_ = max_isa();
    variant_ = &cpu::gemm_kernels().choose(problem_);
  }
  variant_->run(problem_);
}

const char* GemmCall::kept_kernel() const {
  return variant_ != nullptr ? variant_->name : nullptr;
}

}  // namespace npukit
