// ONNX Runtime 1.30's order of fp32 ReduceSum / ReduceMean / ReduceL2 on x86-64 (its CPU
// kernels in core/providers/cpu/reduction, read for the facts; docs/semantics.md
// lists them). The axes are first merged into runs of reduced (R) and kept (K)
// axes; the merged shape picks the loop:
//   R    every element: one Eigen packet sum of the whole tensor
//   KR   each row: one Eigen packet sum
//   RK   columns: row 0, then each further row added (the row is the first
//        operand but in an odd last column, as ORT's NaN signs show) (when rows > 16 and
//        max(rows, columns) > 256 at one thread), else the sequential loop
//   KRK  per outer index: MLAS's M=1 SGEMM with a row of ones (outer >= 2),
//        else the sequential loop
//   RKR  per kept index: 0, then one Eigen packet sum per outer block added in
//        turn, the block's sum first (kept >= 2), else the sequential loop
//   other (and a scalar): 0 plus every element in row-major order.
// ORT's official build compiles Eigen for baseline x86-64, so its packets hold
// 4 floats with 16-byte alignment whatever the host's ISA; ORT's tensors are
// 64-byte aligned, so a run's alignment follows from its offset in the tensor.
#include <algorithm>
#include <cmath>
#include <vector>

#include "npukit/ops/reduce.hpp"
#include "ops/reference/x86_float.hpp"

namespace npukit::ref {

namespace {

constexpr int64_t kLanes = 4;  // Eigen's Packet4f under SSE2

// Every addition is x86's (x86_add): which NaN comes out depends on the
// operand order, which the code below states as the kernels have it.

// Eigen's horizontal sum of a Packet4f: (l0 + l2) + (l1 + l3).
float packet_total(const float (&p)[kLanes]) {
  return x86_add(x86_add(p[0], p[2]), x86_add(p[1], p[3]));
}

// Eigen 3.4's linear vectorized sum of v[0..n) whose first element lies
// `offset` floats after an aligned address: two packet accumulators over the
// aligned middle (a last odd packet joins the first), their horizontal sum,
// then the unaligned head, then the tail. Too short for a packet: in order.
float eigen_sum(const float* v, int64_t n, int64_t offset) {
  const int64_t head = std::min((kLanes - offset % kLanes) % kLanes, n);
  const int64_t body = (n - head) / kLanes * kLanes;
  if (body == 0) {
    float r = v[0];
    for (int64_t i = 1; i < n; ++i) r = x86_add(r, v[i]);
    return r;
  }
  const int64_t end2 = head + (n - head) / (2 * kLanes) * (2 * kLanes);
  const int64_t end = head + body;
  float a[kLanes], b[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) a[l] = v[head + l];
  if (body > kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) b[l] = v[head + kLanes + l];
    for (int64_t i = head + 2 * kLanes; i < end2; i += 2 * kLanes)
      for (int64_t l = 0; l < kLanes; ++l) {
        a[l] = x86_add(a[l], v[i + l]);
        b[l] = x86_add(b[l], v[i + kLanes + l]);
      }
    for (int64_t l = 0; l < kLanes; ++l) a[l] = x86_add(a[l], b[l]);
    if (end > end2)
      for (int64_t l = 0; l < kLanes; ++l) a[l] = x86_add(a[l], v[end2 + l]);
  }
  float r = packet_total(a);
  for (int64_t i = 0; i < head; ++i) r = x86_add(r, v[i]);
  for (int64_t i = end; i < n; ++i) r = x86_add(r, v[i]);
  return r;
}

// MLAS's SgemmKernelM1Avx with A = ones over a (k x n) block: rows taken four
// at a time as ((r0 + r1) + r2) + r3 and added to the running column (which
// starts at +0), then a remaining pair (r0 + r1), then a single row.
void mlas_m1_column_sums(const float* m, int64_t k, int64_t n, float* y) {
  std::fill(y, y + n, 0.0f);
  int64_t r = 0;
  for (; r + 4 <= k; r += 4)
    for (int64_t j = 0; j < n; ++j)
      y[j] =
          (((m[r * n + j] + m[(r + 1) * n + j]) + m[(r + 2) * n + j]) + m[(r + 3) * n + j]) + y[j];
  if ((k - r) & 2) {
    for (int64_t j = 0; j < n; ++j) y[j] = x86_add(x86_add(m[r * n + j], m[(r + 1) * n + j]), y[j]);
    r += 2;
  }
  if ((k - r) & 1)
    for (int64_t j = 0; j < n; ++j) y[j] = x86_add(m[r * n + j], y[j]);
}

// 0 plus each reduced element in row-major order, per kept index (ORT's
// NoTransposeReduce1Loop), for any pattern of reduced axes.
void sequential_sums(const float* x, const Shape& shape, const std::vector<bool>& reduced,
                     float* y) {
  const size_t rank = shape.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  for (size_t i = 0; i < rank; ++i) {
    (reduced[i] ? red_dims : kept_dims).push_back(shape[i]);
    (reduced[i] ? red_strides : kept_strides).push_back(stride[i]);
  }
  // Offsets of every element of a multi-index space, row-major.
  auto offsets = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    std::vector<int64_t> out{0};
    for (size_t a = 0; a < dims.size(); ++a) {
      std::vector<int64_t> next;
      next.reserve(out.size() * static_cast<size_t>(dims[a]));
      for (int64_t base : out)
        for (int64_t i = 0; i < dims[a]; ++i) next.push_back(base + i * strides[a]);
      out.swap(next);
    }
    return out;
  };
  const std::vector<int64_t> kept = offsets(kept_dims, kept_strides);
  const std::vector<int64_t> red = offsets(red_dims, red_strides);
  for (size_t o = 0; o < kept.size(); ++o) {
    float s = 0.0f;
    for (int64_t r : red) s = x86_add(s, x[kept[o] + r]);
    y[o] = s;
  }
}

}  // namespace

void reduce_sum_f32_ort_order(const float* x, const Shape& shape, const std::vector<bool>& reduced,
                              float* y) {
  // Merge neighbouring axes of the same kind.
  std::vector<int64_t> dims;
  std::vector<bool> kinds;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!dims.empty() && kinds.back() == reduced[i]) {
      dims.back() *= shape[i];
    } else {
      dims.push_back(shape[i]);
      kinds.push_back(reduced[i]);
    }
  }
  const bool r_first = !kinds.empty() && kinds[0];
  if (dims.size() == 1 && r_first) {  // R
    y[0] = eigen_sum(x, dims[0], 0);
    return;
  }
  if (dims.size() == 2 && !r_first) {  // KR
    for (int64_t d = 0; d < dims[0]; ++d) y[d] = eigen_sum(x + d * dims[1], dims[1], d * dims[1]);
    return;
  }
  if (dims.size() == 2 && dims[0] > 16 && std::max(dims[0], dims[1]) > 256) {  // RK
    std::copy(x, x + dims[1], y);
    const int64_t pairs = dims[1] / 2 * 2;
    for (int64_t r = 1; r < dims[0]; ++r) {
      const float* row = x + r * dims[1];
      for (int64_t j = 0; j < pairs; ++j) y[j] = x86_add(row[j], y[j]);
      if (pairs < dims[1]) y[pairs] = x86_add(y[pairs], row[pairs]);
    }
    return;
  }
  if (dims.size() == 3 && !r_first && dims[0] >= 2) {  // KRK
    for (int64_t d = 0; d < dims[0]; ++d)
      mlas_m1_column_sums(x + d * dims[1] * dims[2], dims[1], dims[2], y + d * dims[2]);
    return;
  }
  if (dims.size() == 3 && r_first && dims[1] >= 2) {  // RKR
    for (int64_t k = 0; k < dims[1]; ++k) {
      float s = 0.0f;
      for (int64_t i = 0; i < dims[0]; ++i) {
        const int64_t at = (i * dims[1] + k) * dims[2];
        s = x86_add(eigen_sum(x + at, dims[2], at), s);
      }
      y[k] = s;
    }
    return;
  }
  sequential_sums(x, shape, reduced, y);
}

void reduce_l2_f32_ort_order(const float* x, const Shape& shape, const std::vector<bool>& reduced,
                             float* y) {
  int64_t count = 1;
  bool all = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (reduced[i]) count *= shape[i];
    all = all && reduced[i];
  }
  // Every axis reduced (ORT's merged shape is one R run): Eigen's norm(), the
  // packet sum of the rounded squares, then sqrt.
  if (all && !shape.empty()) {
    std::vector<float> squares(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) squares[static_cast<size_t>(i)] = x[i] * x[i];
    y[0] = std::sqrt(eigen_sum(squares.data(), count, 0));
    return;
  }
  // Otherwise ORT's sequential loop: 0, then each rounded square added in
  // row-major order (the element's square the second operand), then sqrt.
  std::vector<float> squares;
  const int64_t total = shape_numel(shape);
  squares.resize(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) squares[static_cast<size_t>(i)] = x[i] * x[i];
  sequential_sums(squares.data(), shape, reduced, y);
  int64_t outputs = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!reduced[i]) outputs *= shape[i];
  for (int64_t o = 0; o < outputs; ++o) y[o] = std::sqrt(y[o]);
}

}  // namespace npukit::ref
