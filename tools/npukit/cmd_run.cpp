// `npukit run MODEL.onnx --input NAME=FILE.npy ...`: run a model on .npy
// inputs, write each output as DIR/<name>.npy and print a summary. Without a
// model it runs the main job (main_job.cpp).
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "commands.hpp"
#include "main_job.hpp"
#include "model_inputs.hpp"
#include "npukit/npy.hpp"
#include "npukit/onnx/model.hpp"
#include "progress.hpp"

namespace npukit::cli {

namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string profile = "onnxruntime";
  std::string output_dir = ".";
  int64_t repeat = 1;
  std::optional<int64_t> warmup;  // unset: one warm-up run when --repeat > 1
  std::string preprocess;
  std::string dump_dir;
  bool json = false;
  bool layers = false;
  bool fallback = false;
  MainJobOptions job;
};

std::string file_name_for(const std::string& value_name) {
  std::string s = value_name.empty() ? "_" : value_name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (s[0] == '.') s[0] = '_';  // no hidden files, no ".."
  return s + ".npy";
}

// --dump-all DIR: every value of the last run as DIR/<sanitized name>.npy, and
// DIR/values.tsv mapping each file to its value, producing node and shape.
void dump_values(const onnx::Model& model, const std::string& dir, bool say) {
  std::filesystem::create_directories(dir);
  std::set<std::string> used;
  std::string index = "file\tvalue\tnode\tdtype\tshape\n";
  const auto values = model.values();
  for (const onnx::NamedValue& v : values) {
    std::string file = file_name_for(v.name);
    for (int k = 2; used.count(file); ++k)  // names that sanitize alike get a suffix
      file = file_name_for(v.name + "_" + std::to_string(k));
    used.insert(file);
    write_npy((std::filesystem::path(dir) / file).string(), v.view);
    index += fmt::format("{}\t{}\t{}\t{}\t{}\n", file, v.name, v.node, dtype_name(v.view.dtype()),
                         shape_text(v.view.shape()));
  }
  std::ofstream((std::filesystem::path(dir) / "values.tsv").string()) << index;
  if (say) fmt::print(stderr, "wrote {} values to {} (index: values.tsv)\n", values.size(), dir);
}

// --layers: totals per operator (largest first), then every node in execution order.
void print_layers(const std::vector<onnx::LayerTime>& layers, double runs, double wall_per_run) {
  std::map<std::string, std::pair<double, int>> per_op;
  double total = 0;
  size_t node_w = 4, op_w = 8;
  for (const auto& l : layers) {
    auto& [sec, count] = per_op[l.op_type];
    sec += l.seconds;
    ++count;
    total += l.seconds;
    node_w = std::max(node_w, l.node.size());
    op_w = std::max(op_w, l.op_type.size());
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(per_op.begin(), per_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  const double share = total > 0 ? 100.0 / total : 0.0;
  fmt::print("\n{:<{}}  {:>5}  {:>12}  {:>6}\n", "operator", op_w, "nodes", "ms per run", "share");
  for (const auto& [op, t] : ops)
    fmt::print("{:<{}}  {:>5}  {:>12.4f}  {:>5.1f}%\n", op, op_w, t.second, t.first / runs * 1e3,
               t.first * share);
  fmt::print("{:<{}}  {:>5}  {:>12.4f}\n", "total", op_w, layers.size(), total / runs * 1e3);
  // Batch slices run on several threads at once, each timing its own nodes.
  if (total / runs > 1.05 * wall_per_run)
    fmt::print(
        "(per-layer times add up the threads that ran batch slices at the same time, so their\n"
        " total exceeds the run's {:.3f} ms; NPUKIT_BATCH_SLICES=off times the layers one by "
        "one)\n",
        wall_per_run * 1e3);
  // The best run beside the mean: on a loaded machine the mean of a small
  // node mostly measures other processes.
  fmt::print("\n{:<{}}  {:<{}}  {:<12}  {:>12}  {:>6}  {:>10}\n", "node", node_w, "operator", op_w,
             "profile", "ms per run", "share", "best ms");
  for (const auto& l : layers)
    fmt::print("{:<{}}  {:<{}}  {:<12}  {:>12.4f}  {:>5.1f}%  {:>10.4f}\n", l.node, node_w,
               l.op_type, op_w, profile_name(l.profile), l.seconds / runs * 1e3, l.seconds * share,
               l.best_seconds * 1e3);
}

// What the timed runs of one model produced.
struct RunResult {
  std::vector<TensorView> inputs, outputs;
  std::vector<std::string> files;  // where each output was written
  int64_t warmup = 0;
  double mean = 0, median = 0, best = 0;  // seconds per run
};

// Runs `warmup` untimed then o.repeat timed runs; the outputs of the last.
std::vector<TensorView> timed_runs(onnx::Model& model, const std::vector<TensorView>& views,
                                   const RunOptions& o, RunResult& r) {
  std::vector<double> times;
  std::vector<TensorView> outs;
  Progress bar("running " + std::filesystem::path(o.model).filename().string(), r.warmup + o.repeat,
               !o.json);
  for (int64_t k = 0; k < r.warmup + o.repeat; ++k) {
    if (k == r.warmup) model.reset_layer_times();  // warm-up runs are not timed
    const auto t0 = std::chrono::steady_clock::now();
    outs = model.execute(views);
    if (k >= r.warmup)
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    bar.update(k + 1);
  }
  double sum = 0;
  for (double t : times) sum += t;
  r.mean = sum / static_cast<double>(times.size());
  r.best = *std::min_element(times.begin(), times.end());
  std::sort(times.begin(), times.end());
  r.median = times[times.size() / 2];  // robust on a loaded machine
  return outs;
}

void print_run_json(const onnx::Model& model, const RunOptions& o, const RunResult& r) {
  const auto layers = model.layer_times();
  const auto runs = static_cast<double>(o.repeat);
  std::string s = fmt::format("{{\"model\": {}, \"profile\": {}, \"runs\": {}, ",
                              json_string(o.model), json_string(o.profile), o.repeat);
  s += fmt::format(
      "\"warmup_runs\": {}, \"seconds_per_run\": {{\"mean\": {:.9f}, \"median\": {:.9f}, "
      "\"min\": {:.9f}}}, "
      "\"inputs\": [",
      r.warmup, r.mean, r.median, r.best);
  for (size_t k = 0; k < r.inputs.size(); ++k)
    s += fmt::format("{}{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}}}", k ? ", " : "",
                     json_string(model.inputs()[k].name), dtype_name(r.inputs[k].dtype()),
                     shape_text(r.inputs[k].shape()));
  s += "], \"outputs\": [";
  for (size_t k = 0; k < r.outputs.size(); ++k)
    s += fmt::format("{}{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}, \"file\": {}}}",
                     k ? ", " : "", json_string(model.outputs()[k].name),
                     dtype_name(r.outputs[k].dtype()), shape_text(r.outputs[k].shape()),
                     json_string(r.files[k]));
  const onnx::MemoryUse m = model.memory_use();
  s += fmt::format(
      "], \"memory\": {{\"arena_bytes\": {}, \"arena_lower_bound\": {}, \"private_bytes\": {}, "
      "\"unshared_bytes\": {}}}",
      m.arena_bytes, m.arena_lower_bound, m.private_bytes, m.unshared_bytes);
  s += ", \"layers\": [";
  for (size_t k = 0; k < layers.size(); ++k)
    s += fmt::format(
        "{}{{\"node\": {}, \"op\": {}, \"profile\": \"{}\", \"seconds_per_run\": {:.9f}, "
        "\"best_seconds\": {:.9f}}}",
        k ? ", " : "", json_string(layers[k].node), json_string(layers[k].op_type),
        profile_name(layers[k].profile), layers[k].seconds / runs, layers[k].best_seconds);
  fmt::print("{}]}}\n", s);
}

void print_run_text(const onnx::Model& model, const RunOptions& o, const RunResult& r) {
  fmt::print("model    {}\nprofile  {}\n", o.model, o.profile);
  for (size_t k = 0; k < r.inputs.size(); ++k)
    fmt::print("input    {:<24} {:<4} {}\n", model.inputs()[k].name,
               dtype_name(r.inputs[k].dtype()), shape_text(r.inputs[k].shape()));
  for (size_t k = 0; k < r.outputs.size(); ++k)
    fmt::print("output   {:<24} {:<4} {:<18} -> {}\n", model.outputs()[k].name,
               dtype_name(r.outputs[k].dtype()), shape_text(r.outputs[k].shape()), r.files[k]);
  fmt::print("time     {:.3f} ms per run (median of {} runs, best {:.3f} ms, mean {:.3f} ms",
             r.median * 1e3, o.repeat, r.best * 1e3, r.mean * 1e3);
  if (r.warmup)
    fmt::print(", after {} warm-up run{})\n", r.warmup, r.warmup > 1 ? "s" : "");
  else
    fmt::print(")\n");
  const onnx::MemoryUse m = model.memory_use();
  fmt::print(
      "memory   {:.2f} MB of activations: {:.2f} MB shared by liveness (at least {:.2f} MB), "
      "{:.2f} MB own buffers; {:.2f} MB if each value had its own\n",
      static_cast<double>(m.arena_bytes + m.private_bytes) / 1e6,
      static_cast<double>(m.arena_bytes) / 1e6, static_cast<double>(m.arena_lower_bound) / 1e6,
      static_cast<double>(m.private_bytes) / 1e6, static_cast<double>(m.unshared_bytes) / 1e6);
  if (o.layers) print_layers(model.layer_times(), static_cast<double>(o.repeat), r.median);
}

int run_model(const RunOptions& o) {
  constexpr const char* fn = "npukit run";
  // --dump-all wants every value the file names: no fusion may drop one.
  const onnx::Intermediates kept =
      o.dump_dir.empty() ? onnx::Intermediates::may_fuse : onnx::Intermediates::keep_all;
  onnx::Model model = onnx::Model::load(o.model, profile_from_name(o.profile), o.fallback, kept);
  const std::vector<Tensor> tensors = read_model_inputs(model, o.inputs, o.preprocess, fn);
  RunResult r;
  for (const Tensor& t : tensors) r.inputs.push_back(t.view());
  check_range(fn, "--repeat", o.repeat, 1, 1000000);
  r.warmup = o.warmup.value_or(o.repeat > 1 ? 1 : 0);
  check_range(fn, "--warmup", r.warmup, 0, 1000000);
  r.outputs = timed_runs(model, r.inputs, o, r);
  if (!o.dump_dir.empty()) dump_values(model, o.dump_dir, !o.json);
  std::filesystem::create_directories(o.output_dir);
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    r.files.push_back(
        (std::filesystem::path(o.output_dir) / file_name_for(model.outputs()[k].name)).string());
    write_npy(r.files.back(), r.outputs[k]);
  }
  if (o.json)
    print_run_json(model, o, r);
  else
    print_run_text(model, o, r);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run an ONNX model on .npy inputs; without a model, evaluate the bundled Fashion-MNIST "
      "models (fp32 and int8) under every profile (the main job)");
  static RunOptions o;
  cmd->add_option("model", o.model, "ONNX model file (omit for the main job)");
  cmd->add_option("-i,--input", o.inputs,
                  "NAME=FILE for each model input (FILE alone for a single input); FILE is a "
                  ".npy array or a .png/.jpg picture (see --preprocess)");
  cmd->add_option("-p,--profile", o.profile, "Semantics profile: " + profile_names())
      ->capture_default_str();
  cmd->add_option("-o,--output-dir", o.output_dir, "Where to write <output name>.npy")
      ->capture_default_str();
  cmd->add_option("-r,--repeat", o.repeat,
                  "Number of timed runs (the median, best and mean time are reported)")
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup,
                  "Untimed runs before the timed ones (default: 1 when --repeat > 1, else 0)");
  cmd->add_option("--preprocess", o.preprocess,
                  "How a picture input (.png, .jpg) becomes values: raw (uint8 codes), unit "
                  "(float pixel/255, the default for float inputs) or imagenet (float, ImageNet "
                  "mean and std); it is resized to the input's H and W, gray or RGB as its C");
  cmd->add_option("--dump-all", o.dump_dir,
                  "Write every value of the last run (inputs, intermediates, outputs) to "
                  "DIR/<name>.npy, names sanitized, with an index DIR/values.tsv (Conv + "
                  "Relu/Clip then run unfused so the conv's output is kept; same outputs)");
  cmd->add_flag("--fallback", o.fallback,
                "Nodes whose operator has no semantics for --profile follow onnxruntime");
  cmd->add_flag("--json", o.json, "Print machine-readable JSON");
  cmd->add_flag(
      "--layers", o.layers,
      "Print the time per operator (largest first) and of every node (mean and best run)");
  cmd->add_option(
      "--dataset", o.job.dataset,
      "Main job: evaluate on a full dataset instead of the bundled images (fashion-mnist)");
  cmd->add_option("--models-dir", o.job.models_dir, "Main job: directory of the bundled models");
  cmd->add_option("--batch", o.job.batch, "Main job: images per run")->capture_default_str();
  add_threads_option(cmd);
  cmd->callback([] {
    int rc;
    if (o.model.empty()) {
      o.job.json = o.json;
      rc = run_main_job(o.job);
    } else {
      // Main-job options mean nothing for a model: refuse rather than ignore them.
      check(o.job.dataset.empty(), "npukit run", "--dataset", "'" + o.job.dataset + "'",
            "no --dataset with a model (it selects the main job's data)");
      rc = run_model(o);
    }
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace npukit::cli
