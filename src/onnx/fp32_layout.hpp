// The runner's layout pass for fp32 networks: which activations are kept
// channels-last (NHWC floats behind the NCHW shape, as the int8 pass's
// values: int8_layout.hpp) between convolutions, as ONNX Runtime keeps its
// NCHWc blocks from conv to conv. The output-channels-in-lanes convolution
// then stores each position's channels as whole vectors, reads its residual
// the same way and pads its input by copying whole rows, instead of
// storing to and gathering from one plane per channel. Each output's FMA
// order is the kernel's own in either layout, so the bits do not change.
#pragma once

#include <cstddef>
#include <vector>

#include "onnx/graph.hpp"
#include "onnx/int8_layout.hpp"

namespace npukit::onnx {

// Per value id: whether to hold it channels-last. A value qualifies when it
// is a rank-4 f32 activation (not a graph output) written by a Conv or
// FusedConv that conv2d runs fast on channels-last operands
// (cpu::conv_ocl_channels_last, constant weights; or a depthwise one without
// Z: cpu::dwconv_channels_last) or by a MaxPool, and every
// reader is such a convolution (x), a FusedConv's Z whose output is
// channels-last too (y starts as a copy of Z), a MaxPool or a global pool.
// Off (all false) when NPUKIT_FP32_LAYOUT=nchw or when the allowed kernels
// have no channels-last convolution (below AVX-512, NPUKIT_IMPL=reference).
std::vector<bool> channels_last_f32_values(const std::vector<LayoutStep>& steps,
                                           const std::vector<Operand>& types,
                                           const std::vector<size_t>& output_ids);

}  // namespace npukit::onnx
