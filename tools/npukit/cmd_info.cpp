// `npukit info MODEL.onnx`: inputs, outputs, operators and whether the runner
// supports each, then the result of the full model check.
#include <fmt/core.h>

#include <map>

#include "commands.hpp"
#include "npukit/onnx/model.hpp"
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

int run_info(const std::string& path, bool json) {
  const onnx::ModelSummary s = onnx::summarize(path);
  std::vector<std::string> problems;
  try {
    onnx::Model::load(path);
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

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info", "List a model's inputs, outputs and operators, and check it");
  static std::string path;
  static bool json = false;
  cmd->add_option("model", path, "ONNX model file")->required();
  cmd->add_flag("--json", json, "Print machine-readable JSON");
  cmd->callback([] {
    const int rc = run_info(path, json);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace npukit::cli
