// Which float values ONNX Runtime 1.30 keeps in MLAS's NCHWc format after its
// graph optimizer (level "all", nchwc_transformer.cc, read for facts): only
// that decides whether a GlobalAveragePool / GlobalMaxPool inside a graph runs
// MLAS's NCHWc kernel or its plain global pool, whose sums differ in the last
// bit. The transformer visits nodes in order; a global pool is rewritten only
// when no earlier node still feeds it through an edge: its input is a graph
// input or an initializer, or its producer was itself rewritten.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/graph.hpp"

namespace npukit::onnx {

class OrtNchwcTracker {
 public:
  // `block`: MLAS's NCHWc block on this host (0: no rewrite at all).
  OrtNchwcTracker(const std::vector<Node>& nodes, const std::vector<std::string>& graph_outputs,
                  int64_t block);
  // Whether ONNX Runtime rewrites global pool `n` (inputs typed as `in`).
  bool global_pool_rewritten(const Node& n, const std::vector<Operand>& in) const;
  // Records the format of n's outputs; call in execution order, after planning n.
  void record(const Node& n, const std::vector<Operand>& in);

 private:
  enum class Format { nchwc, plain, none };  // none: as if no node produced it
  // Absent from the map: no producer node (graph input, initializer).
  std::map<std::string, Format> format_;
  std::map<std::string, int> uses_;
  std::set<std::string> graph_outputs_;
  // Outputs of a Conv (or Conv + BatchNormalization) with one consumer: ORT
  // fuses a following activation into the convolution before the rewrite.
  std::set<std::string> fusable_conv_;
  int64_t block_;

  bool nchwc(const std::string& value) const;
  bool single_use(const std::string& value) const;
  Format format_after(const Node& n, const std::vector<Operand>& in) const;
};

}  // namespace npukit::onnx
