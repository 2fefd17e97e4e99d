#include "onnx/conv_add_fusion.hpp"

#include <cstdlib>
#include <map>
#include <set>

#include "npukit/ops/conv2d.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

bool is(const Node& n, const char* op) {
  return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == op;
}

// The initializer behind `name`, directly or through Identity nodes (which
// ORT removes before the rewrite; exporters share weights through them).
const Constant* constant(const LoadedGraph& g, const std::map<std::string, size_t>& producer,
                         std::string name) {
  for (int hops = 0; hops < 8; ++hops) {
    if (const auto c = g.constants.find(name); c != g.constants.end()) return c->second.get();
    const auto p = producer.find(name);
    if (p == producer.end() || !is(g.nodes[p->second], "Identity")) return nullptr;
    name = g.nodes[p->second].inputs.at(0);
  }
  return nullptr;
}

// TransformConv's conditions for a float convolution it rewrites to NCHWc:
// constant 4-D weights (and bias) and channel counts that fill the blocks.
bool nchwc_conv(const Node& conv, const LoadedGraph& g,
                const std::map<std::string, size_t>& producer, int64_t block) {
  if (conv.inputs.size() < 2 || conv.outputs.size() != 1) return false;
  const Constant* w = constant(g, producer, conv.inputs[1]);
  if (w == nullptr || w->elem != Elem::f32 || w->shape.size() != 4) return false;
  if (conv.inputs.size() >= 3 && !conv.inputs[2].empty() &&
      constant(g, producer, conv.inputs[2]) == nullptr)
    return false;
  const int64_t out_c = w->shape[0], in_c = w->shape[1];
  const int64_t group = attr_int(conv, "group", 1);
  if (group > 1) {
    if (out_c % block != 0) return false;
    if (in_c == 1 && out_c == group) return true;  // depthwise
    return in_c % block == 0 && out_c % group == 0 && (out_c / group) % block == 0;
  }
  return in_c < block || in_c % block == 0;
}

// Producers whose float 4-D outputs ONNX Runtime keeps in NCHWc in the
// networks this models (convolutions, pools, the residual Adds and their
// activations): the Sum must be NCHWc too. A narrower rule than ORT's own
// (which follows every node's format), so some graphs it would fuse stay
// unfused here and differ from ORT in the last bits.
bool nchwc_producer(const Node& n) {
  return is(n, "Conv") || (n.domain == "com.microsoft" && n.op_type == "FusedConv") ||
         is(n, "MaxPool") || is(n, "Add") || is(n, "Relu");
}

}  // namespace

int64_t conv_add_block(Profile profile) {
  Conv2dParams p;
  apply_profile(p, profile);
  return mlas_nchwc_block(p.accumulation);
}

void fuse_conv_add(LoadedGraph& g, int64_t block, std::vector<std::string>* log) {
  // NPUKIT_CONV_ADD_FUSION=0 keeps Conv then Add (to measure what it changes).
  const char* env = std::getenv("NPUKIT_CONV_ADD_FUSION");
  if (block <= 0 || (env && std::string(env) == "0")) return;
  std::set<std::string> graph_outputs;
  for (const Declared& d : g.outputs) graph_outputs.insert(d.info.name);
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> users;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& o : g.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) users[in].push_back(i);
  }
  auto single_use = [&](const std::string& v) {
    const auto u = users.find(v);
    return !graph_outputs.count(v) && u != users.end() && u->second.size() == 1;
  };
  std::vector<char> dead(g.nodes.size(), 0);
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    const Node& add = g.nodes[a];
    if (!is(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    if (add.inputs[0].empty() || add.inputs[1].empty() || add.inputs[0] == add.inputs[1]) continue;
    // The first input made by a fusable convolution takes the other as its Sum.
    for (size_t k = 0; k < 2; ++k) {
      const std::string &y = add.inputs[k], &z = add.inputs[1 - k];
      const auto pc = producer.find(y), pz = producer.find(z);
      if (pc == producer.end() || pz == producer.end() || dead[pc->second] || dead[pz->second])
        continue;
      Node& conv = g.nodes[pc->second];
      if (!is(conv, "Conv") || !single_use(y) || !nchwc_conv(conv, g, producer, block) ||
          !nchwc_producer(g.nodes[pz->second]))
        continue;
      std::string note = "Conv '" + conv.name + "' + Add '" + add.name + "'";
      conv.op_type = "FusedConv";
      conv.domain = "com.microsoft";
      conv.opset = 1;
      conv.inputs.resize(4);
      conv.inputs[3] = z;
      conv.outputs[0] = add.outputs[0];
      producer[add.outputs[0]] = pc->second;
      dead[a] = 1;
      // A Relu that is the Add's only user becomes the activation.
      const std::string& sum = add.outputs[0];
      if (single_use(sum)) {
        const size_t r = users[sum][0];
        const Node& relu = g.nodes[r];
        if (is(relu, "Relu") && relu.attrs.empty() && relu.outputs.size() == 1) {
          Attr kind;
          kind.kind = Attr::Kind::s;
          kind.s = "Relu";
          conv.attrs["activation"] = kind;
          conv.outputs[0] = relu.outputs[0];
          producer[relu.outputs[0]] = pc->second;
          note += " + Relu '" + relu.name + "'";
          dead[r] = 1;
        }
      }
      if (log) log->push_back(note + " -> FusedConv");
      break;
    }
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace npukit::onnx
