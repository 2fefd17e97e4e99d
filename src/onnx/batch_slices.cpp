// Which planned graphs may run over slices of their batch, and how big a slice is.
#include "onnx/batch_slices.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "npukit/parallel.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

// Operators computing each output item from the same item of their batch
// input only (the other inputs are weights, scales or shapes), whatever the
// batch size. Conditions on attributes are checked in `per_item`.
const std::set<std::string>& per_item_ops() {
  static const std::set<std::string> ops = {
      // Windows over one image's planes.
      "Conv", "FusedConv", "QLinearConv", "ConvInteger", "MaxPool", "AveragePool", "LpPool",
      "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "QLinearAveragePool",
      "QLinearGlobalAveragePool",
      // Rows of a matrix product (checked below: A carries the batch, B not).
      // QGemm (com.microsoft, what ORT's QDQ rules make of DQ -> Gemm -> Q):
      // its planner takes only transA = 0, a constant B and a C of (N) or (1, N).
      "Gemm", "MatMul", "QLinearMatMul", "MatMulInteger", "QGemm",
      // Per-element maps.
      "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu",
      "Softplus", "Softsign", "Exp", "Log", "Abs", "Neg", "Sqrt", "Erf", "Floor", "Ceil", "Round",
      "Reciprocal", "Gelu", "Cast", "QuantizeLinear", "DequantizeLinear", "Identity",
      // Per-element with broadcasting (checked below: no constant spans the batch).
      "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu", "Sum", "Mean", "QLinearAdd",
      "QLinearMul", "QLinearLeakyRelu", "QLinearSigmoid",
      // Over a non-batch axis (checked below).
      "Softmax", "LogSoftmax", "Flatten", "Reshape", "Squeeze", "Unsqueeze",
      // Inference-mode normalization with constant statistics.
      "BatchNormalization"};
  return ops;
}

const std::set<std::string>& elementwise_broadcast_ops() {
  static const std::set<std::string> ops = {"Add",  "Sub",   "Mul",        "Div",       "Max",
                                            "Min",  "Pow",   "PRelu",      "Sum",       "Mean",
                                            "Clip", "Where", "QLinearAdd", "QLinearMul"};
  return ops;
}

int64_t normalized_axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// Why node `n` mixes batch items (or depends on the batch size), or "".
std::string per_item(const SliceStep& s, const std::vector<Operand>& types,
                     const std::vector<char>& batch) {
  const Node& n = *s.node;
  if (!per_item_ops().count(n.op_type)) return "operator " + n.op_type + " is not known per item";
  const std::vector<size_t>& in = *s.in;
  auto is_batch = [&](size_t k) { return k < in.size() && in[k] != SIZE_MAX && batch[in[k]]; };
  const Shape& out0 = types[(*s.out)[0]].shape;
  if (elementwise_broadcast_ops().count(n.op_type)) {
    // A batch input is aligned with the output's axis 0; a constant one must
    // broadcast over it (absent or 1 there), or each slice would need its rows.
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k] == SIZE_MAX) continue;
      const Shape& sh = types[in[k]].shape;
      if (is_batch(k) && sh.size() != out0.size()) return "a batch input is broadcast";
      if (!is_batch(k) && sh.size() == out0.size() && !sh.empty() && sh[0] != 1)
        return "a constant input spans the batch axis";
    }
    return "";
  }
  // The others read the batch only through their first input (and
  // FusedConv's Z, the output's shape: conv_add_fusion.hpp).
  for (size_t k = 1; k < in.size(); ++k)
    if (is_batch(k) && !(n.op_type == "FusedConv" && k == 3))
      return "input " + std::to_string(k) + " carries the batch";
  const size_t rank = in[0] == SIZE_MAX ? 0 : types[in[0]].shape.size();
  if (n.op_type == "Gemm") {
    if (attr_int(n, "transA", 0) != 0) return "Gemm with transA";
    if (in.size() > 2 && in[2] != SIZE_MAX) {
      const Shape& c = types[in[2]].shape;
      if (c.size() == 2 && c[0] != 1) return "Gemm's C has a row per batch item";
    }
  }
  if ((n.op_type == "MatMul" || n.op_type == "MatMulInteger" || n.op_type == "QLinearMatMul")) {
    const size_t b = n.op_type == "QLinearMatMul" ? 3 : 1;
    if (rank < 2 || (b < in.size() && in[b] != SIZE_MAX && types[in[b]].shape.size() > 2))
      return "MatMul broadcasting over the batch";
  }
  if (n.op_type == "Softmax" || n.op_type == "LogSoftmax") {
    const int64_t dflt = n.opset >= 13 ? -1 : 1;
    if (normalized_axis(attr_int(n, "axis", dflt), rank) == 0) return "softmax over the batch axis";
  }
  if (n.op_type == "Flatten" && normalized_axis(attr_int(n, "axis", 1), rank) < 1)
    return "Flatten at axis 0";
  if (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear") {
    const bool per_axis = in.size() > 1 && in[1] != SIZE_MAX && !types[in[1]].shape.empty() &&
                          shape_numel(types[in[1]].shape) > 1;
    if (per_axis && normalized_axis(attr_int(n, "axis", 1), rank) == 0)
      return "quantization per batch item";
  }
  if (n.op_type == "BatchNormalization" &&
      (attr_int(n, "training_mode", 0) != 0 || s.out->size() > 1))
    return "BatchNormalization in training mode";
  if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
    for (int64_t a : attr_ints(n, "axes"))
      if (normalized_axis(a, n.op_type == "Squeeze" ? rank : out0.size()) == 0)
        return n.op_type + " of axis 0";
  }
  return "";
}

int64_t l2_bytes() {
  long v = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
  v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return v > 0 ? static_cast<int64_t>(v) : int64_t{1} << 20;
}

int64_t item_bytes(const Operand& o) {
  const int64_t n = shape_numel(o.shape);
  return o.shape.empty() || o.shape[0] == 0 ? 0 : n / o.shape[0] * dtype_size(*dtype_of(o.elem));
}

}  // namespace

std::string batch_independence(const std::vector<SliceStep>& steps,
                               const std::vector<Operand>& types,
                               const std::vector<size_t>& input_ids,
                               const std::vector<size_t>& output_ids, std::vector<char>& batch) {
  batch.assign(types.size(), 0);
  if (input_ids.empty()) return "no graph input";
  int64_t n = -1;
  for (size_t v : input_ids) {
    const Operand& t = types[v];
    if (t.shape.empty()) return "a scalar graph input";
    if (t.value) return "a graph input whose value takes part in planning";
    if (n >= 0 && t.shape[0] != n) return "graph inputs of different batch sizes";
    n = t.shape[0];
    batch[v] = 1;
  }
  if (n < 2) return "a batch of one";
  for (const SliceStep& s : steps) {
    bool reads_batch = false;
    for (size_t v : *s.in) reads_batch = reads_batch || (v != SIZE_MAX && batch[v]);
    if (!reads_batch) continue;  // computed from constants: the same in every slice
    if (s.out->empty()) return "a node without outputs";
    const std::string why = per_item(s, types, batch);
    if (!why.empty()) return "node '" + s.node->name + "': " + why;
    for (size_t v : *s.out) {
      if (types[v].shape.empty() || types[v].shape[0] != n)
        return "node '" + s.node->name + "': an output without the batch on axis 0";
      batch[v] = 1;
    }
  }
  for (size_t v : output_ids) {
    if (!batch[v]) return "a graph output not computed from the batch";
    if (std::find(input_ids.begin(), input_ids.end(), v) != input_ids.end())
      return "a graph input is also a graph output";
  }
  return "";
}

bool slice_plan_matches(const std::vector<Operand>& full, const std::vector<Operand>& slice,
                        const std::vector<char>& batch, int64_t images) {
  if (full.size() != slice.size()) return false;
  for (size_t v = 0; v < full.size(); ++v) {
    if (full[v].present != slice[v].present || full[v].elem != slice[v].elem) return false;
    Shape want = full[v].shape;
    if (batch[v]) want[0] = images;
    if (want != slice[v].shape) return false;
  }
  return true;
}

int64_t batch_slice_setting() {
  const char* s = std::getenv("NPUKIT_BATCH_SLICES");
  if (!s || !*s || std::string(s) == "auto") return 0;
  if (std::string(s) == "off") return -1;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  check(*end == '\0' && v >= 0, "npukit::onnx::Model::run", "NPUKIT_BATCH_SLICES",
        std::string("'") + s + "'", "auto, off, or images per slice (0 = off)");
  return v == 0 ? -1 : static_cast<int64_t>(v);
}

int64_t auto_slice_images(const std::vector<SliceStep>& steps, const std::vector<Operand>& types,
                          const std::vector<char>& batch, int64_t batch_size) {
  int64_t largest = 1;
  for (const SliceStep& s : steps) {
    int64_t bytes = 0;
    for (size_t v : *s.in)
      if (v != SIZE_MAX && batch[v]) bytes += item_bytes(types[v]);
    for (size_t v : *s.out)
      if (batch[v]) bytes += item_bytes(types[v]);
    largest = std::max(largest, bytes);
  }
  return std::clamp<int64_t>(l2_bytes() / largest, 1, batch_size);
}

int64_t slice_lanes(size_t slice_count) {
  const char* mode = std::getenv("NPUKIT_SLICE_THREADS");
  if (mode && std::string(mode) == "nodes") return 1;
  return std::clamp<int64_t>(num_threads(), 1,
                             std::min<int64_t>(4, static_cast<int64_t>(slice_count)));
}

std::vector<int64_t> slice_sizes(int64_t batch_size, int64_t images) {
  images = std::clamp<int64_t>(images, 1, batch_size);
  const int64_t count = (batch_size + images - 1) / images;
  const int64_t base = batch_size / count, extra = batch_size % count;
  std::vector<int64_t> out(static_cast<size_t>(count), base);
  for (int64_t i = 0; i < extra; ++i) ++out[static_cast<size_t>(i)];
  return out;
}

void log_slices(const std::string& what) {
  if (std::getenv("NPUKIT_LOG_SLICES")) std::fprintf(stderr, "batch slices: %s\n", what.c_str());
}

TensorView batch_rows(const TensorView& v, int64_t first, int64_t count) {
  Shape shape = v.shape();
  shape[0] = count;
  char* p = static_cast<char*>(v.raw()) +
            first * v.stride(0) * static_cast<int64_t>(dtype_size(v.dtype()));
  return TensorView(p, v.dtype(), shape, v.strides());
}

}  // namespace npukit::onnx
