// Tensor operators of any dtype and rank (up to kMaxRank) with ONNX semantics
// as ONNX Runtime implements them: indexing (Gather, Slice), padding, broadcast
// (Expand, Where), comparisons and logic with bool (b8) results, and Cast.
// Shape functions validate; the operators trust shapes their shape function
// produced and check only what depends on data (Gather's indices).
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/tensor.hpp"

namespace npukit {

// ---- broadcasting (numpy / ONNX multidirectional, any rank)
Shape broadcast_shapes(const std::vector<Shape>& shapes, const char* function);

// ---- Gather: y = x indexed along `axis` by `indices` (s32 or s64; negative
// indices count from the end, others outside [-n, n-1] are an error at run time).
Shape gather_shape(const Shape& x, const Shape& indices, int64_t axis);
void gather(const TensorView& x, const TensorView& indices, const TensorView& y, int64_t axis);

// ---- Slice (ONNX opset 10+): per axis of x, the first element, the step and
// the number of elements, after ONNX's clamping rules.
struct SliceAxis {
  int64_t start = 0, step = 1, size = 0;
};
// starts/ends/axes/steps as the ONNX inputs (axes empty: 0..n-1; steps empty: 1).
std::vector<SliceAxis> slice_axes(const Shape& x, const std::vector<int64_t>& starts,
                                  const std::vector<int64_t>& ends,
                                  const std::vector<int64_t>& axes,
                                  const std::vector<int64_t>& steps);
Shape slice_shape(const std::vector<SliceAxis>& axes);
void slice(const TensorView& x, const TensorView& y, const std::vector<SliceAxis>& axes);

// ---- Pad (ONNX opset 11+): pads = [begin_0, ..., begin_n-1, end_0, ..., end_n-1];
// negative pads crop.
enum class PadMode : uint8_t {
  constant,  // outside x: the constant value
  reflect,   // mirrored without repeating the edge (pads must be < the axis size)
  edge,      // the nearest edge element
  wrap,      // periodic (ONNX opset 19)
};
PadMode pad_mode_from_name(const std::string& name, const char* function);
Shape pad_shape(const Shape& x, const std::vector<int64_t>& pads, PadMode mode);
// `value` is a scalar of x's dtype, or empty for zero.
void pad(const TensorView& x, const TensorView& value, const TensorView& y,
         const std::vector<int64_t>& pads, PadMode mode);

// ---- Expand, Where, fill (ConstantOfShape): data movement with broadcasting.
void expand(const TensorView& x, const TensorView& y);  // x broadcast to y's shape
// y = cond ? a : b (cond b8), all broadcast to y's shape.
void where(const TensorView& cond, const TensorView& a, const TensorView& b, const TensorView& y);
void fill(const TensorView& y, const TensorView& value);  // value: one element of y's dtype

// ---- comparisons (b8 result, IEEE: NaN compares unequal and unordered) and logic.
enum class CompareOp : uint8_t { equal, less, greater, less_equal, greater_equal };
void compare(CompareOp op, const TensorView& a, const TensorView& b, const TensorView& y);
enum class LogicOp : uint8_t { and_, or_, xor_ };
void logic(LogicOp op, const TensorView& a, const TensorView& b, const TensorView& y);
void logic_not(const TensorView& x, const TensorView& y);

// ---- integer arithmetic of shape computations (s64 or s32, broadcast):
// Div truncates toward zero, Mod takes the divisor's sign (ONNX fmod=0);
// both reject a zero divisor. Add/Sub/Mul wrap (two's complement).
enum class IntOp : uint8_t { add, sub, mul, div, mod };
void int_arith(IntOp op, const TensorView& a, const TensorView& b, const TensorView& y);

// ---- Range (f32, s32 or s64 scalars): ONNX Runtime's count, max(0,
// ceil(double(limit - start) / delta)) with the difference taken in the type,
// and its values, start accumulated by delta (not start + i * delta).
int64_t range_count(const TensorView& start, const TensorView& limit, const TensorView& delta);
void range(const TensorView& start, const TensorView& delta, const TensorView& y);

// ---- ScatterND (reduction none): y = data, then for each index tuple of
// `indices` (s64, last axis k <= rank), in order, the slice y[tuple] gets the
// matching slice of `updates` (a repeated tuple: the last write wins).
// Negative indices count from the end; others out of range are an error.
void scatter_nd(const TensorView& data, const TensorView& indices, const TensorView& updates,
                const TensorView& y);

// ---- Cast between f32, s8, u8, s16, s32, s64 and b8, as ONNX Runtime on x86-64:
// float to integer truncates toward zero through the CPU's conversion (NaN and
// values outside the int32 range give INT32_MIN, for int64 INT64_MIN); 8- and
// 16-bit targets keep the low bits of that int32; integers narrow by keeping
// low bits; anything to bool is != 0; integers to float round to nearest even.
void cast(const TensorView& x, const TensorView& y);

}  // namespace npukit
