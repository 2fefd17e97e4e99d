// The integer matrix product of one 2-D slice (QLinearMatMul, MatMulInteger)
// as a kernel list: the reference (ref::matmul_accumulate*, then the scalar
// requantization), and the convolution GEMM kernels used as a matrix product:
// Y^T (N x M) = B^T (N x K) . A^T (K x M) is a 1x1 convolution of one image
// of K channels and M pixels (A's rows) by N filters (B's columns), so b's
// per-column scales and zero points are the filters' per-channel ones and
// MLAS's pairs run along K in the same order. The transposed result is
// copied into y.
#include <cstring>
#include <vector>

#include "ops/cpu/qconv_problem.hpp"
#include "ops/cpu/x8-qmatmul.hpp"
#include "ops/quantized_common.hpp"

namespace npukit {

namespace {

void reference(const QMatMulSlice& s) {
  const int64_t M = s.a.dim(0), N = s.b.dim(1);
  std::vector<int32_t> bz(static_cast<size_t>(N));
  for (int64_t c = 0; c < N; ++c) bz[static_cast<size_t>(c)] = s.bq.zero_point_at(c);
  Tensor acc(DType::s32, {M, N});
  if (detail::uses_int16_pairs(s.accumulation, s.a.dtype(), s.b.dtype()))
    ref::matmul_accumulate_mlas_pairs(s.a, s.b, acc.view(), s.a_zp, bz);
  else
    ref::matmul_accumulate(s.a, s.b, acc.view(), s.a_zp, bz);
  const detail::CodeRange r = detail::code_range(s.y.dtype());
  const int32_t* ap = acc.data<int32_t>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const int64_t at = i * s.y.stride(0) + j * s.y.stride(1);
      if (!s.requantize) {
        static_cast<int32_t*>(s.y.raw())[at] = ap[i * N + j];
        continue;
      }
      const float m = (s.a_scale * s.bq.scale_at(j)) / s.y_scale;  // as ORT, in fp32
      detail::store_code(s.y.raw(), s.y.dtype(), at,
                         detail::requantize_float(ap[i * N + j], m, s.y_zp, r, s.rounding));
    }
}

void via_qconv(const QMatMulSlice& s) {
  const int64_t M = s.a.dim(0), K = s.a.dim(1), N = s.b.dim(1);
  QConvProblem q;
  q.x = TensorView(s.a.raw(), s.a.dtype(), {1, K, 1, M}, {0, s.a.stride(1), 0, s.a.stride(0)});
  q.w = qmatmul_b_as_weights(s.b);
  q.packed = s.packed;  // run_gemm packs again if it does not match
  Tensor yt(s.y.dtype(), {1, N, 1, M});
  q.y = yt.view();
  q.x_zp = s.a_zp;
  q.wq = s.bq;
  q.wq.axis = 0;
  q.requantize = s.requantize;
  q.x_scale = s.a_scale, q.y_scale = s.y_scale, q.y_zp = s.y_zp;
  q.rounding = s.rounding;
  q.depthwise = K == 1 && N == 1;  // sums of one product: exact under either accumulation
  q.pairs = qmatmul_uses_pairs(s.accumulation, s.a.dtype(), s.b);
  qconv_kernels().run(q);
  const int64_t es = dtype_size(s.y.dtype());
  const char* src = static_cast<const char*>(yt.view().raw());
  char* dst = static_cast<char*>(s.y.raw());
  for (int64_t j = 0; j < N; ++j)
    for (int64_t i = 0; i < M; ++i)
      std::memcpy(dst + es * (i * s.y.stride(0) + j * s.y.stride(1)), src + es * (j * M + i),
                  static_cast<size_t>(es));
}

}  // namespace

TensorView qmatmul_b_as_weights(const TensorView& b) {
  return TensorView(b.raw(), b.dtype(), {b.dim(1), b.dim(0), 1, 1},
                    {b.stride(1), b.stride(0), 0, 0});
}

bool qmatmul_uses_pairs(IntAccumulation a, DType a_dtype, const TensorView& b) {
  const bool single = b.dim(0) == 1 && b.dim(1) == 1;  // via_qconv's depthwise case
  return detail::uses_int16_pairs(a, a_dtype, b.dtype()) && !single;
}

const KernelList<QMatMulSlice>& qmatmul_kernels() {
  static const KernelList<QMatMulSlice> list{
      "qmatmul",
      {
          {"x8-qmatmul-as-qconv", Isa::portable,
           "always (runs the qconv list's best kernel as a 1x1 convolution)", nullptr, via_qconv},
          {"x8-qmatmul-reference", Isa::portable, "always (the specification)", nullptr, reference,
           true},
      }};
  return list;
}

}  // namespace npukit
