// `npukit info MODEL.onnx`: inputs, outputs, operators and whether the runner
// supports each, then the result of the full model check.
#include <fmt/core.h>

#include <map>

#include "commands.hpp"
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

std::string values_json(const std::vector<onnx::ValueInfo>& vs) {
  std::string s = "[";
  for (size_t i = 0; i < vs.size(); ++i)
    s +=
        fmt::format("{}{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}}}", i ? ", " : "",
                    json_string(vs[i].name), dtype_name(vs[i].dtype), json_string(shape_of(vs[i])));
  return s + "]";
}

int run_info(const std::string& path, const std::string& profile_arg, bool json) {
  const Profile profile = profile_from_name(profile_arg);
  const onnx::ModelSummary s = onnx::summarize(path, profile);
  std::vector<std::string> problems;
  try {
    onnx::Model::load(path, profile);
  } catch (const onnx::ModelError& e) {
    for (const onnx::Issue& i : e.issues()) problems.push_back(i.text());
  }
  struct OpCount {
    int count = 0;
    bool supported = false;
  };
  std::map<std::string, OpCount> ops;
  for (const onnx::NodeSummary& n : s.nodes) {
    OpCount& c = ops[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
    ++c.count;
    c.supported = n.supported;
  }
  if (json) {
    std::string o = "{";
    o += fmt::format("\"model\": {}, \"producer\": {}, \"ir_version\": {}, \"opset\": {}, ",
                     json_string(path), json_string(s.producer), s.ir_version, s.opset);
    o += "\"inputs\": " + values_json(s.inputs) + ", \"outputs\": " + values_json(s.outputs);
    o += ", \"ops\": [";
    bool first = true;
    for (const auto& [name, c] : ops) {
      o += fmt::format("{}{{\"op\": {}, \"count\": {}, \"supported\": {}}}", first ? "" : ", ",
                       json_string(name), c.count, c.supported ? "true" : "false");
      first = false;
    }
    o += fmt::format("], \"profile\": \"{}\", \"rewrites\": [", profile_name(profile));
    for (size_t i = 0; i < s.rewrites.size(); ++i)
      o += (i ? ", " : "") + json_string(s.rewrites[i]);
    o += fmt::format("], \"runnable\": {}, \"problems\": [", problems.empty() ? "true" : "false");
    for (size_t i = 0; i < problems.size(); ++i) o += (i ? ", " : "") + json_string(problems[i]);
    fmt::print("{}]}}\n", o);
    return problems.empty() ? 0 : 1;  // scripts can rely on the status
  }
  fmt::print("model     {}\nproducer  {}\nir        {}\nopset     {}\n", path,
             s.producer.empty() ? "-" : s.producer, s.ir_version, s.opset);
  fmt::print("\ninputs\n");
  for (const auto& v : s.inputs)
    fmt::print("  {:<24} {:<4} {}\n", v.name, dtype_name(v.dtype), shape_of(v));
  fmt::print("outputs\n");
  for (const auto& v : s.outputs)
    fmt::print("  {:<24} {:<4} {}\n", v.name, dtype_name(v.dtype), shape_of(v));
  if (!s.rewrites.empty()) {
    fmt::print("\nQDQ fusion under profile {} (ONNX Runtime's graph rewrites): {} rewrite(s)\n",
               profile_name(profile), s.rewrites.size());
    for (const std::string& r : s.rewrites) fmt::print("  {}\n", r);
  }
  fmt::print("\n{:<36} {:>5}  {}\n", "operator", "nodes", "supported");
  for (const auto& [name, c] : ops)
    fmt::print("{:<36} {:>5}  {}\n", name, c.count, c.supported ? "yes" : "NO");
  if (problems.empty()) {
    fmt::print("\nmodel check: ok, the model runs on npukit\n");
  } else {
    fmt::print("\nmodel check: {} problem(s)\n", problems.size());
    for (const std::string& p : problems) fmt::print("  {}\n", p);
  }
  return problems.empty() ? 0 : 1;
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

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info",
                         "List a model's inputs, outputs and operators, and check it; or list the "
                         "kernels (--kernels) or the profiles (--profiles)");
  static std::string path;
  static bool json = false;
  static bool kernels = false;
  static bool profiles = false;
  static bool markdown = false;
  static std::string profile = "onnxruntime";
  cmd->add_option("model", path, "ONNX model file");
  cmd->add_option("--profile", profile,
                  "Profile the model is checked for; the onnxruntime profiles show the graph "
                  "after ONNX Runtime's QDQ fusion")
      ->capture_default_str();
  cmd->add_flag("--kernels", kernels,
                "List every kernel family, its kernels in dispatch order and which run here");
  cmd->add_flag("--profiles", profiles,
                "Print the profile table: every operator family under every profile, with its "
                "semantics and what it was checked against, or why not");
  cmd->add_flag("--markdown", markdown, "With --profiles: only the README's Markdown table");
  cmd->add_flag("--json", json, "Print machine-readable JSON");
  cmd->callback([] {
    if (profiles) {
      if (!path.empty() || kernels)
        throw CLI::ValidationError("info", "give one of a model, --kernels or --profiles");
      const int rc = run_profiles_info(json, markdown);
      if (rc) throw CLI::RuntimeError(rc);
      return;
    }
    if (kernels) {
      if (!path.empty()) throw CLI::ValidationError("info", "give a model or --kernels, not both");
      const int rc = run_kernels_info(json);
      if (rc) throw CLI::RuntimeError(rc);
      return;
    }
    if (path.empty()) throw CLI::RequiredError("model (or --kernels)");
    const int rc = run_info(path, profile, json);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace npukit::cli
