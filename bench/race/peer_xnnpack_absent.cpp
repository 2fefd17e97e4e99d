// Built when CMake did not find XNNPACK: the column says so.
#include "race.hpp"

namespace race {

bool xnnpack_built() {
  return false;
}

std::vector<Peer> xnnpack_peers() {
  Peer p;
  p.name = "XNNPACK";
  p.layout = "nhwc";
  p.semantics = "onnxruntime";
  p.prepare = [](const Case&, const npukit::Tensor&, int, Prepared&, std::string& why) {
    why = "not available (libxnnpack-dev and libpthreadpool-dev not found at build time)";
    return false;
  };
  return {p};
}

}  // namespace race
