#include "onnx/ort_level1.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "npukit/ops/tensor_ops.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

bool is(const Node& n, const char* op) {
  return n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx");
}

class Level1 {
 public:
  Level1(LoadedGraph& g, QdqFusionLog* log) : g_(g), log_(log) {
    for (const Declared& d : g.outputs) outputs_.insert(d.info.name);
    for (const Declared& d : g.inputs)
      if (auto e = elem_from_onnx(d.onnx_type)) elem_[d.info.name] = *e;
    for (const auto& [name, k] : g.constants) elem_[name] = k->elem;
  }

  void run() {
    std::vector<char> dead(g_.nodes.size(), 0);
    std::map<std::string, std::string> alias;  // removed Cast output -> its input
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      Node& n = g_.nodes[i];
      for (std::string& in : n.inputs)
        if (auto it = alias.find(in); it != alias.end()) in = it->second;
      if (n.outputs.empty() || n.outputs[0].empty()) continue;
      const std::string& y = n.outputs[0];
      if (is(n, "Constant")) {
        if (auto it = n.attrs.find("value"); it != n.attrs.end() && it->second.tensor)
          konst_[y] = it->second.tensor, elem_[y] = it->second.tensor->elem;
      } else if (is(n, "Cast") && !n.inputs.empty()) {
        const auto to = elem_from_onnx(static_cast<int32_t>(attr_int(n, "to", 0)));
        if (!to) continue;
        const auto from = elem_of_value(n.inputs[0]);
        if (from == to && !outputs_.count(y)) {
          alias[y] = n.inputs[0];
          dead[i] = 1;
          note("Cast '" + n.name + "' removed: its input is already " + elem_name(*to));
          continue;
        }
        elem_[y] = *to;
        if (const auto k = konst(n.inputs[0]); k && dtype_of(*to)) {
          Tensor t(*dtype_of(*to), k->shape);
          cast(k->tensor.view(), t.view());
          fold(i, y, std::move(t), dead);
        }
      } else if (is(n, "ConstantOfShape") && !n.inputs.empty()) {
        const auto k = konst(n.inputs[0]);
        std::shared_ptr<Constant> value;
        if (auto it = n.attrs.find("value"); it != n.attrs.end()) value = it->second.tensor;
        if (!k || k->ints.size() != static_cast<size_t>(k->tensor.numel())) continue;
        if (value && (value->tensor.numel() != 1 || !dtype_of(value->elem))) continue;
        // Odd or large shapes are left to the planner (its checks, its memory budget).
        double count = 1;
        for (int64_t d : k->ints) count *= static_cast<double>(d);
        if (std::any_of(k->ints.begin(), k->ints.end(), [](int64_t d) { return d < 0; }) ||
            count > double(1 << 22))
          continue;
        Tensor t(value ? *dtype_of(value->elem) : DType::f32, k->ints);
        if (value) fill(t.view(), value->tensor.view());  // default: zeros
        elem_[y] = value ? value->elem : Elem::f32;
        fold(i, y, std::move(t), dead);
      } else if (is(n, "QuantizeLinear")) {
        elem_[y] = q_elem(n);
      } else if (is(n, "DequantizeLinear")) {
        elem_[y] = Elem::f32;
      }
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead[i]) kept.push_back(std::move(g_.nodes[i]));
    g_.nodes = std::move(kept);
  }

 private:
  LoadedGraph& g_;
  QdqFusionLog* log_;
  std::set<std::string> outputs_;
  std::map<std::string, Elem> elem_;
  std::map<std::string, std::shared_ptr<Constant>> konst_;

  std::shared_ptr<Constant> konst(const std::string& v) const {
    if (auto it = konst_.find(v); it != konst_.end()) return it->second;
    if (auto it = g_.constants.find(v); it != g_.constants.end()) return it->second;
    return nullptr;
  }
  std::optional<Elem> elem_of_value(const std::string& v) const {
    if (auto it = elem_.find(v); it != elem_.end()) return it->second;
    return std::nullopt;
  }
  Elem q_elem(const Node& q) const {
    if (q.inputs.size() > 2 && !q.inputs[2].empty())
      if (const auto z = konst(q.inputs[2])) return z->elem;
    if (auto od = q.attrs.find("output_dtype"); od != q.attrs.end() && od->second.i != 0)
      if (auto e = elem_from_onnx(static_cast<int32_t>(od->second.i))) return *e;
    return Elem::u8;
  }
  // The node's output becomes an initializer (ORT's constant folding).
  void fold(size_t i, const std::string& y, Tensor t, std::vector<char>& dead) {
    if (outputs_.count(y)) return;  // a graph output stays a node's output
    auto k = constant_from(std::move(t));
    konst_[y] = k;
    g_.constants[y] = std::move(k);
    dead[i] = 1;
    note(g_.nodes[i].op_type + " '" + g_.nodes[i].name + "' folded into a constant");
  }
  void note(const std::string& s) {
    if (log_) log_->lines.push_back(s);
  }
};

}  // namespace

void ort_level1_cleanups(LoadedGraph& g, QdqFusionLog* log) {
  Level1(g, log).run();
}

}  // namespace npukit::onnx
