#include "onnx/conv_activation_fusion.hpp"

#include <limits>
#include <map>
#include <set>

namespace npukit::onnx {

namespace {

bool is(const Node& n, const char* op) {
  return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == op;
}

// Scalar f32 constants by value name: initializers and Constant nodes.
std::map<std::string, float> scalar_constants(const LoadedGraph& g) {
  std::map<std::string, float> out;
  auto add = [&](const std::string& name, const Constant& k) {
    if (k.elem == Elem::f32 && k.tensor.numel() == 1) out[name] = k.tensor.to_vector<float>()[0];
  };
  for (const auto& [name, k] : g.constants) add(name, *k);
  for (const Node& n : g.nodes)
    if (is(n, "Constant") && n.outputs.size() == 1)
      if (auto it = n.attrs.find("value"); it != n.attrs.end() && it->second.tensor)
        add(n.outputs[0], *it->second.tensor);
  return out;
}

// The bounds plan_clip would use, when known now: attributes before opset 11,
// constant scalar inputs since (absent: the float range).
bool clip_bounds(const Node& clip, const std::map<std::string, float>& scalars, float& lo,
                 float& hi) {
  lo = -std::numeric_limits<float>::infinity();
  hi = std::numeric_limits<float>::infinity();
  if (clip.opset < 11) {
    for (const auto& [name, a] : clip.attrs) {
      if (name != "min" && name != "max") return false;
      if (a.kind != Attr::Kind::f) return false;
      (name == "min" ? lo : hi) = a.f;
    }
    return true;
  }
  if (!clip.attrs.empty()) return false;
  for (size_t k = 1; k < 3 && k < clip.inputs.size(); ++k) {
    if (clip.inputs[k].empty()) continue;
    auto it = scalars.find(clip.inputs[k]);
    if (it == scalars.end()) return false;
    (k == 1 ? lo : hi) = it->second;
  }
  return true;
}

}  // namespace

void fuse_conv_activation(LoadedGraph& g, std::vector<std::string>* log) {
  std::set<std::string> graph_outputs;
  for (const Declared& d : g.outputs) graph_outputs.insert(d.info.name);
  std::map<std::string, std::vector<size_t>> users;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) users[in].push_back(i);
  const std::map<std::string, float> scalars = scalar_constants(g);
  std::vector<char> dead(g.nodes.size(), 0);
  for (Node& conv : g.nodes) {
    if (!is(conv, "Conv") || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;
    const std::string& y = conv.outputs[0];
    const auto u = users.find(y);
    if (graph_outputs.count(y) || u == users.end() || u->second.size() != 1) continue;
    const size_t a = u->second[0];
    const Node& act = g.nodes[a];
    if (dead[a] || act.outputs.size() != 1 || act.inputs.empty() || act.inputs[0] != y) continue;
    Attr kind;
    kind.kind = Attr::Kind::s;
    Attr params;
    params.kind = Attr::Kind::floats;
    if (is(act, "Relu") && act.attrs.empty()) {
      kind.s = "Relu";
    } else if (is(act, "Clip")) {
      float lo = 0, hi = 0;
      if (!clip_bounds(act, scalars, lo, hi)) continue;
      kind.s = "Clip";
      params.floats = {lo, hi};
    } else {
      continue;
    }
    if (log)
      log->push_back("Conv '" + conv.name + "' + " + kind.s + " '" + act.name + "' -> FusedConv");
    conv.op_type = "FusedConv";
    conv.domain = "com.microsoft";
    conv.opset = 1;
    conv.attrs["activation"] = kind;
    if (kind.s == "Clip") conv.attrs["activation_params"] = params;
    conv.outputs[0] = act.outputs[0];
    dead[a] = 1;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace npukit::onnx
