// libFuzzer target for the .npy reader: any byte string either parses into a
// tensor whose size matches its header or fails with npukit::Error. A crash,
// a sanitizer report, another exception (std::bad_alloc included) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "npukit/error.hpp"
#include "npukit/memory_budget.hpp"
#include "npukit/npy.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  npukit::set_memory_budget(uint64_t{64} << 20);  // a header may claim any shape
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const npukit::Tensor t = npukit::parse_npy(data, size);
    // The data the header describes must have been in the input.
    if (static_cast<uint64_t>(t.numel()) * npukit::dtype_size(t.dtype()) > size) std::abort();
  } catch (const npukit::Error&) {
  }
  return 0;
}
