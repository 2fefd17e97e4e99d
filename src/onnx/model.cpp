// The executor: checks the graph once at load, plans shapes and buffers once
// per input shape, then runs the planned kernels in topological order.
#include "npukit/onnx/model.hpp"

#include "npukit/memory_budget.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/parallel.hpp"
#include "npukit/read_file.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <sstream>
#include <tuple>

#include "core/pool_trace.hpp"
#include "onnx/attributes.hpp"
#include "onnx/batch_slices.hpp"
#include "onnx/conv_activation_fusion.hpp"
#include "onnx/conv_add_fusion.hpp"
#include "onnx/graph.hpp"
#include "onnx/int8_layout.hpp"
#include "onnx/loaded.hpp"
#include "onnx/model_impl.hpp"
#include "onnx/op_families.hpp"
#include "onnx/ort_nchwc.hpp"
#include "onnx/qdq_fusion.hpp"

namespace npukit::onnx {

std::string Issue::text() const {
  if (node.empty() && op_type.empty()) return message;
  return "node '" + node + "' (" + op_type + "): " + message;
}

namespace {
std::string issues_text(const std::vector<Issue>& issues) {
  std::string s;
  for (const Issue& i : issues) s += "\n  " + i.text();
  return s;
}

std::string shape_with_names(const ValueInfo& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.shape.size(); ++i)
    out += (i ? ", " : "") + (v.shape[i] < 0 ? v.dim_names[i] : std::to_string(v.shape[i]));
  return out + "]";
}

std::vector<char> read_file(const std::string& path) {
  return read_file_bounded("npukit::onnx::Model::load", "path", path, kMaxModelFileBytes,
                           "a readable ONNX file");
}

// External initializer data is named relative to this directory.
std::string model_directory(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}
}  // namespace

ModelError::ModelError(const std::string& source, std::vector<Issue> issues)
    : Error("npukit::onnx::Model::load", "model", "'" + source + "'",
            "a model the runner supports; problems found:" + issues_text(issues)),
      issues_(std::move(issues)) {}

bool Model::Impl::fold(const Node& n, const std::vector<Operand>& in, NodePlan& p) {
  const size_t count = std::min(n.outputs.size(), p.outputs.size());
  bool all_known = !p.known.empty();
  for (size_t k = 0; all_known && k < count; ++k)
    all_known = n.outputs[k].empty() || (k < p.known.size() && p.known[k]);
  if (!all_known) {
    // Shape subgraphs (int64, bool) and data movement fold; float arithmetic
    // on constants stays a step (its nodes keep their profile and timing).
    bool small_ints = true;
    for (const Operand& o : p.outputs)
      small_ints = small_ints && (o.elem == Elem::s64 || o.elem == Elem::b8);
    if (!small_ints && !is_data_movement_op(n.domain, n.op_type)) return false;
    for (const Operand& o : in)
      if (o.present && !o.value) return false;
    std::vector<TensorView> in_views, out_views;
    for (const Operand& o : in)
      in_views.push_back(o.present ? o.value->tensor.view() : TensorView());
    std::vector<Tensor> outs;
    for (const Operand& o : p.outputs) {
      outs.emplace_back(*dtype_of(o.elem), o.shape);
      out_views.push_back(outs.back().view());
    }
    p.run(in_views, out_views);
    p.known.clear();
    for (Tensor& t : outs) p.known.push_back(constant_from(std::move(t)));
  }
  for (size_t k = 0; k < count; ++k) {
    if (n.outputs[k].empty()) continue;
    const size_t v = id(n.outputs[k]);
    plan_values.push_back(p.known[k]);
    types[v] = p.outputs[k];
    types[v].value = p.known[k].get();
  }
  return true;
}

// A Constant node's value, or null (with an issue) when it has none the runner reads.
std::shared_ptr<Constant> Model::Impl::constant_node_value(const Node& n,
                                                           std::vector<Issue>& issues) {
  if (auto it = n.attrs.find("value"); it != n.attrs.end() && it->second.tensor)
    return it->second.tensor;
  if (auto f = n.attrs.find("value_float"); f != n.attrs.end())
    return constant_from(Tensor::from<float>({}, {f->second.f}));
  if (auto fs = n.attrs.find("value_floats"); fs != n.attrs.end()) {
    const std::vector<float>& v = fs->second.floats;
    return constant_from(Tensor::from<float>({static_cast<int64_t>(v.size())}, v));
  }
  if (auto v = n.attrs.find("value_int"); v != n.attrs.end())
    return constant_from(Tensor::from<int64_t>({}, {v->second.i}));
  if (auto vs = n.attrs.find("value_ints"); vs != n.attrs.end()) {
    const std::vector<int64_t>& v = vs->second.ints;
    return constant_from(Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v));
  }
  issues.push_back({n.name, n.op_type,
                    "no supported value attribute (value, value_float, "
                    "value_floats, value_int, value_ints)"});
  return nullptr;
}

// Inputs: types the runtime can hold, shapes of rank <= 8. Registers the
// inputs and the initializers as values.
void Model::Impl::check_inputs(std::vector<Issue>& issues) {
  for (const Declared& d : g.inputs) {
    const auto e = elem_from_onnx(d.onnx_type);
    if (!e || !dtype_of(*e))
      issues.push_back({"", "",
                        "graph input '" + d.info.name + "' has element type " +
                            onnx_type_name(d.onnx_type) +
                            " (float, uint8, int8, int32, int64 or bool expected)"});
    else if (!d.has_shape)
      issues.push_back({"", "", "graph input '" + d.info.name + "' has no shape"});
    // proto.cpp names a negative declared size by its value ("-5").
    else if (std::any_of(d.info.dim_names.begin(), d.info.dim_names.end(),
                         [](const std::string& n) { return !n.empty() && n[0] == '-'; }))
      issues.push_back({"", "",
                        "graph input '" + d.info.name + "' declares a negative dimension " +
                            shape_with_names(d.info) + " (sizes >= 0 or symbolic names)"});
    else if (d.info.shape.size() > static_cast<size_t>(kMaxRank))
      issues.push_back({"", "",
                        "graph input '" + d.info.name + "' has rank " +
                            std::to_string(d.info.shape.size()) + " (up to 8)"});
    inputs.push_back(d.info);
    input_ids.push_back(id(d.info.name));
  }
  for (const auto& [name, k] : g.constants) constant_of[id(name)] = k.get();
}

// Who produces each value (one producer per value); Constant nodes become
// constants; every other node must be a known operator with a usable arity.
// Returns the nodes left to plan.
std::vector<size_t> Model::Impl::check_nodes(const std::set<size_t>& is_input,
                                             std::map<std::string, size_t>& producer,
                                             std::vector<Issue>& issues) {
  std::vector<size_t> pending;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      auto [it, fresh] = producer.emplace(o, i);
      const bool clash = !fresh || g.constants.count(o) || is_input.count(id(o));
      if (clash)
        issues.push_back({n.name, n.op_type,
                          "output '" + o + "' is already produced by " +
                              (fresh ? std::string("a graph input or initializer")
                                     : "node '" + g.nodes[it->second].name + "'")});
    }
    const OpEntry* op = find_op(n.domain, n.op_type);
    if (!op) {
      issues.push_back({n.name, n.op_type,
                        "unsupported operator" +
                            (n.domain.empty() ? std::string() : " (domain " + n.domain + ")")});
      continue;
    }
    if (n.opset == 0)
      issues.push_back({n.name, n.op_type,
                        "its domain " + (n.domain.empty() ? std::string("(ai.onnx)") : n.domain) +
                            " has no opset import"});
    const auto ni = static_cast<int>(n.inputs.size());
    if (ni < op->min_inputs || (op->max_inputs >= 0 && ni > op->max_inputs)) {
      issues.push_back(
          {n.name, n.op_type,
           std::to_string(ni) + " inputs (" + std::to_string(op->min_inputs) +
               (op->max_inputs < 0 ? " or more" : " to " + std::to_string(op->max_inputs)) +
               " expected)"});
      continue;
    }
    int used_outputs = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty()) used_outputs = static_cast<int>(k) + 1;
    if (used_outputs > op->max_outputs || n.outputs.empty()) {
      issues.push_back({n.name, n.op_type,
                        std::to_string(n.outputs.size()) + " outputs (the runner computes " +
                            std::to_string(op->max_outputs) + ")"});
      continue;
    }
    if (n.op_type == "Constant" && n.domain.empty()) {
      if (std::shared_ptr<Constant> k = constant_node_value(n, issues)) {
        folded.push_back(k);
        constant_of[id(n.outputs[0])] = k.get();
      }
      continue;
    }
    pending.push_back(i);
  }
  return pending;
}

// Every input must come from somewhere; returns the values that do not.
std::set<size_t> Model::Impl::check_sources(const std::set<size_t>& is_input,
                                            const std::map<std::string, size_t>& producer,
                                            std::vector<Issue>& issues) {
  std::set<size_t> missing_values;
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      const size_t v = id(in);
      const bool known = constant_of[v] || producer.count(in) || is_input.count(v);
      if (!known && !missing_values.count(v)) {
        issues.push_back(
            {n.name, n.op_type,
             "input '" + in + "' is missing: no graph input, initializer or node produces it"});
      }
      if (!known) missing_values.insert(v);
    }
  }
  return missing_values;
}

// Topological order (Kahn) over every node, runnable or not, so that only
// nodes on a cycle (or behind one) are left over. Missing values count as
// available here: they are reported by check_sources. Each value wakes its
// consumers once and the smallest ready node index goes first (a sorted graph
// keeps its order): O(E log N), so a large graph in reverse order loads fast.
// Fills `order` with the runnable (pending) nodes.
void Model::Impl::order_nodes(const std::vector<size_t>& pending,
                              const std::set<size_t>& missing_values, std::vector<Issue>& issues) {
  std::vector<std::vector<size_t>> node_in(g.nodes.size()), node_out(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) node_in[i].push_back(id(in));
    for (const std::string& o : g.nodes[i].outputs)
      if (!o.empty()) node_out[i].push_back(id(o));
  }
  std::vector<char> ready(names.size(), 0);
  for (size_t v : input_ids) ready[v] = 1;
  for (size_t v : missing_values) ready[v] = 1;
  for (size_t v = 0; v < constant_of.size(); ++v)
    if (constant_of[v]) ready[v] = 1;
  const std::set<size_t> runnable(pending.begin(), pending.end());
  std::vector<size_t> left;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!(g.nodes[i].op_type == "Constant" && g.nodes[i].domain.empty()))
      left.push_back(i);
    else if (!g.nodes[i].outputs.empty())
      ready[id(g.nodes[i].outputs[0])] = 1;
  }
  std::vector<size_t> waiting(g.nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(ready.size());
  for (size_t i : left)
    for (size_t v : node_in[i])
      if (!ready[v]) {
        ++waiting[i];
        consumers[v].push_back(i);
      }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> queue;
  for (size_t i : left)
    if (waiting[i] == 0) queue.push(i);
  std::vector<char> done(g.nodes.size(), 0);
  while (!queue.empty()) {
    const size_t i = queue.top();
    queue.pop();
    done[i] = 1;
    if (runnable.count(i)) order.push_back(i);
    for (size_t v : node_out[i]) {
      if (ready[v]) continue;
      ready[v] = 1;
      for (size_t c : consumers[v])
        if (--waiting[c] == 0) queue.push(c);
    }
  }
  for (size_t i : left) {
    if (done[i]) continue;
    const Node& n = g.nodes[i];
    issues.push_back({n.name, n.op_type,
                      "is on a cycle (or depends on one): its inputs are never all available"});
  }
}

// Every graph output must be produced by a node, an initializer or an input.
void Model::Impl::check_outputs(const std::set<size_t>& is_input,
                                const std::map<std::string, size_t>& producer,
                                std::vector<Issue>& issues) {
  for (const Declared& d : g.outputs) {
    outputs.push_back(d.info);
    output_ids.push_back(id(d.info.name));
    const size_t v = output_ids.back();
    if (!producer.count(d.info.name) && !constant_of[v] && !is_input.count(v))
      issues.push_back({"", "", "graph output '" + d.info.name + "' is produced by no node"});
  }
  if (g.outputs.empty()) issues.push_back({"", "", "the graph has no outputs"});
}

void Model::Impl::check_graph(std::vector<Issue>& issues) {
  check_inputs(issues);
  const std::set<size_t> is_input(input_ids.begin(), input_ids.end());  // O(log n) lookups
  std::map<std::string, size_t> producer;
  const std::vector<size_t> pending = check_nodes(is_input, producer, issues);
  const std::set<size_t> missing_values = check_sources(is_input, producer, issues);
  order_nodes(pending, missing_values, issues);
  check_outputs(is_input, producer, issues);
}

// The types known before any node: constants, and the graph inputs at
// `shapes`. Returns which values depend on an int64 input whose value is not
// known yet (their nodes are planned at run time).
std::vector<char> Model::Impl::seed_types(const std::vector<Shape>& shapes) {
  types.assign(names.size(), Operand{});
  plan_values.clear();  // after types: nothing refers to the previous plan's values
  for (size_t v = 0; v < names.size(); ++v)
    if (constant_of[v]) {
      types[v] = make_operand(constant_of[v]->elem, constant_of[v]->shape);
      types[v].value = constant_of[v];
    }
  std::vector<char> deferred(names.size(), 0);
  for (size_t i = 0; i < input_ids.size(); ++i)
    if (auto e = elem_from_onnx(g.inputs[i].onnx_type)) {
      types[input_ids[i]] = make_operand(*e, shapes[i]);
      if (i < input_values.size() && input_values[i])
        types[input_ids[i]].value = input_values[i].get();
      else if (*e == Elem::s64)
        deferred[input_ids[i]] = 1;
    }
  return deferred;
}

// The node's input types into `in` and their values' ids into s.in; marks its
// outputs deferred behind a deferred input. False when an input has no type
// (behind a node that failed, reported, or was deferred).
bool Model::Impl::gather_inputs(const Node& n, Step& s, std::vector<Operand>& in,
                                std::vector<char>& deferred, bool& defer) {
  bool inputs_ok = true;
  defer = false;
  for (const std::string& name : n.inputs) {
    if (name.empty()) {
      in.emplace_back();
      s.in.push_back(SIZE_MAX);
      continue;
    }
    const size_t v = id(name);
    inputs_ok = inputs_ok && types[v].present;
    defer = defer || deferred[v];
    in.push_back(types[v]);
    s.in.push_back(v);
  }
  if (defer)
    for (const std::string& o : n.outputs)
      if (!o.empty()) deferred[id(o)] = 1;
  return inputs_ok;
}

namespace {

// Most arithmetic kernels pad views to 4-D: only data movement and
// element-wise math see higher ranks.
void check_ranks(const Node& n, const std::vector<Operand>& in, const NodePlan& p) {
  const bool any_rank = accepts_any_rank(n.domain, n.op_type);
  const size_t max_rank = any_rank ? kMaxRank : kMaxKernelRank;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].present && in[k].shape.size() > max_rank)
      fail(n.op_type, ("input " + std::to_string(k)).c_str(), "shape " + shape_text(in[k].shape),
           "rank up to 4 for this operator");
  for (const Operand& o : p.outputs)
    if (o.shape.size() > max_rank || shape_numel(o.shape) > kMaxElements)
      fail(n.op_type, "output", "shape " + shape_text(o.shape),
           "rank up to " + std::to_string(max_rank) + " and at most 2^28 elements");
}

}  // namespace

// Plans node `ni` from its input types: its profile (the profile table's
// decision), its outputs' types and its step. False when its outputs were
// folded into values of the plan (then it has no step).
bool Model::Impl::plan_node(size_t ni, const std::vector<Operand>& in, OrtNchwcTracker& nchwc,
                            Step& s) {
  const Node& n = g.nodes[ni];
  const Planner int_planner = known_int_arith_planner(n, in);
  const Planner planner = int_planner ? int_planner : find_op(n.domain, n.op_type)->plan;
  // With fallback, a node the profile does not cover keeps ONNX Runtime's semantics.
  node_profile[ni] = node_semantics(n, profile, fallback);
  NodePlan p = planner(PlanContext{n, in, node_profile[ni], nchwc.global_pool_rewritten(n, in)});
  check_ranks(n, in, p);
  if (fold(n, in, p)) return false;  // ONNX Runtime folds it too: its outputs are initializers
  nchwc.record(n, in);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k].empty()) continue;
    const size_t v = id(n.outputs[k]);
    types[v] = p.outputs.at(k);
    s.out.push_back(v);
  }
  s.run = std::move(p.run);
  s.in_place_input = p.in_place_input;
  return true;
}

void Model::Impl::plan(const std::vector<Shape>& shapes, std::vector<Issue>* issues) {
  std::vector<char> deferred = seed_types(shapes);
  node_profile.assign(g.nodes.size(), profile);
  steps.clear();
  std::vector<std::string> graph_outputs;
  for (const Declared& d : g.outputs) graph_outputs.push_back(d.info.name);
  OrtNchwcTracker nchwc(g.nodes, graph_outputs, onnxruntime_nchwc_block());
  for (size_t ni : order) {
    const Node& n = g.nodes[ni];
    Step s;
    s.node = ni;
    std::vector<Operand> in;
    bool defer = false;
    if (!gather_inputs(n, s, in, deferred, defer)) continue;
    try {
      if (!plan_node(ni, in, nchwc, s)) continue;
    } catch (const Error& e) {
      if (!issues) throw ModelError(source, {{n.name, n.op_type, e.what()}});
      // Planned again at run time, when the int64 inputs' values are known.
      if (!defer) issues->push_back({n.name, n.op_type, e.what()});
      continue;
    }
    steps.push_back(std::move(s));
  }
  if (issues) check_declared_types(*issues);
}

// Declared types of outputs and intermediate values must match the inferred ones.
void Model::Impl::check_declared_types(std::vector<Issue>& issues) const {
  auto compare = [&](const Declared& d, const char* what) {
    auto it = ids.find(d.info.name);
    if (it == ids.end() || !types[it->second].present || d.onnx_type == 0) return;
    const Operand& t = types[it->second];
    const auto e = elem_from_onnx(d.onnx_type);
    if (!e || *e != t.elem) {
      issues.push_back({"", "",
                        std::string(what) + " '" + d.info.name + "' is declared " +
                            onnx_type_name(d.onnx_type) + " but computed as " + elem_name(t.elem)});
      return;
    }
    if (!d.has_shape) return;
    bool same = d.info.shape.size() == t.shape.size();
    for (size_t k = 0; same && k < t.shape.size(); ++k)
      same = d.info.shape[k] < 0 || d.info.shape[k] == t.shape[k];
    if (!same)
      issues.push_back({"", "",
                        std::string(what) + " '" + d.info.name + "' is declared " +
                            shape_with_names(d.info) + " but computed as " + shape_text(t.shape)});
  };
  for (const Declared& d : g.outputs) compare(d, "graph output");
  for (const Declared& d : g.value_infos) compare(d, "value");
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::string& path, Profile profile, bool fallback, Intermediates kept) {
  const std::vector<char> bytes = read_file(path);
  const std::string dir = model_directory(path);
  return from_bytes_in(bytes.data(), bytes.size(), profile, path, fallback, &dir, kept);
}

namespace {
// ONNX Runtime rewrites QDQ groups into integer operators before running them;
// profile pytorch runs the same groups as PyTorch's quantized operators (the
// fused operators follow the profile). Other profiles, and every profile with
// NPUKIT_QDQ=literal, run the QDQ graph literally: dequantize, float operator,
// quantize (docs/qdq.md).
// NPUKIT_POOL_TRACE's FILE.steps line for a node the runner ran (pool_trace.hpp).
void trace_step(const Node& n, std::chrono::steady_clock::time_point t0,
                std::chrono::steady_clock::time_point t1) {
  const auto ns = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  detail::record_step(ns(t0), ns(t1), n.op_type, n.name);
}

bool fuses_qdq(Profile profile) {
  const char* mode = std::getenv("NPUKIT_QDQ");
  if (mode && std::string(mode) == "literal") return false;
  const Profile base = semantics_base(profile);
  return base == Profile::onnxruntime || base == Profile::pytorch;
}
}  // namespace

Model Model::from_bytes(const void* data, size_t size, Profile profile, const std::string& source,
                        bool fallback, Intermediates kept) {
  return from_bytes_in(data, size, profile, source, fallback, nullptr, kept);
}

Model Model::from_bytes_in(const void* data, size_t size, Profile profile,
                           const std::string& source, bool fallback, const std::string* model_dir,
                           Intermediates kept) {
  auto impl = std::make_unique<Impl>();
  impl->profile = profile;
  impl->fallback = fallback;
  impl->kept = kept;
  impl->source = source;
  impl->g = read_model(data, size, source, model_dir);
  // ONNX Runtime and PyTorch rewrite QDQ groups into integer operators
  // (fuses_qdq); every other profile runs the QDQ graph literally (in float).
  if (fuses_qdq(profile))
    fuse_qdq(impl->g, nullptr, semantics_base(profile) == Profile::onnxruntime);
  // Conv + Relu/Clip as one node (ORT's ConvActivationFusion; the same bits),
  // unless the caller wants the conv's own output too.
  if (fuses_conv_activation(profile) && kept == Intermediates::may_fuse) {
    fuse_conv_activation(impl->g);
    fuse_conv_add(impl->g, conv_add_block(profile));
  }
  std::vector<Issue> issues = impl->g.issues;
  impl->check_graph(issues);
  // Shape-check with every symbolic dimension bound to 1.
  std::vector<Shape> shapes;
  for (const ValueInfo& v : impl->inputs) {
    Shape s = v.shape;
    for (int64_t& d : s) d = d < 0 ? 1 : d;
    shapes.push_back(s);
  }
  impl->plan(shapes, &issues);
  if (!issues.empty()) throw ModelError(source, std::move(issues));
  impl->planned_shapes.clear();  // buffers come with the first run
  return Model(std::move(impl));
}

Profile Model::profile() const {
  return impl_->profile;
}
const std::vector<ValueInfo>& Model::inputs() const {
  return impl_->inputs;
}
const std::vector<ValueInfo>& Model::outputs() const {
  return impl_->outputs;
}
int64_t Model::plans() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  return impl_->plan_count;
}

const std::vector<TensorView>& Model::execute(const std::vector<TensorView>& in) {
  constexpr const char* fn = "npukit::onnx::Model::run";
  Impl& m = *impl_;
  std::lock_guard<std::recursive_mutex> lock(m.run_mutex);
  check(in.size() == m.inputs.size(), fn, "inputs", std::to_string(in.size()) + " tensors",
        std::to_string(m.inputs.size()) + " (one per graph input)");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < in.size(); ++i) {
    const ValueInfo& v = m.inputs[i];
    const std::string param = "input " + v.name;  // no nested quotes in the message
    check(in[i].dtype() == v.dtype, fn, param.c_str(), dtype_name(in[i].dtype()),
          dtype_name(v.dtype));
    bool ok = in[i].rank() == static_cast<int>(v.shape.size());
    for (size_t k = 0; ok && k < v.shape.size(); ++k)
      ok = (v.shape[k] < 0 && in[i].dim(static_cast<int>(k)) >= 1) ||
           v.shape[k] == in[i].dim(static_cast<int>(k));
    check(ok, fn, param.c_str(), "shape " + shape_text(in[i].shape()),
          "shape " + shape_with_names(v));
    shapes.push_back(in[i].shape());
  }
  // int64 inputs' values take part in planning (see input_values).
  bool same_values = m.planned_values.size() == in.size();
  m.input_values.assign(in.size(), nullptr);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].dtype() != DType::s64) continue;
    Tensor t(DType::s64, in[i].shape());
    copy(in[i], t.view());
    const Constant* old = same_values ? m.planned_values[i].get() : nullptr;
    same_values = old && old->ints == t.to_vector<int64_t>();
    m.input_values[i] = same_values ? m.planned_values[i] : constant_from(std::move(t));
  }
  if (shapes != m.planned_shapes || !same_values || m.slice_setting != batch_slice_setting()) {
    m.plan(shapes, nullptr);
    m.allocate();
    m.planned_shapes = shapes;
    m.planned_values = m.input_values;
    m.plan_slices(shapes);
  }
  m.last_run_sliced = !m.slices.empty();
  if (m.last_run_sliced) {
    m.run_sliced(in);  // records the run's times
    return m.output_views;
  }
  for (size_t i = 0; i < in.size(); ++i) copy(in[i], m.views[m.input_ids[i]]);
  m.run_seconds.assign(m.seconds.size(), 0.0);
  static const bool tracing = detail::pool_trace_on();
  for (Impl::Step& s : m.steps) {
    if (s.view_only) continue;
    const auto t0 = std::chrono::steady_clock::now();
    s.run(s.in_views, s.out_views);
    const auto t1 = std::chrono::steady_clock::now();
    m.run_seconds[s.node] += std::chrono::duration<double>(t1 - t0).count();
    if (tracing) trace_step(m.g.nodes[s.node], t0, t1);
  }
  m.record_run_times();
  return m.output_views;
}

std::vector<Tensor> Model::run(const std::vector<TensorView>& inputs) {
  // Held until the outputs are copied, so that concurrent runs cannot overwrite them.
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  std::vector<Tensor> out;
  for (const TensorView& v : execute(inputs)) {
    Tensor t(v.dtype(), v.shape());
    copy(v, t.view());
    out.push_back(std::move(t));
  }
  return out;
}

void Model::Impl::record_run_times() {
  for (size_t k = 0; k < seconds.size(); ++k) {
    seconds[k] += run_seconds[k];
    best_seconds[k] = timed_runs == 0 ? run_seconds[k] : std::min(best_seconds[k], run_seconds[k]);
  }
  ++timed_runs;
}

std::vector<LayerTime> Model::layer_times() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  std::vector<LayerTime> out;
  for (const Impl::Step& s : impl_->steps) {
    const Node& n = impl_->g.nodes[s.node];
    const bool timed = !impl_->seconds.empty();
    out.push_back({n.name, n.op_type, impl_->node_profile[s.node],
                   timed ? impl_->seconds[s.node] : 0.0,
                   timed ? impl_->best_seconds[s.node] : 0.0});
  }
  return out;
}

std::vector<NodeInfo> Model::nodes() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  const Impl& m = *impl_;
  std::vector<NodeInfo> out;
  for (const Impl::Step& s : m.steps) {
    const Node& n = m.g.nodes[s.node];
    NodeInfo info{n.name, n.op_type, n.domain, m.node_profile[s.node], n.inputs, n.outputs, {}, {}};
    for (const std::string& o : n.outputs) {
      const auto it = o.empty() ? m.ids.end() : m.ids.find(o);
      const bool known = it != m.ids.end() && m.types[it->second].present;
      info.output_types.push_back(known ? elem_name(m.types[it->second].elem) : "");
      info.output_shapes.push_back(known ? m.types[it->second].shape : Shape{});
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<NodeInfo> Model::infer(const std::vector<Shape>& input_shapes) {
  constexpr const char* fn = "npukit::onnx::Model::infer";
  Impl& m = *impl_;
  std::lock_guard<std::recursive_mutex> lock(m.run_mutex);
  check(input_shapes.size() == m.inputs.size(), fn, "input_shapes",
        std::to_string(input_shapes.size()) + " shapes",
        std::to_string(m.inputs.size()) + " (one per graph input)");
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    const ValueInfo& v = m.inputs[i];
    bool ok = input_shapes[i].size() == v.shape.size();
    for (size_t k = 0; ok && k < v.shape.size(); ++k)
      ok = (v.shape[k] < 0 && input_shapes[i][k] >= 1) || v.shape[k] == input_shapes[i][k];
    check(ok, fn, ("input " + v.name).c_str(), "shape " + shape_text(input_shapes[i]),
          "shape " + shape_with_names(v));
  }
  m.planned_shapes.clear();  // the buffers no longer match the plan: the next run plans again
  m.plan(input_shapes, nullptr);
  return nodes();
}

std::vector<NamedValue> Model::values() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  const Impl& m = *impl_;
  std::vector<NamedValue> out;
  if (m.planned_shapes.empty()) return out;  // nothing has run on the current plan
  if (m.last_run_sliced) {                   // only the outputs were kept whole
    for (size_t v : m.output_ids) out.push_back({m.names[v], "", m.views[v]});
    return out;
  }
  for (size_t i = 0; i < m.input_ids.size(); ++i)
    out.push_back({m.names[m.input_ids[i]], "", m.views[m.input_ids[i]]});
  for (const Impl::Step& s : m.steps)
    for (size_t v : s.out)  // values in the shared arena were overwritten by later ones
      if (m.views[v].raw() && !m.shared[v])
        out.push_back({m.names[v], m.g.nodes[s.node].name, m.views[v]});
  return out;
}

MemoryUse Model::memory_use() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  return impl_->memory;
}

int64_t Model::timed_runs() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  return impl_->timed_runs;
}

void Model::reset_layer_times() {
  std::lock_guard<std::recursive_mutex> lock(impl_->run_mutex);
  std::fill(impl_->seconds.begin(), impl_->seconds.end(), 0.0);
  std::fill(impl_->best_seconds.begin(), impl_->best_seconds.end(), 0.0);
  impl_->timed_runs = 0;
}

std::vector<OperatorInfo> operator_list() {
  std::vector<OperatorInfo> out;
  for (const std::string& full : supported_operators()) {
    // Names are "Op" or "<domain>.Op"; domains hold dots, operator names do not.
    const size_t dot = full.rfind('.');
    OperatorInfo info;
    info.domain = dot == std::string::npos ? "" : full.substr(0, dot);
    info.op_type = dot == std::string::npos ? full : full.substr(dot + 1);
    info.min_opset = info.domain.empty() ? kMinOpset : 1;
    info.max_opset = info.domain.empty() ? kMaxOpset : 1;
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const OperatorInfo& a, const OperatorInfo& b) {
    return std::tie(a.domain, a.op_type) < std::tie(b.domain, b.op_type);
  });
  return out;
}

ModelSummary summarize(const std::string& path, Profile profile) {
  const std::vector<char> bytes = read_file(path);
  const std::string dir = model_directory(path);
  LoadedGraph g = read_model(bytes.data(), bytes.size(), path, &dir);
  ModelSummary s;
  s.profile = profile;
  if (fuses_qdq(profile)) {
    QdqFusionLog log;
    fuse_qdq(g, &log, semantics_base(profile) == Profile::onnxruntime);
    s.rewrites = std::move(log.lines);
  }
  if (fuses_conv_activation(profile)) {
    fuse_conv_activation(g, &s.rewrites);
    fuse_conv_add(g, conv_add_block(profile), &s.rewrites);
  }
  s.producer = g.producer;
  s.ir_version = g.ir_version;
  s.opset = g.opset;
  for (const Declared& d : g.inputs) s.inputs.push_back(d.info);
  for (const Declared& d : g.outputs) s.outputs.push_back(d.info);
  for (const Node& n : g.nodes)
    s.nodes.push_back({n.name, n.op_type, n.domain, find_op(n.domain, n.op_type) != nullptr});
  s.supported_ops = supported_operators();
  return s;
}

}  // namespace npukit::onnx
