// Reading an ONNX file into the runner's graph (src/onnx/proto.cpp): the only
// place that sees protobuf types.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onnx/graph.hpp"

namespace npukit::onnx {

// A graph input or output as declared, with its element type kept even when
// the runner cannot hold it at run time (int64), so the loader can report it.
struct Declared {
  ValueInfo info;
  int32_t onnx_type = 0;  // TensorProto.DataType
  bool has_shape = false;
};

struct LoadedGraph {
  std::string producer;
  int64_t ir_version = 0;
  int64_t opset = 0;  // default domain
  std::map<std::string, int64_t> opsets;
  std::vector<Declared> inputs;  // graph inputs without an initializer
  std::vector<Declared> outputs;
  std::vector<Declared> value_infos;
  std::map<std::string, std::shared_ptr<Constant>> constants;  // initializers
  std::vector<Node> nodes;
  std::vector<Issue> issues;  // problems found while reading (bad tensors, types)
};

// Throws ModelError when the bytes are not a readable ONNX model.
// `model_dir`: the model file's directory, where external initializer data
// is read from; null for a model given as bytes (external data refused).
LoadedGraph read_model(const void* data, size_t size, const std::string& source,
                       const std::string* model_dir = nullptr);

inline constexpr int64_t kMinOpset = 6, kMaxOpset = 25;

// Largest tensor the loader accepts (elements), so a corrupt dimension cannot
// ask for an absurd allocation.
inline constexpr int64_t kMaxElements = int64_t{1} << 28;

}  // namespace npukit::onnx
