// ONNX Runtime's graph rewrites of QDQ models (QuantizeLinear /
// DequantizeLinear around float operators), so that profile onnxruntime runs
// the integer operators ORT 1.30 runs at its default optimization level
// instead of simulating the float graph literally.
#pragma once

#include <string>
#include <vector>

#include "onnx/loaded.hpp"

namespace npukit::onnx {

// What fuse_qdq changed, one line per rewrite ("Conv 'c1' -> QLinearConv").
struct QdqFusionLog {
  std::vector<std::string> lines;
};

// Rewrites `g` in place, in ORT's order:
//  1. ReluQuantFusion / ClipQuantFusion: a Relu or Clip whose only consumer is
//     a QuantizeLinear that already clamps to its range is removed;
//  2. QDQS8ToU8Transformer: a Q -> DQ pair of s8 activations becomes u8
//     (zero point + 128), and constant s8 weights beyond 7 bits of a fused
//     Conv/Gemm/MatMul become u8 codes (+128) with zero points + 128;
//  3. the QDQ selector-action rules (a Relu/Clip between the op and its Q
//     that the Q makes redundant is dropped with the group): DQ -> op -> Q groups become ORT's
//     integer operators (QLinearConv, com.microsoft QGemm, QLinearMatMul,
//     QLinearAdd, QLinearMul, QLinearAveragePool, QLinearGlobalAveragePool,
//     QLinearSigmoid, QLinearLeakyRelu, QLinearConcat), and DQ -> op -> Q
//     around data-movement operators with the same scale and zero point
//     (MaxPool, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Slice,
//     Gather, Expand, Tile) drop their DQ and Q so the op runs on the codes;
//  4. DequantizeLinear nodes left without consumers are removed.
// Groups whose scales or zero points are not constants, whose types differ
// from ORT's conditions, or whose intermediate values are used elsewhere stay
// as they are (run literally, as ORT also runs them in float).
// `ort_only_ops` false (profile pytorch): the groups whose integer operator is
// ONNX Runtime's own (QLinearConcat, QLinearSigmoid, QLinearLeakyRelu) stay
// as they are, run literally.
void fuse_qdq(LoadedGraph& g, QdqFusionLog* log = nullptr, bool ort_only_ops = true);

}  // namespace npukit::onnx
