// `npukit run MODEL.onnx --input NAME=FILE.npy ...`: run a model on .npy
// inputs, write each output as DIR/<name>.npy and print a summary. Without a
// model it runs the main job (main_job.cpp).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "commands.hpp"
#include "main_job.hpp"
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
  bool json = false;
  bool layers = false;
  bool fallback = false;
  MainJobOptions job;
};

std::string file_name_for(const std::string& value_name) {
  std::string s = value_name;
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return s + ".npy";
}

int run_model(const RunOptions& o) {
  constexpr const char* fn = "npukit run";
  onnx::Model model = onnx::Model::load(o.model, profile_from_name(o.profile), o.fallback);
  std::vector<Tensor> tensors(model.inputs().size());
  std::vector<bool> given(model.inputs().size(), false);
  for (const std::string& arg : o.inputs) {
    const size_t eq = arg.find('=');
    std::string name = eq == std::string::npos ? "" : arg.substr(0, eq);
    const std::string file = eq == std::string::npos ? arg : arg.substr(eq + 1);
    if (name.empty()) {
      check(model.inputs().size() == 1, fn, "--input", "'" + arg + "'",
            "NAME=FILE.npy (the model has several inputs)");
      name = model.inputs()[0].name;
    }
    size_t k = 0;
    while (k < model.inputs().size() && model.inputs()[k].name != name) ++k;
    std::string names;
    for (const auto& v : model.inputs()) names += (names.empty() ? "" : ", ") + v.name;
    check(k < model.inputs().size(), fn, "--input", "'" + name + "'",
          "an input of the model: " + names);
    check(!given[k], fn, "--input", "'" + arg + "'",
          "one --input per model input ('" + name + "' was given before)");
    tensors[k] = read_npy(file);
    given[k] = true;
  }
  std::vector<TensorView> views;
  for (size_t k = 0; k < tensors.size(); ++k) {
    check(given[k], fn, "--input", "none for '" + model.inputs()[k].name + "'",
          "one --input NAME=FILE.npy per model input");
    views.push_back(tensors[k].view());
  }
  check_range(fn, "--repeat", o.repeat, 1, 1000000);
  std::vector<double> times;
  std::vector<TensorView> outs;
  {
    Progress bar("running " + std::filesystem::path(o.model).filename().string(), o.repeat,
                 !o.json);
    for (int64_t r = 0; r < o.repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      outs = model.execute(views);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      bar.update(r + 1);
    }
  }
  std::filesystem::create_directories(o.output_dir);
  std::vector<std::string> files;
  for (size_t k = 0; k < outs.size(); ++k) {
    files.push_back(
        (std::filesystem::path(o.output_dir) / file_name_for(model.outputs()[k].name)).string());
    write_npy(files.back(), outs[k]);
  }
  double sum = 0;
  for (double t : times) sum += t;
  const double mean = sum / static_cast<double>(times.size());
  const double best = *std::min_element(times.begin(), times.end());
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];  // robust on a loaded machine
  const auto layers = model.layer_times();
  const auto runs = static_cast<double>(o.repeat);
  if (o.json) {
    std::string s = fmt::format("{{\"model\": {}, \"profile\": {}, \"runs\": {}, ",
                                json_string(o.model), json_string(o.profile), o.repeat);
    s += fmt::format(
        "\"seconds_per_run\": {{\"mean\": {:.9f}, \"median\": {:.9f}, \"min\": {:.9f}}}, "
        "\"inputs\": [",
        mean, median, best);
    for (size_t k = 0; k < views.size(); ++k)
      s += fmt::format("{}{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}}}", k ? ", " : "",
                       json_string(model.inputs()[k].name), dtype_name(views[k].dtype()),
                       shape_text(views[k].shape()));
    s += "], \"outputs\": [";
    for (size_t k = 0; k < outs.size(); ++k)
      s += fmt::format("{}{{\"name\": {}, \"dtype\": \"{}\", \"shape\": {}, \"file\": {}}}",
                       k ? ", " : "", json_string(model.outputs()[k].name),
                       dtype_name(outs[k].dtype()), shape_text(outs[k].shape()),
                       json_string(files[k]));
    s += "], \"layers\": [";
    for (size_t k = 0; k < layers.size(); ++k)
      s += fmt::format(
          "{}{{\"node\": {}, \"op\": {}, \"profile\": \"{}\", \"seconds_per_run\": {:.9f}}}",
          k ? ", " : "", json_string(layers[k].node), json_string(layers[k].op_type),
          profile_name(layers[k].profile), layers[k].seconds / runs);
    fmt::print("{}]}}\n", s);
    return 0;
  }
  fmt::print("model    {}\nprofile  {}\n", o.model, o.profile);
  for (size_t k = 0; k < views.size(); ++k)
    fmt::print("input    {:<24} {:<4} {}\n", model.inputs()[k].name, dtype_name(views[k].dtype()),
               shape_text(views[k].shape()));
  for (size_t k = 0; k < outs.size(); ++k)
    fmt::print("output   {:<24} {:<4} {:<18} -> {}\n", model.outputs()[k].name,
               dtype_name(outs[k].dtype()), shape_text(outs[k].shape()), files[k]);
  fmt::print("time     {:.3f} ms per run (mean of {}, median {:.3f} ms, best {:.3f} ms)\n",
             mean * 1e3, o.repeat, median * 1e3, best * 1e3);
  if (o.layers) {
    fmt::print("\n{:<32} {:<24} {:<12} {:>12}\n", "node", "op", "profile", "ms per run");
    for (const auto& l : layers)
      fmt::print("{:<32} {:<24} {:<12} {:>12.4f}\n", l.node, l.op_type, profile_name(l.profile),
                 l.seconds / runs * 1e3);
  }
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
                  "NAME=FILE.npy for each model input (FILE.npy alone for a single input)");
  cmd->add_option("-p,--profile", o.profile, "Semantics profile: " + profile_names())
      ->capture_default_str();
  cmd->add_option("-o,--output-dir", o.output_dir, "Where to write <output name>.npy")
      ->capture_default_str();
  cmd->add_option("-r,--repeat", o.repeat, "Number of runs (timing)")->capture_default_str();
  cmd->add_flag("--fallback", o.fallback,
                "Nodes whose operator has no semantics for --profile follow onnxruntime");
  cmd->add_flag("--json", o.json, "Print machine-readable JSON");
  cmd->add_flag("--layers", o.layers, "Print the time of every layer");
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
