#include "npukit/dtype.hpp"

#include "npukit/error.hpp"

namespace npukit {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::s8:
      return 1;
    case DType::u8:
      return 1;
    case DType::s16:
      return 2;
    case DType::s32:
      return 4;
    case DType::s64:
      return 8;
    case DType::b8:
      return 1;
  }
  fail("npukit::dtype_size", "t", std::to_string(static_cast<int>(t)),
       "f32, s8, u8, s16, s32, s64, b8");
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::s8:
      return "s8";
    case DType::u8:
      return "u8";
    case DType::s16:
      return "s16";
    case DType::s32:
      return "s32";
    case DType::s64:
      return "s64";
    case DType::b8:
      return "b8";
  }
  return "invalid";
}

DType dtype_from_name(const std::string& n) {
  if (n == "f32" || n == "float32") return DType::f32;
  if (n == "s8" || n == "int8") return DType::s8;
  if (n == "u8" || n == "uint8") return DType::u8;
  if (n == "s16" || n == "int16") return DType::s16;
  if (n == "s32" || n == "int32") return DType::s32;
  if (n == "s64" || n == "int64") return DType::s64;
  if (n == "b8" || n == "bool") return DType::b8;
  fail("npukit::dtype_from_name", "name", "'" + n + "'",
       "f32/float32, s8/int8, u8/uint8, s16/int16, s32/int32, s64/int64, b8/bool");
}

}  // namespace npukit
