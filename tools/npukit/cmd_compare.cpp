// `npukit compare OP --profiles a,b,...`: one configuration under several
// semantics profiles; prints which outputs differ, by how much and where.
#include <fmt/core.h>

#include <sstream>

#include "commands.hpp"
#include "compare_model.hpp"
#include "npukit/error.hpp"
#include "npukit/ops/onnx_window.hpp"
#include "npukit/ops/profile_support.hpp"
#include "profile_compare.hpp"

namespace npukit::cli {

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int64_t> ints(const std::string& s, const char* option, size_t count) {
  std::vector<int64_t> v;
  for (const std::string& item : split(s)) {
    try {
      v.push_back(std::stoll(item));
    } catch (const std::exception&) {
      fail("npukit compare", option, "'" + s + "'", "comma-separated integers");
    }
  }
  check(v.size() == count, "npukit compare", option, "'" + s + "'",
        std::to_string(count) + " comma-separated integers");
  return v;
}

struct Options {
  std::string op, profiles, dtype = "u8";
  // A model comparison (op is an .onnx file).
  std::vector<std::string> inputs;
  std::string preprocess, svg;
  bool fallback = false;
  std::string shape = "1,8,16,16", kernel = "3,3", strides = "1,1", pads = "0,0,0,0";
  int ceil_mode = 0, count_include_pad = 1;
  float x_scale = 0.05f, y_scale = 0.05f, b_scale = 0.05f, w_scale = 0.01f;
  int x_zero_point = 0, y_zero_point = 0, b_zero_point = 0;
  int64_t out_channels = 8;
  std::string w_dtype = "s8";
  uint64_t seed = 1;
};

OpFamily family_of(const std::string& op) {
  if (op == "qlinear_average_pool" || op == "qlinear_global_average_pool")
    return OpFamily::qlinear_average_pool;
  if (op == "qlinear_add") return OpFamily::qlinear_add;
  if (op == "qlinear_conv") return OpFamily::qlinear_conv;
  if (op == "qlinear_matmul") return OpFamily::qlinear_matmul;
  throw Error("npukit compare", "op", "'" + op + "'",
              "qlinear_average_pool, qlinear_global_average_pool, qlinear_add, qlinear_conv, "
              "qlinear_matmul or an .onnx model file");
}

bool is_model_file(const std::string& op) {
  return op.size() > 5 && op.compare(op.size() - 5, 5, ".onnx") == 0;
}

int run(const Options& o) {
  if (is_model_file(o.op)) {
    ModelCompareOptions m;
    m.model = o.op;
    m.inputs = o.inputs;
    m.preprocess = o.preprocess;
    m.profiles = split(o.profiles);
    m.fallback = o.fallback;
    m.svg = o.svg;
    return run_model_compare(m);
  }
  check(o.inputs.empty() && o.svg.empty() && !o.fallback, "npukit compare", "op", "'" + o.op + "'",
        "an .onnx model with --input, --svg or --fallback");
  CompareConfig c;
  c.op = o.op;
  c.dtype = dtype_from_name(o.dtype);
  c.shape = ints(o.shape, "--shape", 4);
  // The same translation of ONNX attributes as the runner's and Python's.
  OnnxWindowAttributes a;
  a.kernel_shape = ints(o.kernel, "--kernel", 2);
  a.strides = ints(o.strides, "--strides", 2);
  a.pads = ints(o.pads, "--pads", 4);  // ONNX order: top, left, bottom, right
  a.ceil_mode = o.ceil_mode;
  const bool conv = o.op == "qlinear_conv";
  c.window = onnx_window_2d("npukit compare", a, c.shape[2], c.shape[3],
                            conv ? WindowUse::conv : WindowUse::pool, Profile::onnxruntime,
                            conv ? *a.kernel_shape : std::vector<int64_t>{});
  c.count_include_pad = onnx_count_include_pad("npukit compare", o.count_include_pad);
  c.x_scale = o.x_scale;
  c.y_scale = o.y_scale;
  c.b_scale = o.b_scale;
  c.x_zero_point = o.x_zero_point;
  c.y_zero_point = o.y_zero_point;
  c.b_zero_point = o.b_zero_point;
  c.seed = o.seed;
  c.out_channels = o.out_channels;
  c.w_dtype = dtype_from_name(o.w_dtype);
  c.w_scale = o.w_scale;
  std::vector<Profile> profiles;
  for (const std::string& name : split(o.profiles)) profiles.push_back(profile_from_name(name));
  if (o.profiles.empty())  // every profile that covers the operator, onnxruntime first
    for (Profile p : all_profiles())
      if (p == semantics_base(p) && supports(family_of(o.op), p)) profiles.push_back(p);
  const CompareReport r = compare_profiles(c, profiles);
  fmt::print("{}", format_compare_report(r));
  // Nothing compared (every profile rejected the case) is a failure for scripts.
  for (const ProfileRun& run : r.runs)
    if (run.error.empty()) return 0;
  return 1;
}

}  // namespace

void add_compare_command(CLI::App& app) {
  static Options o;
  auto* cmd = app.add_subcommand(
      "compare",
      "Run one quantized operator configuration, or a whole ONNX model, under several "
      "profiles and report which outputs differ, by how much and where (per layer for a model)");
  cmd->add_option("op", o.op,
                  "qlinear_average_pool | qlinear_global_average_pool | qlinear_add | "
                  "qlinear_conv | qlinear_matmul | MODEL.onnx")
      ->required();
  cmd->add_option("--profiles", o.profiles,
                  "Comma-separated profiles; the first is the reference (default: every profile "
                  "that covers the operator, or every profile for a model)");
  cmd->add_option("-i,--input", o.inputs,
                  "Model: NAME=FILE (.npy or picture) per model input, as for npukit run");
  cmd->add_option("--preprocess", o.preprocess, "Model: picture rule, as for npukit run");
  cmd->add_option("--svg", o.svg, "Model: write a heat map of layers x profiles to this SVG file");
  cmd->add_flag("--fallback", o.fallback,
                "Model: nodes a profile does not cover follow onnxruntime (as npukit run)");
  cmd->add_option("--dtype", o.dtype, "u8 or s8")->capture_default_str();
  cmd->add_option("--shape", o.shape, "N,C,H,W of x")->capture_default_str();
  cmd->add_option("--kernel", o.kernel, "kernel_shape KH,KW")->capture_default_str();
  cmd->add_option("--strides", o.strides, "strides SH,SW")->capture_default_str();
  cmd->add_option("--pads", o.pads, "pads top,left,bottom,right (ONNX order)")
      ->capture_default_str();
  cmd->add_option("--ceil-mode", o.ceil_mode, "0 or 1")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  add_threads_option(cmd);
  cmd->add_option("--count-include-pad", o.count_include_pad, "0 or 1")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  cmd->add_option("--x-scale", o.x_scale)->capture_default_str();
  cmd->add_option("--x-zero-point", o.x_zero_point)->capture_default_str();
  cmd->add_option("--y-scale", o.y_scale)->capture_default_str();
  cmd->add_option("--y-zero-point", o.y_zero_point)->capture_default_str();
  cmd->add_option("--b-scale", o.b_scale, "qlinear_add: B's scale")->capture_default_str();
  cmd->add_option("--b-zero-point", o.b_zero_point, "qlinear_add: B's zero point")
      ->capture_default_str();
  cmd->add_option("--out-channels", o.out_channels,
                  "qlinear_conv: output channels; qlinear_matmul: columns of b")
      ->capture_default_str();
  cmd->add_option("--w-dtype", o.w_dtype, "qlinear_conv/qlinear_matmul: s8 or u8 weights")
      ->capture_default_str();
  cmd->add_option("--w-scale", o.w_scale, "qlinear_conv/qlinear_matmul: weight scale")
      ->capture_default_str();
  // A uint64 option would take "-1" as 2^64 - 1: refuse signs.
  cmd->add_option("--seed", o.seed, "Seed of the uniform random input codes")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([] {
    if (const int rc = run(o)) throw CLI::RuntimeError(rc);
  });
}

}  // namespace npukit::cli
