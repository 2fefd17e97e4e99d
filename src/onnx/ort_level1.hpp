// ONNX Runtime's level-1 cleanups that QDQ models exported by PyTorch need
// before its QDQ rules can match (constant folding, CastElimination, read for
// facts): torch.onnx writes QuantizeLinear -> Cast(to uint8) -> DequantizeLinear
// and builds bias zero points with ConstantOfShape -> Cast.
#pragma once

#include "onnx/loaded.hpp"
#include "onnx/qdq_fusion.hpp"

namespace npukit::onnx {

// In place, in node order: a Cast or ConstantOfShape of constants becomes a
// constant; a Cast to the element type its input already has is removed and
// its consumers read the input (unless its output is a graph output).
void ort_level1_cleanups(LoadedGraph& g, QdqFusionLog* log = nullptr);

}  // namespace npukit::onnx
