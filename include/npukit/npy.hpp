// NumPy .npy files (format versions 1.0, 2.0 and 3.0), read and written as
// npukit tensors. Reading accepts little- and big-endian data of the npukit
// dtypes ('<f4', '>f4', '|u1', '|i1', '<i2', '<i4', ...) and float64, which is
// rounded to float32 (numpy's default float type, for convenience); arrays in
// Fortran order, of rank above 4, or of other types are rejected.
// Writing produces version 1.0 (2.0 if the header needs it), little-endian.
#pragma once

#include <string>
#include <vector>

#include "npukit/tensor.hpp"

namespace npukit {

Tensor read_npy(const std::string& path);
Tensor parse_npy(const void* data, size_t size, const std::string& source = "<memory>");
void write_npy(const std::string& path, const TensorView& t);
std::vector<char> format_npy(const TensorView& t);

}  // namespace npukit
