#include "npukit/ops/matmul.hpp"

#include <algorithm>

#include "npukit/error.hpp"
#include "ops/fp32_product_profile.hpp"

namespace npukit {

void matmul(const TensorView& a, const TensorView& b, const TensorView& bias, const TensorView& y,
            const MatmulParams& p) {
  constexpr const char* fn = "npukit::matmul";
  a.expect_dtype(DType::f32, fn, "a.dtype");
  b.expect_dtype(DType::f32, fn, "b.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  a.expect_rank(2, fn, "a");
  b.expect_rank(2, fn, "b");
  check_range(fn, "a.rows", a.dim(0), 1, INT32_MAX);
  check_range(fn, "a.cols", a.dim(1), 1, INT32_MAX);
  check_range(fn, "b.cols", b.dim(1), 1, INT32_MAX);
  check(b.dim(0) == a.dim(1), fn, "b", "shape " + shape_text(b.shape()),
        "b.rows = a.cols = " + std::to_string(a.dim(1)));
  y.expect_shape({a.dim(0), b.dim(1)}, fn, "y");
  if (mlas_nchwc_block(p.accumulation))
    fail(fn, "accumulation", fp32_accumulation_name(p.accumulation),
         "sequential or interleaved (mlas_nchwc is a convolution order)");
  const float* bp = nullptr;
  int64_t bs = 0;
  if (p.has_bias) {
    bias.expect_dtype(DType::f32, fn, "bias.dtype");
    const int64_t n = b.dim(1);
    const bool ok = (bias.rank() == 1 && bias.dim(0) == n) ||
                    (bias.rank() == 2 && bias.dim(0) == 1 && bias.dim(1) == n);
    check(ok, fn, "bias", "shape " + shape_text(bias.shape()),
          "shape [" + std::to_string(n) + "] or [1, " + std::to_string(n) + "]");
    bp = static_cast<const float*>(bias.raw());
    bs = bias.stride(bias.rank() - 1);
  }
  if (!cpu::matmul_f32(a, b, bp, bs, y, p)) ref::matmul_f32(a, b, bp, bs, y, p);
}

void apply_profile(MatmulParams& p, Profile profile) {
  detail::apply_fp32_product_profile(p, profile, "onnxruntime, pytorch or bm1684 for fp32 matmul");
}

Shape matmul_broadcast_shape(const Shape& a, const Shape& b) {
  constexpr const char* fn = "npukit::matmul_broadcast";
  check(!a.empty() && a.size() <= 4, fn, "a", "shape " + shape_text(a), "rank 1 to 4");
  check(!b.empty() && b.size() <= 4, fn, "b", "shape " + shape_text(b), "rank 1 to 4");
  for (int64_t d : a) check(d >= 1, fn, "a", "shape " + shape_text(a), "sizes of at least 1");
  for (int64_t d : b) check(d >= 1, fn, "b", "shape " + shape_text(b), "sizes of at least 1");
  Shape A = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape B = b.size() == 1 ? Shape{b[0], 1} : b;
  check(A[A.size() - 1] == B[B.size() - 2], fn, "b", "shape " + shape_text(b),
        "inner size " + std::to_string(A.back()) + " to match a " + shape_text(a));
  const size_t batch = std::max(A.size(), B.size()) - 2;
  Shape out(batch);
  for (size_t i = 0; i < batch; ++i) {
    const int64_t da = i + A.size() >= batch + 2 ? A[i + A.size() - batch - 2] : 1;
    const int64_t db = i + B.size() >= batch + 2 ? B[i + B.size() - batch - 2] : 1;
    check(da == db || da == 1 || db == 1, fn, "b", "shape " + shape_text(b),
          "batch axes that broadcast with a " + shape_text(a));
    out[i] = std::max(da, db);
  }
  if (a.size() > 1) out.push_back(A[A.size() - 2]);
  if (b.size() > 1) out.push_back(B.back());
  check(out.size() <= 4, fn, "result", "shape " + shape_text(out), "rank up to 4");
  return out;
}

void matmul_broadcast(const TensorView& a, const TensorView& b, const TensorView& y) {
  constexpr const char* fn = "npukit::matmul_broadcast";
  a.expect_dtype(DType::f32, fn, "a.dtype");
  b.expect_dtype(DType::f32, fn, "b.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(matmul_broadcast_shape(a.shape(), b.shape()), fn, "y");
  // View both operands as (batch..., rows, cols) padded to 4-D; 1-D operands
  // become a row (a) or a column (b) with stride-0 free axes.
  auto as4 = [](const TensorView& t, bool is_left, Shape& sh, Shape& st) {
    if (t.rank() == 1) {
      sh = is_left ? Shape{1, 1, 1, t.dim(0)} : Shape{1, 1, t.dim(0), 1};
      st = is_left ? Shape{0, 0, 0, t.stride(0)} : Shape{0, 0, t.stride(0), 0};
      return;
    }
    sh.assign(4 - t.rank(), 1);
    st.assign(4 - t.rank(), 0);
    sh.insert(sh.end(), t.shape().begin(), t.shape().end());
    st.insert(st.end(), t.strides().begin(), t.strides().end());
  };
  Shape ash, ast, bsh, bst;
  as4(a, true, ash, ast);
  as4(b, false, bsh, bst);
  const int64_t M = ash[2], N = bsh[3];
  const int64_t B0 = std::max(ash[0], bsh[0]), B1 = std::max(ash[1], bsh[1]);
  // y viewed as (B0, B1, M, N) with the removed axes given stride 0.
  const Shape ys = contiguous_strides({B0, B1, M, N});
  float* yp = static_cast<float*>(y.raw());
  check(y.is_contiguous(), fn, "y", "a strided view", "a contiguous tensor");
  for (int64_t i = 0; i < B0; ++i) {
    for (int64_t j = 0; j < B1; ++j) {
      auto* ap = static_cast<float*>(a.raw()) + (ash[0] == 1 ? 0 : i * ast[0]) +
                 (ash[1] == 1 ? 0 : j * ast[1]);
      auto* bp = static_cast<float*>(b.raw()) + (bsh[0] == 1 ? 0 : i * bst[0]) +
                 (bsh[1] == 1 ? 0 : j * bst[1]);
      TensorView av(ap, DType::f32, {M, ash[3]}, {ast[2], ast[3]});
      TensorView bv(bp, DType::f32, {bsh[2], N}, {bst[2], bst[3]});
      TensorView yv(yp + i * ys[0] + j * ys[1], DType::f32, {M, N}, {ys[2], ys[3]});
      if (!cpu::matmul_f32(av, bv, nullptr, 0, yv, MatmulParams{}))
        ref::matmul_f32(av, bv, nullptr, 0, yv, false);
    }
  }
}

}  // namespace npukit
