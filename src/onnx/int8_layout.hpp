// The runner's layout pass for int8 networks: which 8-bit activations are
// kept channels-last (NHWC bytes) between consecutive integer operators.
// Such a value keeps its logical NCHW shape; only its strides change
// ((H*W*C, 1, W*C, C)), so every reader that honours strides (the kernels'
// references, npukit::copy, write_npy, Model::values) still sees NCHW and the
// bytes computed do not change. It pays off only where the consumers have
// channels-last kernels, so it is limited to them.
#pragma once

#include <cstddef>
#include <vector>

#include "onnx/graph.hpp"

namespace npukit::onnx {

// One planned node as the pass sees it: the node and its value ids
// (SIZE_MAX for an absent input).
struct LayoutStep {
  const Node* node;
  const std::vector<size_t>* in;
  const std::vector<size_t>* out;
  Profile profile;  // the node's (its accumulation decides the QLinearConv kernels)
};

// Per value id: whether to hold it channels-last. A value qualifies when it
// is a rank-4 u8/s8 activation produced by QLinearConv, QLinearAdd or
// MaxPool, every reader is a QLinearConv (x), a QLinearAdd without
// broadcasting (whose inputs and output then all qualify), a MaxPool or an
// NCHW QLinearGlobalAveragePool,
// and it is not a graph output. The QLinearConv nodes must be ones the
// channels-last kernels take (depthwise; or one group, constant weight zero
// points 0 for s8 / 128 for u8 weights, exact accumulation): the others would
// fall to the reference on channels-last operands. Off (all false) when NPUKIT_INT8_LAYOUT=nchw,
// or when the host's allowed kernels lack the channels-last convolutions
// (below AVX2, or NPUKIT_IMPL=reference): there the NCHW kernels are
// the fast ones.
std::vector<bool> channels_last_values(const std::vector<LayoutStep>& steps,
                                       const std::vector<Operand>& types,
                                       const std::vector<size_t>& output_ids);

// A layout pass's switch, the environment variable `variable`: unset, empty or
// "channels_last" leaves the pass on, "nchw" turns it off; any other value is
// an npukit::Error naming the variable and the allowed values.
bool layout_switch_on(const char* variable);

// The NCHW-shaped view of a channels-last buffer of shape (N, H, W, C).
TensorView channels_last_view(void* data, DType dtype, const Shape& nchw);

}  // namespace npukit::onnx
