// libFuzzer target for the ONNX loader: any byte string either loads (parse,
// whole-graph check, shape inference of every node) or fails with
// npukit::Error. Anything else (a crash, a sanitizer report, another
// exception, a leak) is a bug.
#include <cstddef>
#include <cstdint>

#include "npukit/error.hpp"
#include "npukit/onnx/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    npukit::onnx::Model m = npukit::onnx::Model::from_bytes(data, size);
    (void)m.inputs();
  } catch (const npukit::Error&) {
  }
  return 0;
}
