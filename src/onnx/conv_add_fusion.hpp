// ONNX Runtime's NCHWc transformer (level "all"; nchwc_transformer.cc, read
// for facts) folds an Add into the convolution that produces one of its
// inputs: the convolution starts from the other input (its "Sum") and adds
// its FMA chains to it, and a Relu after the Add becomes the convolution's
// activation. The bits differ from Conv then Add (the residual is added
// first, not last), so npukit makes the same node: com.microsoft FusedConv
// with input Z, run as conv2d with result_add and residual_first.
#pragma once

#include <string>
#include <vector>

#include "npukit/profile.hpp"
#include "onnx/loaded.hpp"

namespace npukit::onnx {

// The NCHWc block of the convolution order `profile` gives on this host
// (Conv2dParams::accumulation after apply_profile), 0 without one: ONNX
// Runtime's NCHWc rewrite needs MLAS's FMA kernels.
int64_t conv_add_block(Profile profile);

// Rewrites `g` in place where ONNX Runtime would (see the .cpp for the
// conditions), for MLAS's NCHWc block `block` (0, or the environment's
// NPUKIT_CONV_ADD_FUSION=0: nothing). One line per
// fusion in `log` ("Conv 'c' + Add 'a' (+ Relu 'r') -> FusedConv").
void fuse_conv_add(LoadedGraph& g, int64_t block, std::vector<std::string>* log = nullptr);

}  // namespace npukit::onnx
