#include "npukit/ops/softmax_onnxruntime.hpp"

#include <vector>

#include "npukit/cpu_features.hpp"
#include "npukit/error.hpp"

namespace npukit {

MlasSumExpKernel onnxruntime_sum_exp_kernel() {
  static const MlasSumExpKernel k =
      host_cpu_features().avx512f ? MlasSumExpKernel::avx512f : MlasSumExpKernel::fma3;
  return k;
}

void softmax_onnxruntime(const TensorView& x, const TensorView& y, int64_t axis, bool log,
                         MlasSumExpKernel kernel) {
  const char* fn = log ? "npukit::log_softmax_onnxruntime" : "npukit::softmax_onnxruntime";
  x.expect_dtype(DType::f32, fn, "x.dtype");
  y.expect_dtype(DType::f32, fn, "y.dtype");
  y.expect_shape(x.shape(), fn, "y");
  check(x.rank() >= 1, fn, "x", "a scalar", "rank 1 to 8");
  check_range(fn, "axis", axis, -x.rank(), x.rank() - 1);
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  const int64_t n = x.dim(a);
  if (x.numel() == 0) return;
  // ONNX Runtime moves the axis last and runs contiguous rows: each row is
  // gathered, computed and scattered (only the order within a row matters).
  std::vector<float> row(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  int64_t pos[kMaxRank] = {};
  const int r = x.rank();
  const auto* xp = static_cast<const float*>(x.raw());
  auto* yp = static_cast<float*>(y.raw());
  while (true) {
    int64_t xo = 0, yo = 0;
    for (int i = 0; i < r; ++i)
      if (i != a) xo += pos[i] * x.stride(i), yo += pos[i] * y.stride(i);
    for (int64_t k = 0; k < n; ++k) row[static_cast<size_t>(k)] = xp[xo + k * x.stride(a)];
    ref::softmax_mlas_row(row.data(), out.data(), n, log, kernel);
    for (int64_t k = 0; k < n; ++k) yp[yo + k * y.stride(a)] = out[static_cast<size_t>(k)];
    int i = r - 1;
    for (; i >= 0; --i) {
      if (i == a) continue;
      if (++pos[i] < x.dim(i)) break;
      pos[i] = 0;
    }
    if (i < 0) return;
  }
}

}  // namespace npukit
