// `npukit info MODEL.onnx`: inputs, outputs, operators and whether the runner
// supports each, then the result of the full model check.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "host_probe.hpp"
#include "npukit/kernels.hpp"
#include "npukit/onnx/model.hpp"
#include "npukit/ops/profile_support.hpp"
#include "progress.hpp"

namespace npukit::cli {

namespace {

std::string shape_of(const onnx::ValueInfo& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.shape.size(); ++i)
    s += (i ? ", " : "") + (v.shape[i] < 0 ? v.dim_names[i] : std::to_string(v.shape[i]));
  return s + "]";
}

// Shapes as JSON arrays: numbers, symbolic dimensions as their names.
std::string shape_json(const Shape& shape, const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") +
         (shape[i] < 0 ? json_string(i < names.size() ? names[i] : "?") : std::to_string(shape[i]));
  return s + "]";
}

std::string values_json(const std::vector<onnx::ValueInfo>& vs) {
  std::string s = "[";
  for (size_t i = 0; i < vs.size(); ++i)
    s += fmt::format("{}{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}}}", i ? ", " : "",
                     json_string(vs[i].name), dtype_name(vs[i].dtype),
                     shape_json(vs[i].shape, vs[i].dim_names));
  return s + "]";
}

// Inferred output shapes with symbolic input dimensions kept symbolic: the
// plan of the load (every symbol bound to 1) is compared with one where every
// symbol is 7, and a dimension that scales with the binding is shown as "N" or
// "N*k".
struct InferredNode {
  onnx::NodeInfo node;
  std::vector<std::vector<std::string>> dims;  // per output, per axis
};

std::vector<InferredNode> infer_nodes(onnx::Model& model) {
  std::string symbol;
  auto bound = [&](int64_t b) {
    std::vector<Shape> shapes;
    for (const onnx::ValueInfo& v : model.inputs()) {
      Shape s = v.shape;
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] < 0) {
          if (symbol.empty()) symbol = v.dim_names[i].empty() ? "N" : v.dim_names[i];
          s[i] = b;
        }
      shapes.push_back(s);
    }
    return model.infer(shapes);
  };
  // Loading planned with every symbol bound to 1 already.
  const std::vector<onnx::NodeInfo> one = model.nodes();
  std::vector<onnx::NodeInfo> seven;
  try {
    seven = bound(7);
  } catch (const Error&) {
    seven = one;  // a graph that only plans with the symbols at 1: show those sizes
  }
  std::vector<InferredNode> out;
  for (size_t n = 0; n < one.size(); ++n) {
    InferredNode r{one[n], {}};
    for (size_t k = 0; k < one[n].output_shapes.size(); ++k) {
      std::vector<std::string> dims;
      const Shape& a = one[n].output_shapes[k];
      const Shape* b = n < seven.size() && k < seven[n].output_shapes.size()
                           ? &seven[n].output_shapes[k]
                           : nullptr;
      for (size_t i = 0; i < a.size(); ++i) {
        const int64_t d7 = b && i < b->size() ? (*b)[i] : a[i];
        if (d7 == a[i])
          dims.push_back(std::to_string(a[i]));
        else if (d7 == 7 * a[i])
          dims.push_back(a[i] == 1 ? symbol : symbol + "*" + std::to_string(a[i]));
        else
          dims.push_back("?");
      }
      r.dims.push_back(std::move(dims));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string dims_text(const std::vector<std::string>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
  return s + "]";
}

std::string dims_json(const std::vector<std::string>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    const bool number =
        !dims[i].empty() && dims[i].find_first_not_of("0123456789") == std::string::npos;
    s += (i ? ", " : "") + (number ? dims[i] : json_string(dims[i]));
  }
  return s + "]";
}

// What `npukit info MODEL` reports: the file's summary, the load's problems,
// the planned nodes with their inferred shapes, and a count per operator.
struct ModelFacts {
  std::string path;
  Profile profile;
  onnx::ModelSummary summary;
  std::vector<std::string> problems;
  std::vector<InferredNode> nodes;
  struct OpCount {
    int count = 0;
    bool supported = false;
  };
  std::map<std::string, OpCount> ops;

  // Why an unsupported operator is not: npukit lacks it.
  std::string why_not(const std::string& op) const {
    for (const onnx::NodeSummary& n : summary.nodes)
      if ((n.domain.empty() ? n.op_type : n.domain + "." + n.op_type) == op && !n.supported)
        return "no such operator in npukit (npukit info --operators lists them)";
    return "";
  }
};

ModelFacts gather_model_facts(const std::string& path, Profile profile, bool fallback) {
  ModelFacts f{path, profile, onnx::summarize(path, profile), {}, {}, {}};
  try {
    onnx::Model model = onnx::Model::load(path, profile, fallback);
    f.nodes = infer_nodes(model);
  } catch (const onnx::ModelError& e) {
    for (const onnx::Issue& i : e.issues()) f.problems.push_back(i.text());
  }
  for (const onnx::NodeSummary& n : f.summary.nodes) {
    ModelFacts::OpCount& c = f.ops[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
    ++c.count;
    c.supported = n.supported;
  }
  return f;
}

void print_model_json(const ModelFacts& f) {
  const onnx::ModelSummary& s = f.summary;
  std::string o = "{";
  o += fmt::format("\"model\": {}, \"producer\": {}, \"ir_version\": {}, \"opset\": {}, ",
                   json_string(f.path), json_string(s.producer), s.ir_version, s.opset);
  o += "\"inputs\": " + values_json(s.inputs) + ", \"outputs\": " + values_json(s.outputs);
  o += ", \"ops\": [";
  bool first = true;
  for (const auto& [name, c] : f.ops) {
    o += fmt::format("{}{{\"op\": {}, \"count\": {}, \"supported\": {}{}}}", first ? "" : ", ",
                     json_string(name), c.count, c.supported ? "true" : "false",
                     c.supported ? "" : ", \"why\": " + json_string(f.why_not(name)));
    first = false;
  }
  o += fmt::format("], \"profile\": \"{}\", \"rewrites\": [", profile_name(f.profile));
  for (size_t i = 0; i < s.rewrites.size(); ++i) o += (i ? ", " : "") + json_string(s.rewrites[i]);
  o += "], \"nodes\": [";
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    const onnx::NodeInfo& i = f.nodes[n].node;
    o += fmt::format(
        "{}{{\"name\": {}, \"op\": {}, \"domain\": {}, \"profile\": \"{}\", \"outputs\": [",
        n ? ", " : "", json_string(i.name), json_string(i.op_type), json_string(i.domain),
        profile_name(i.profile));
    for (size_t k = 0; k < f.nodes[n].dims.size(); ++k)
      o += fmt::format("{}{{\"name\": {}, \"dtype\": {}, \"shape\": {}}}", k ? ", " : "",
                       json_string(i.outputs[k]), json_string(i.output_types[k]),
                       dims_json(f.nodes[n].dims[k]));
    o += "]}";
  }
  o += fmt::format("], \"runnable\": {}, \"problems\": [", f.problems.empty() ? "true" : "false");
  for (size_t i = 0; i < f.problems.size(); ++i) o += (i ? ", " : "") + json_string(f.problems[i]);
  fmt::print("{}]}}\n", o);
}

// The planned nodes as a table: name, operator, profile, inferred outputs.
void print_node_table(const std::vector<InferredNode>& nodes) {
  size_t name_w = 4, op_w = 8;
  for (const InferredNode& n : nodes) {
    name_w = std::max(name_w, n.node.name.size());
    op_w = std::max(op_w, n.node.op_type.size());
  }
  fmt::print("\n{:<{}}  {:<{}}  {:<12}  {}\n", "node", name_w, "operator", op_w, "profile",
             "outputs (inferred)");
  for (const InferredNode& n : nodes) {
    std::string outs;
    for (size_t k = 0; k < n.dims.size(); ++k)
      outs += (k ? ", " : "") + n.node.outputs[k] + " " + n.node.output_types[k] + " " +
              dims_text(n.dims[k]);
    fmt::print("{:<{}}  {:<{}}  {:<12}  {}\n", n.node.name, name_w, n.node.op_type, op_w,
               profile_name(n.node.profile), outs);
  }
}

void print_model_text(const ModelFacts& f) {
  const onnx::ModelSummary& s = f.summary;
  fmt::print("model     {}\nproducer  {}\nir        {}\nopset     {}\n", f.path,
             s.producer.empty() ? "-" : s.producer, s.ir_version, s.opset);
  fmt::print("\ninputs\n");
  for (const auto& v : s.inputs)
    fmt::print("  {:<24} {:<4} {}\n", v.name, dtype_name(v.dtype), shape_of(v));
  fmt::print("outputs\n");
  for (const auto& v : s.outputs)
    fmt::print("  {:<24} {:<4} {}\n", v.name, dtype_name(v.dtype), shape_of(v));
  if (!s.rewrites.empty()) {
    fmt::print("\nQDQ fusion under profile {} (ONNX Runtime's graph rewrites): {} rewrite(s)\n",
               profile_name(f.profile), s.rewrites.size());
    for (const std::string& r : s.rewrites) fmt::print("  {}\n", r);
  }
  fmt::print("\n{:<36} {:>5}  {}\n", "operator", "nodes", "supported");
  for (const auto& [name, c] : f.ops)
    fmt::print("{:<36} {:>5}  {}\n", name, c.count, c.supported ? "yes" : "NO: " + f.why_not(name));
  if (!f.nodes.empty()) print_node_table(f.nodes);
  if (f.problems.empty()) {
    fmt::print("\nmodel check: ok, the model runs on npukit\n");
  } else {
    fmt::print("\nmodel check: {} problem(s)\n", f.problems.size());
    for (const std::string& p : f.problems) fmt::print("  {}\n", p);
  }
}

int run_info(const std::string& path, const std::string& profile_arg, bool fallback, bool json) {
  const ModelFacts f = gather_model_facts(path, profile_from_name(profile_arg), fallback);
  if (json)
    print_model_json(f);
  else
    print_model_text(f);
  return f.problems.empty() ? 0 : 1;  // scripts can rely on the status
}

// `npukit info --operators`: every ONNX operator the runner executes.
int run_operators_info(bool json) {
  const auto ops = onnx::operator_list();
  if (json) {
    std::string o = "[";
    for (size_t i = 0; i < ops.size(); ++i)
      o +=
          fmt::format("{}{{\"domain\": {}, \"op\": {}, \"min_opset\": {}, \"max_opset\": {}}}",
                      i ? ", " : "", json_string(ops[i].domain.empty() ? "ai.onnx" : ops[i].domain),
                      json_string(ops[i].op_type), ops[i].min_opset, ops[i].max_opset);
    fmt::print("{}]\n", o);
    return 0;
  }
  fmt::print("{:<32} {:<16} {}\n", "operator", "domain", "opsets");
  for (const onnx::OperatorInfo& op : ops)
    fmt::print("{:<32} {:<16} {}-{}\n", op.op_type, op.domain.empty() ? "ai.onnx" : op.domain,
               op.min_opset, op.max_opset);
  fmt::print("\n{} operators; per-profile semantics of each family: npukit info --profiles\n",
             ops.size());
  return 0;
}

// `npukit info --kernels`: every kernel family in dispatch order, and which
// kernel the current settings let run on this host.
int run_kernels_info(bool json) {
  const auto all = list_kernels();
  auto runnable = [](const KernelInfo& k) { return kernel_allowed(k.isa, k.reference); };
  if (json) {
    std::string o = fmt::format(
        "{{\"host_isa\": \"{}\", \"max_isa\": \"{}\", \"impl\": \"{}\", \"kernels\": [",
        isa_name(host_isa()), isa_name(max_isa()), impl() == Impl::fast ? "fast" : "reference");
    for (size_t i = 0; i < all.size(); ++i)
      o += fmt::format(
          "{}{{\"family\": {}, \"name\": {}, \"isa\": \"{}\", \"reference\": {}, \"runnable\": {}, "
          "\"applies\": {}}}",
          i ? ", " : "", json_string(all[i].family), json_string(all[i].name), isa_name(all[i].isa),
          all[i].reference ? "true" : "false", runnable(all[i]) ? "true" : "false",
          json_string(all[i].applies));
    fmt::print("{}]}}\n", o);
    return 0;
  }
  fmt::print("host ISA {}, allowed up to {} (NPUKIT_MAX_ISA), kernels: {} (NPUKIT_IMPL)\n",
             isa_name(host_isa()), isa_name(max_isa()),
             impl() == Impl::fast ? "fast" : "reference");
  fmt::print("kernels are tried in this order within a family; the reference always applies\n\n");
  fmt::print("{:<24} {:<36} {:<12} {:<9} {}\n", "family", "kernel", "isa", "runnable",
             "applies when");
  for (const KernelInfo& k : all)
    fmt::print("{:<24} {:<36} {:<12} {:<9} {}\n", k.family, k.name, isa_name(k.isa),
               runnable(k) ? "yes" : "no", k.reference ? "always (the specification)" : k.applies);
  return 0;
}

// `npukit info --profiles`: the profile table (every family x profile).
int run_profiles_info(bool json, bool markdown) {
  if (markdown) {
    fmt::print("{}", profile_table_markdown());
    return 0;
  }
  if (json) {
    std::string o = "[";
    bool first = true;
    for (const ProfileSupport& r : profile_table()) {
      o += fmt::format(
          "{}{{\"family\": \"{}\", \"profile\": \"{}\", \"supported\": {}, \"semantics\": {}, "
          "\"checked\": {}}}",
          first ? "" : ", ", op_family_name(r.family), profile_name(r.profile),
          r.supported ? "true" : "false", json_string(r.semantics), json_string(r.checked));
      first = false;
    }
    fmt::print("{}]\n", o);
    return 0;
  }
  fmt::print("{}\n", profile_table_markdown());
  fmt::print(
      "onnxruntime_avx2 and onnxruntime_vnni are onnxruntime with the u8 x s8 GEMM kernel "
      "forced.\n");
  for (OpFamily f : all_op_families()) {
    fmt::print("\n{}\n", op_family_name(f));
    for (const ProfileSupport& r : profile_table()) {
      if (r.family != f) continue;
      if (r.supported)
        fmt::print("  {:<12} {}\n  {:<12} checked: {}\n", profile_name(r.profile), r.semantics, "",
                   r.checked);
      else
        fmt::print("  {:<12} not supported: {}\n", profile_name(r.profile), r.semantics);
    }
  }
  return 0;
}

// Below this, two CPUs share a last-level cache (measured here: 37-58 ns on
// one chiplet, 194-208 ns across two).
constexpr double kSharedCacheNs = 100;

// `npukit info --host`: the CPUs this process may use and, from the first to
// each other (at most 8), the one-way cache-line hand-off time.
int run_host_info(bool json) {
  const std::vector<int> cpus = allowed_cpu_list();
  std::vector<std::pair<int, std::optional<double>>> pairs;
  for (size_t k = 1; k < cpus.size() && k <= 8; ++k)
    pairs.emplace_back(cpus[k], handoff_ns(cpus[0], cpus[k]));
  if (json) {
    std::string text = "{\"cpus\": [";
    for (size_t k = 0; k < cpus.size(); ++k) text += (k ? ", " : "") + std::to_string(cpus[k]);
    text += "], \"handoff_ns\": [";
    for (size_t k = 0; k < pairs.size(); ++k) {
      const auto& [cpu, ns] = pairs[k];
      text += fmt::format("{}{{\"from\": {}, \"to\": {}, \"one_way_ns\": {}}}", k ? ", " : "",
                          cpus[0], cpu, ns ? fmt::format("{:.1f}", *ns) : "null");
    }
    fmt::print("{}]}}\n", text);
    return 0;
  }
  fmt::print("CPUs this process may use: {}\n", cpus.size());
  if (pairs.empty()) fmt::print("(one CPU: nothing to hand cache lines to)\n");
  for (const auto& [cpu, ns] : pairs) {
    if (!ns) {
      fmt::print("CPU {} -> CPU {}: not measured (a thread did not get its CPU within a second)\n",
                 cpus[0], cpu);
      continue;
    }
    fmt::print("CPU {} -> CPU {}: {:.0f} ns one way ({})\n", cpus[0], cpu, *ns,
               *ns < kSharedCacheNs ? "a shared last-level cache"
                                    : "no shared cache: threads on these CPUs pass data between "
                                      "chiplets, and 2-thread runs gain less");
  }
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info",
                         "List a model's inputs, outputs and operators, and check it; or list the "
                         "kernels (--kernels) or the profiles (--profiles); or measure the CPUs' "
                         "distance (--host)");
  static std::string path;
  static bool json = false;
  static bool kernels = false;
  static bool profiles = false;
  static bool markdown = false;
  static bool operators = false;
  static bool fallback = false;
  static bool host = false;
  static std::string profile = "onnxruntime";
  cmd->add_option("model", path, "ONNX model file");
  cmd->add_option("-p,--profile", profile,
                  "With a model: check it and infer its shapes under this profile (the onnxruntime "
                  "profiles show the graph after ONNX Runtime's QDQ fusion): " +
                      profile_names())
      ->capture_default_str();
  cmd->add_flag("--fallback", fallback,
                "With a model: nodes whose operator has no semantics for --profile follow "
                "onnxruntime (as npukit run --fallback)");
  cmd->add_flag("--operators", operators,
                "List every ONNX operator the runner supports, with its domain and opsets");
  cmd->add_flag("--kernels", kernels,
                "List every kernel family, its kernels in dispatch order and which run here");
  cmd->add_flag("--profiles", profiles,
                "Print the profile table: every operator family under every profile, with its "
                "semantics and what it was checked against, or why not");
  cmd->add_flag("--markdown", markdown, "With --profiles: only the README's Markdown table");
  cmd->add_flag("--host", host,
                "Measure how far apart the CPUs this process may use are: the one-way time for a "
                "cache line to pass between two of them (~40 ns when they share a last-level "
                "cache, ~200 ns across chiplets, where 2-thread runs gain less)");
  cmd->add_flag("--json", json, "Print machine-readable JSON");
  cmd->callback([] {
    if (static_cast<int>(profiles) + static_cast<int>(kernels) + static_cast<int>(operators) +
            static_cast<int>(host) + static_cast<int>(!path.empty()) >
        1)
      throw CLI::ValidationError(
          "info", "give one of a model, --kernels, --profiles, --operators or --host");
    if (host) {
      const int rc = run_host_info(json);
      if (rc) throw CLI::RuntimeError(rc);
      return;
    }
    if (operators) {
      const int rc = run_operators_info(json);
      if (rc) throw CLI::RuntimeError(rc);
      return;
    }
    if (profiles) {
      const int rc = run_profiles_info(json, markdown);
      if (rc) throw CLI::RuntimeError(rc);
      return;
    }
    if (kernels) {
      const int rc = run_kernels_info(json);
      if (rc) throw CLI::RuntimeError(rc);
      return;
    }
    if (path.empty())
      throw CLI::RequiredError("model (or --kernels, --profiles, --operators, --host)");
    const int rc = run_info(path, profile, fallback, json);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace npukit::cli
