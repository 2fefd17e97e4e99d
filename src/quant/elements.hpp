// Element visiting shared by the tensor-level quantization functions.
#pragma once

#include <cstdint>

#include "npukit/tensor.hpp"

namespace npukit::detail {

// Calls f(linear, offset, pos) for every element of v in logical row-major
// order: linear counts 0, 1, ...; offset is in elements from v.raw(); pos[4]
// holds the coordinates right-aligned (dimension i of a rank-r view is
// pos[4 - r + i]).
template <class F>
void for_each_element(const TensorView& v, F&& f) {
  expect_kernel_rank(v, "npukit::for_each_element", "tensor");
  int64_t dims[4] = {1, 1, 1, 1}, st[4] = {0, 0, 0, 0};
  const int r = v.rank();
  for (int i = 0; i < r; ++i) {
    dims[4 - r + i] = v.dim(i);
    st[4 - r + i] = v.stride(i);
  }
  int64_t linear = 0, pos[4];
  for (pos[0] = 0; pos[0] < dims[0]; ++pos[0])
    for (pos[1] = 0; pos[1] < dims[1]; ++pos[1])
      for (pos[2] = 0; pos[2] < dims[2]; ++pos[2])
        for (pos[3] = 0; pos[3] < dims[3]; ++pos[3])
          f(linear++, pos[0] * st[0] + pos[1] * st[1] + pos[2] * st[2] + pos[3] * st[3],
            static_cast<const int64_t*>(pos));
}

// Integer element at `offset` of an integer view (s8, u8, s16, s32).
inline int64_t load_int(const TensorView& v, int64_t offset) {
  switch (v.dtype()) {
    case DType::s8:
      return static_cast<const int8_t*>(v.raw())[offset];
    case DType::u8:
      return static_cast<const uint8_t*>(v.raw())[offset];
    case DType::s16:
      return static_cast<const int16_t*>(v.raw())[offset];
    case DType::s32:
      return static_cast<const int32_t*>(v.raw())[offset];
    default:
      return 0;  // callers check the dtype first
  }
}

inline void store_int(const TensorView& v, int64_t offset, int64_t value) {
  switch (v.dtype()) {
    case DType::s8:
      static_cast<int8_t*>(v.raw())[offset] = static_cast<int8_t>(value);
      break;
    case DType::u8:
      static_cast<uint8_t*>(v.raw())[offset] = static_cast<uint8_t>(value);
      break;
    case DType::s16:
      static_cast<int16_t*>(v.raw())[offset] = static_cast<int16_t>(value);
      break;
    case DType::s32:
      static_cast<int32_t*>(v.raw())[offset] = static_cast<int32_t>(value);
      break;
    default:
      break;
  }
}

inline bool is_integer_dtype(DType t) {
  return t != DType::f32;
}

}  // namespace npukit::detail
