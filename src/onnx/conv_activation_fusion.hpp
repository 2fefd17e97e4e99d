// ONNX Runtime's ConvActivationFusion (its default optimization level) for
// float graphs: a Conv whose output only feeds a Relu or a Clip with constant
// bounds becomes one com.microsoft FusedConv node. npukit's FusedConv clips
// the convolution's finished output with Clip's own rule, so results are the
// unfused graph's bits; the activation's pass over memory is saved.
#pragma once

#include <string>
#include <vector>

#include "npukit/profile.hpp"
#include "onnx/loaded.hpp"

namespace npukit::onnx {

// The profiles that fuse: onnxruntime (ORT's own rewrite; its node-level
// views, --layers and nodes(), then show FusedConv). The others run the
// graph's nodes as written, as with fuse_qdq.
inline bool fuses_conv_activation(Profile p) {
  return semantics_base(p) == Profile::onnxruntime;
}

// Rewrites `g` in place; one line per fusion in `log` when given
// ("Conv 'c1' + Relu 'r1' -> FusedConv").
void fuse_conv_activation(LoadedGraph& g, std::vector<std::string>* log = nullptr);

}  // namespace npukit::onnx
