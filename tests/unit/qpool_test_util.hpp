// Set-up shared by the 8-bit average pooling tests (test_qpool_fast.cpp,
// test_qpool_u16.cpp): outputs as bytes in NCHW order, the first differing
// element, and the runtime settings restored at the end of a test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/npukit.hpp"

namespace npukit::qpool_test {

// The codes of t as raw bytes, NCHW order whatever its layout or strides.
inline std::vector<uint8_t> bytes_nchw(const TensorView& t) {
  Tensor dense(t.dtype(), t.shape());
  copy(t, dense.view());
  const auto* p = static_cast<const uint8_t*>(dense.view().raw());
  return std::vector<uint8_t>(p, p + dense.numel());
}

inline std::string first_difference(const std::vector<uint8_t>& got,
                                    const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "element " + std::to_string(i) + " (NCHW order): got " + std::to_string(got[i]) +
             ", want " + std::to_string(want[i]);
  return "";
}

// Threads, ISA cap and implementation back to their defaults.
struct Restore {
  ~Restore() {
    set_num_threads(0);
    set_max_isa(host_isa());
    set_impl(Impl::fast);
  }
};

}  // namespace npukit::qpool_test
