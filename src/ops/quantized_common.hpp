// Private helpers shared by the quantized operators (not installed).
#pragma once

#include <cstdint>
#include <string>

#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/tensor.hpp"

namespace npukit::detail {

// Range of an 8-bit code type.
struct CodeRange {
  int32_t lo, hi;
};
inline CodeRange code_range(DType t) {
  return t == DType::s8 ? CodeRange{-128, 127} : CodeRange{0, 255};
}

inline void expect_code_dtype(const TensorView& t, const char* fn, const char* parameter) {
  // fail, not check: check's string arguments (the allowed-values text is
  // longer than the small-string buffer) were built on every call.
  if (t.dtype() != DType::s8 && t.dtype() != DType::u8)
    fail(fn, parameter, dtype_name(t.dtype()), "s8 (int8) or u8 (uint8)");
}

// A zero point must be a code of the tensor's type.
inline void check_zero_point(int64_t zp, DType t, const char* fn, const char* parameter) {
  const CodeRange r = code_range(t);
  check_range(fn, parameter, zp, r.lo, r.hi);
}

// Scales must be finite and positive (ONNX).
void check_scale(float s, const char* fn, const char* parameter);

// Reads an 8-bit code at a flat element offset.
inline int32_t code_at(const void* base, DType t, int64_t offset) {
  return t == DType::s8 ? int32_t{static_cast<const int8_t*>(base)[offset]}
                        : int32_t{static_cast<const uint8_t*>(base)[offset]};
}
inline void store_code(void* base, DType t, int64_t offset, int32_t v) {
  if (t == DType::s8)
    static_cast<int8_t*>(base)[offset] = static_cast<int8_t>(v);
  else
    static_cast<uint8_t*>(base)[offset] = static_cast<uint8_t>(v);
}

// Shape and strides padded on the left to 4-D (size 1, stride 0).
struct Index4 {
  int64_t shape[4], stride[4];
};
Index4 index4(const TensorView& t);

// Validates QuantParams against a tensor of rank `rank` whose per-axis extent
// is `extent(axis)`; `name` is the ONNX input ("y_scale", ...).
void check_quant_params(const QuantParams& q, const Shape& shape, DType code_type, const char* fn,
                        const char* name);

// Sums products in K order the way vpmaddubsw + vpmaddwd do: the products at
// K positions 2j and 2j+1 are added and saturated to int16, the pair sums are
// added exactly (int64 here; callers wrap to int32 as MLAS's int32 lanes do).
class Int16PairSum {
 public:
  void add(int32_t product) {
    if (half_) {
      sum_ += saturate16(pending_ + product);
      half_ = false;
    } else {
      pending_ = product;
      half_ = true;
    }
  }
  // An odd K pairs its last product with the zero padding of MLAS's packing.
  int64_t total() const { return sum_ + (half_ ? saturate16(pending_) : 0); }

 private:
  static int32_t saturate16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : v; }
  int64_t sum_ = 0;
  int32_t pending_ = 0;
  bool half_ = false;
};

// Two's-complement wrap of an int64 to int32 (MLAS's int32 lanes).
inline int32_t wrap_int32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// True when `a` applies to these operand types: MLAS's pair saturation only
// exists for u8 activations times s8 weights.
inline bool uses_int16_pairs(IntAccumulation a, DType x, DType w) {
  return a == IntAccumulation::mlas_u8s8_int16_pairs && x == DType::u8 && w == DType::s8;
}

// The float requantization of QLinearConv / QLinearMatMul for one accumulator.
inline int32_t requantize_float(int32_t acc, float multiplier, int32_t y_zp, CodeRange r,
                                Rounding rounding) {
  const float v = static_cast<float>(acc) * multiplier;
  // Clamp in float first (exact: the bounds are small integers), as ORT's
  // kernels do; this also keeps round_to_int away from huge values.
  const float lo = static_cast<float>(r.lo - y_zp), hi = static_cast<float>(r.hi - y_zp);
  const float c = v < lo ? lo : v > hi ? hi : v;
  return static_cast<int32_t>(round_to_int(c, rounding)) + y_zp;
}

}  // namespace npukit::detail
