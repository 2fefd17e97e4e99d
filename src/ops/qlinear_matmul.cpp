// QLinearMatMul / MatMulInteger: numpy.matmul broadcasting over 2-D integer
// products, validation and profiles.
#include <algorithm>

#include "npukit/error.hpp"
#include "npukit/ops/matmul.hpp"
#include "npukit/ops/quantized.hpp"
#include "ops/cpu/qconv_problem.hpp"
#include "ops/cpu/x8-qmatmul.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace {

// Views a (rank 1-4) as 4-D (B0, B1, rows, cols): a 1-D left operand is a row,
// a 1-D right operand a column; missing batch axes have stride 0.
void as4(const TensorView& t, bool is_left, int64_t sh[4], int64_t st[4]) {
  expect_kernel_rank(t, "npukit::qlinear_matmul", is_left ? "a" : "b");
  if (t.rank() == 1) {
    const int64_t s0[4] = {1, 1, is_left ? 1 : t.dim(0), is_left ? t.dim(0) : 1};
    const int64_t t0[4] = {0, 0, is_left ? 0 : t.stride(0), is_left ? t.stride(0) : 0};
    std::copy(s0, s0 + 4, sh);
    std::copy(t0, t0 + 4, st);
    return;
  }
  const int off = 4 - t.rank();
  for (int i = 0; i < 4; ++i) {
    sh[i] = i < off ? 1 : t.dim(i - off);
    st[i] = i < off ? 0 : t.stride(i - off);
  }
}

// Calls f(a2, b2, y_base_offset, y_row_stride, y_col_stride) for every batch slice.
template <class F>
void for_each_slice(const TensorView& a, const TensorView& b, F f) {
  int64_t ash[4], ast[4], bsh[4], bst[4];
  as4(a, true, ash, ast);
  as4(b, false, bsh, bst);
  const int64_t M = ash[2], N = bsh[3];
  const int64_t B0 = std::max(ash[0], bsh[0]), B1 = std::max(ash[1], bsh[1]);
  // y as (B0, B1, M, N) with contiguous strides (callers pass contiguous y).
  for (int64_t i = 0; i < B0; ++i)
    for (int64_t j = 0; j < B1; ++j) {
      const char* ap =
          static_cast<const char*>(a.raw()) +
          dtype_size(a.dtype()) * ((ash[0] == 1 ? 0 : i * ast[0]) + (ash[1] == 1 ? 0 : j * ast[1]));
      const char* bp =
          static_cast<const char*>(b.raw()) +
          dtype_size(b.dtype()) * ((bsh[0] == 1 ? 0 : i * bst[0]) + (bsh[1] == 1 ? 0 : j * bst[1]));
      TensorView av(const_cast<char*>(ap), a.dtype(), {M, ash[3]}, {ast[2], ast[3]});
      TensorView bv(const_cast<char*>(bp), b.dtype(), {bsh[2], N}, {bst[2], bst[3]});
      f(av, bv, ((i * B1) + j) * M * N, N);
    }
}

int64_t inner_size(const TensorView& a) {
  return a.dim(a.rank() - 1);
}

void check_operands(const TensorView& a, const TensorView& b, const char* fn) {
  detail::expect_code_dtype(a, fn, "a.dtype");
  detail::expect_code_dtype(b, fn, "b.dtype");
  // K products of magnitude <= 255*255 per output (comment at kMaxInt32Products).
  check_range(fn, "K", inner_size(a), 1, kMaxInt32Products);
}

void check_b_zero_points(const std::vector<int32_t>& zp, const TensorView& b, const char* fn) {
  const int64_t cols = b.rank() == 1 ? 1 : b.dim(b.rank() - 1);
  check(zp.size() <= 1 || static_cast<int64_t>(zp.size()) == cols, fn, "b_zero_point",
        std::to_string(zp.size()) + " values", "1 or one per column of b, " + std::to_string(cols));
  for (int32_t z : zp) detail::check_zero_point(z, b.dtype(), fn, "b_zero_point");
}

}  // namespace

void apply_profile(QLinearMatMulParams& p, Profile profile) {
  switch (semantics_base(profile)) {
    case Profile::onnxruntime:
    case Profile::pytorch:
      p.rounding = Rounding::half_to_even;
      p.accumulation = profile_accumulation(profile);
      return;
    default:
      fail("npukit::qlinear_matmul", "profile", profile_name(profile), "onnxruntime or pytorch");
  }
}

void apply_profile(MatMulIntegerParams& p, Profile profile) {
  switch (semantics_base(profile)) {
    case Profile::onnxruntime:
    case Profile::pytorch:
      p.accumulation = profile_accumulation(profile);
      return;
    default:
      fail("npukit::matmul_integer", "profile", profile_name(profile), "onnxruntime or pytorch");
  }
}

void qlinear_matmul(const TensorView& a, const TensorView& b, const TensorView& y,
                    const QLinearMatMulParams& p) {
  qlinear_matmul(a, b, y, p, nullptr);
}

std::shared_ptr<const QConvPackedWeights> pack_qlinear_matmul_weights(const TensorView& b,
                                                                      const QLinearMatMulParams& p,
                                                                      DType a_dtype) {
  if (b.rank() != 2) return nullptr;
  return pack_qconv(qmatmul_b_as_weights(b), p.b, 1, qmatmul_uses_pairs(p.accumulation, a_dtype, b),
                    a_dtype);
}

void qlinear_matmul(const TensorView& a, const TensorView& b, const TensorView& y,
                    const QLinearMatMulParams& p, const QConvPackedWeights* packed) {
  constexpr const char* fn = "npukit::qlinear_matmul";
  check_operands(a, b, fn);
  const Shape out = matmul_broadcast_shape(a.shape(), b.shape());
  y.expect_shape(out, fn, "y");
  check(y.dtype() == a.dtype(), fn, "y.dtype", dtype_name(y.dtype()), dtype_name(a.dtype()));
  check(y.is_contiguous(), fn, "y", "a strided view", "a contiguous tensor");
  detail::check_scale(p.a_scale, fn, "a_scale");
  detail::check_scale(p.y_scale, fn, "y_scale");
  detail::check_zero_point(p.a_zero_point, a.dtype(), fn, "a_zero_point");
  detail::check_zero_point(p.y_zero_point, y.dtype(), fn, "y_zero_point");
  const int64_t cols = b.rank() == 1 ? 1 : b.dim(b.rank() - 1);
  check(p.b.scale.size() == 1 || static_cast<int64_t>(p.b.scale.size()) == cols, fn, "b_scale",
        std::to_string(p.b.scale.size()) + " values",
        "1 or one per column of b, " + std::to_string(cols));
  for (float s : p.b.scale) detail::check_scale(s, fn, "b_scale");
  check_b_zero_points(p.b.zero_point, b, fn);
  std::vector<int32_t> bz(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c) bz[static_cast<size_t>(c)] = p.b.zero_point_at(c);
  QMatMulSlice s;
  s.a_zp = p.a_zero_point;
  s.bq.scale = p.b.scale;
  s.bq.zero_point = bz;
  s.a_scale = p.a_scale, s.y_scale = p.y_scale, s.y_zp = p.y_zero_point;
  s.rounding = p.rounding;
  s.accumulation = p.accumulation;
  s.packed = b.rank() == 2 ? packed : nullptr;  // every slice multiplies by the same b
  for_each_slice(a, b, [&](const TensorView& av, const TensorView& bv, int64_t yo, int64_t n) {
    s.a = av, s.b = bv;
    s.y = TensorView(static_cast<char*>(y.raw()) + yo * dtype_size(y.dtype()), y.dtype(),
                     {av.dim(0), bv.dim(1)}, {n, 1});
    qmatmul_kernels().run(s);
  });
}

void matmul_integer(const TensorView& a, const TensorView& b, const TensorView& y,
                    const MatMulIntegerParams& p) {
  constexpr const char* fn = "npukit::matmul_integer";
  check_operands(a, b, fn);
  y.expect_dtype(DType::s32, fn, "y.dtype");
  y.expect_shape(matmul_broadcast_shape(a.shape(), b.shape()), fn, "y");
  check(y.is_contiguous(), fn, "y", "a strided view", "a contiguous tensor");
  detail::check_zero_point(p.a_zero_point, a.dtype(), fn, "a_zero_point");
  check_b_zero_points(p.b_zero_point, b, fn);
  const int64_t cols = b.rank() == 1 ? 1 : b.dim(b.rank() - 1);
  std::vector<int32_t> bz(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c)
    bz[static_cast<size_t>(c)] = p.b_zero_point.empty() ? 0
                                 : p.b_zero_point.size() == 1
                                     ? p.b_zero_point[0]
                                     : p.b_zero_point[static_cast<size_t>(c)];
  QMatMulSlice s;
  s.a_zp = p.a_zero_point;
  s.bq.zero_point = bz;
  s.requantize = false;
  s.accumulation = p.accumulation;
  int32_t* yp = static_cast<int32_t*>(y.raw());
  for_each_slice(a, b, [&](const TensorView& av, const TensorView& bv, int64_t yo, int64_t n) {
    s.a = av, s.b = bv;
    s.y = TensorView(yp + yo, DType::s32, {av.dim(0), bv.dim(1)}, {n, 1});
    qmatmul_kernels().run(s);
  });
}

}  // namespace npukit
