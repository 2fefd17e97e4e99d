// Element types of npukit tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace npukit {

// s64 and b8 (ONNX bool, one byte holding 0 or 1) carry shapes, indices and
// masks through the ONNX runner's data-movement operators; arithmetic kernels
// take f32, s8, u8, s16 and s32 only.
enum class DType : uint8_t { f32, s8, u8, s16, s32, s64, b8 };

size_t dtype_size(DType t);
const char* dtype_name(DType t);  // "f32", "s8", ...
DType dtype_from_name(
    const std::string& name);  // accepts our names and numpy's ("float32", "int8", ...)

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::s8;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::u8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::s16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::s32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::s64;
};
template <class T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace npukit
