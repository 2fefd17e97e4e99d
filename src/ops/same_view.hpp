// Whether two views are the very same (bytes, dtype, shape and strides): the
// test of the calls that keep their checks and kernel choice between runs.
#pragma once

#include "npukit/tensor.hpp"

namespace npukit {

inline bool same_view(const TensorView& a, const TensorView& b) {
  return a.raw() == b.raw() && a.dtype() == b.dtype() && a.shape() == b.shape() &&
         a.strides() == b.strides();
}

}  // namespace npukit
