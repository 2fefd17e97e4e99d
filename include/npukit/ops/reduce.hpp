// fp32 reductions of ONNX (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL2) over a
// set of axes of a tensor of rank 0 to 4.
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/tensor.hpp"

namespace npukit {

enum class ReduceOp : uint8_t { sum, mean, max, min, l2 };

const char* reduce_op_name(ReduceOp op);

// The order in which sum, mean and l2 add their elements (max and min keep
// the sequential order).
enum class ReduceOrder : uint8_t {
  sequential,   // 0, then each element in row-major order
  onnxruntime,  // ONNX Runtime 1.30's x86-64 CPU kernels (ref::reduce_sum_f32_ort_order)
};

struct ReduceParams {
  std::vector<int64_t> axes;  // may be negative; empty: every axis
  bool keepdims = true;       // reduced axes stay as size 1
  ReduceOrder order = ReduceOrder::sequential;
};

// The output shape (checks the axes: in range, no repeats).
Shape reduce_output_shape(const Shape& x, const ReduceParams& p, const char* function);

// Each output is its elements folded in row-major order in fp32 (sum: s += v;
// mean: the sum divided by the count; max/min: NaN wins, else the strict
// comparison keeps the first of equals; l2: s += v * v, each product rounded,
// then sqrt(s)). An empty reduction gives 0 (sum, l2), NaN (mean) or -inf/+inf
// (max/min). With ReduceOrder::onnxruntime, sum, mean and l2 add in ONNX
// Runtime's order instead, and an empty sum or mean is 0 as there.
void reduce(ReduceOp op, const TensorView& x, const TensorView& y, const ReduceParams& p);

namespace ref {
// x as (outer..) with `reduced` marking the axes folded; y contiguous-indexed
// by the kept axes (keepdims shape).
void reduce_f32(ReduceOp op, const TensorView& x, const TensorView& y_keepdims,
                const std::vector<bool>& reduced);

// Sums of a dense row-major x (ORT's tensors start 64-byte aligned) over the
// reduced axes in ONNX Runtime 1.30's order at one intra-op thread (its loop
// choice depends on the thread count); y dense, indexed by the kept axes.
void reduce_sum_f32_ort_order(const float* x, const Shape& shape, const std::vector<bool>& reduced,
                              float* y);
// ReduceL2 in ONNX Runtime 1.30's order: every axis reduced, Eigen's norm()
// (the 4-lane packet sum of the rounded squares); otherwise 0 plus each
// rounded square in row-major order; then sqrt. Same x and y as above.
void reduce_l2_f32_ort_order(const float* x, const Shape& shape, const std::vector<bool>& reduced,
                             float* y);
}  // namespace ref

}  // namespace npukit
