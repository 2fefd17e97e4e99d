// The runner's own graph: what the loader keeps of an ONNX ModelProto, so
// that no protobuf type reaches the executor or the operator planners.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npukit/onnx/model.hpp"
#include "npukit/tensor.hpp"

namespace npukit::onnx {

// Element types a graph value can have. s64 (shapes, indices) and b8 (ONNX
// bool) are computed by the data-movement, index and comparison operators.
enum class Elem : uint8_t { f32, u8, s8, s32, s64, b8 };
const char* elem_name(Elem e);
std::optional<Elem> elem_from_onnx(int32_t onnx_type);  // TensorProto.DataType
std::string onnx_type_name(int32_t onnx_type);
std::optional<DType> dtype_of(Elem e);
Elem elem_of(DType t);

// A tensor known at load time (initializer, Constant node, or a value folded
// while planning, such as a Shape chain).
struct Constant {
  Elem elem = Elem::f32;
  Shape shape;
  Tensor tensor;              // every type
  std::vector<int64_t> ints;  // s64 values again, for planners reading attributes-like inputs
};
// A Constant holding `t` (ints filled for s64).
std::shared_ptr<Constant> constant_from(Tensor t);

struct Attr {
  enum class Kind : uint8_t { i, f, s, ints, floats, tensor, other } kind = Kind::other;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::shared_ptr<Constant> tensor;
};

struct Node {
  std::string name, op_type, domain;         // domain "" is ai.onnx
  int64_t opset = 0;                         // of its domain
  std::vector<std::string> inputs, outputs;  // "" marks an absent optional input
  std::map<std::string, Attr> attrs;
};

// The type of a value as the planners see it.
struct Operand {
  bool present = false;
  Elem elem = Elem::f32;
  Shape shape;
  const Constant* value = nullptr;  // set when known at load time
};

// A planned node: the types of its outputs and how to run it. `run` gets views
// of the inputs (empty for absent ones) and of the outputs. A planner that
// knows an output's value without running (Shape of a known shape) sets
// `known`; the executor also folds nodes whose inputs are all known.
using Kernel =
    std::function<void(const std::vector<TensorView>& in, const std::vector<TensorView>& out)>;
struct NodePlan {
  std::vector<Operand> outputs;  // elem and shape
  Kernel run;
  std::vector<std::shared_ptr<Constant>> known = {};  // empty, or per output (null: unknown)
  // Output 0 starts as a copy of input `in_place_input` (FusedConv's Z), which
  // `run` skips when the two views are the same bytes: the executor may then
  // give the output that input's bytes if no later step reads them. -1: never.
  int in_place_input = -1;
};

struct PlanContext {
  const Node& node;
  const std::vector<Operand>& in;
  Profile profile;
  // Whether ONNX Runtime's NCHWc rewrite reaches this node if it is a global
  // pool (ort_nchwc.hpp); true for a node planned on its own.
  bool ort_nchwc = true;
};
using Planner = NodePlan (*)(const PlanContext& ctx);

struct OpEntry {
  const char* domain;  // "" or "com.microsoft"
  const char* op_type;
  int min_inputs, max_inputs;  // max -1: variadic
  int max_outputs;
  Planner plan;
};

// Per-family operator tables (src/onnx/ops_*.cpp).
const std::vector<OpEntry>& fp32_ops();
const std::vector<OpEntry>& shape_ops();
const std::vector<OpEntry>& quant_ops();
const std::vector<OpEntry>& quant_extra_ops();  // ops_quant_extra.cpp (QDQ fusion's targets)
const std::vector<OpEntry>& math_ops();    // ops_math.cpp: activations, math, reductions, norms
const std::vector<OpEntry>& tensor_ops();  // src/onnx/ops_tensor.cpp
const std::vector<OpEntry>& index_ops();   // src/onnx/ops_index.cpp
const std::vector<OpEntry>& deconv_ops();  // src/onnx/ops_deconv.cpp: ConvTranspose, Resize
// Integer arithmetic (Add, Sub, Mul, Div, Mod, Neg) on int64/int32 inputs that are all
// known when planning (shape computations of torch.onnx.export): its planner,
// which the executor uses before the operator's own (float) one; else null.
Planner known_int_arith_planner(const Node& n, const std::vector<Operand>& in);

// Operators of any rank (up to kMaxRank) whose nodes are folded when their inputs are known.
bool is_data_movement_op(const std::string& domain, const std::string& op_type);
// Flatten, Reshape, Squeeze, Unsqueeze, Identity: the output has the input's
// bytes in the same order, so the runner may make it a view of a dense input.
bool is_renaming_op(const Node& n);
// Operators whose kernels take any rank up to kMaxRank: data movement and the
// element-wise float math (their drivers collapse axes, elementwise_blocks.hpp).
bool accepts_any_rank(const std::string& domain, const std::string& op_type);
const OpEntry* find_op(const std::string& domain, const std::string& op_type);

}  // namespace npukit::onnx
