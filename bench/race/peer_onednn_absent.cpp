// Built when CMake did not find oneDNN: the columns say so.
#include "race.hpp"

namespace race {

bool onednn_built() {
  return false;
}

std::vector<Peer> onednn_peers() {
  std::vector<Peer> peers;
  for (const char* layout : {"nchw", "nhwc"}) {
    Peer p;
    p.name = "oneDNN";
    p.layout = layout;
    p.semantics = "onnxruntime";
    p.prepare = [](const Case&, const npukit::Tensor&, int, Prepared&, std::string& why) {
      why = "not available (libdnnl-dev not found at build time)";
      return false;
    };
    peers.push_back(std::move(p));
  }
  return peers;
}

}  // namespace race
