// `npukit isa golden`: YAML cases -> testbench files. Parsing and writing only;
// lowering and execution are npukit::ghp::make_golden.
#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <random>

#include "isa_files.hpp"
#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/memory_budget.hpp"
#include "npukit/read_file.hpp"

namespace npukit::cli {

namespace {

using namespace npukit::ghp;
constexpr const char* kFn = "npukit isa golden";

template <class T>
T get(const YAML::Node& n, const char* key, T fallback, size_t k) {
  if (!n[key]) return fallback;
  try {
    return n[key].as<T>();
  } catch (const YAML::Exception& e) {
    fail(kFn, "case " + std::to_string(k) + ": " + key, YAML::Dump(n[key]), e.what());
  }
}

std::vector<int64_t> ints(const YAML::Node& n, const char* key, size_t k) {
  return get<std::vector<int64_t>>(n, key, {}, k);
}

// Keys of the public testbench configs (cfg_avgp.yaml: OC, INC, INH_, INW_,
// KH, KW, strideH, strideW, padL, padR, padU, padD; cfg_add.yaml: vec_size)
// are accepted beside the ONNX-style ones.
GoldenCase parse_case(const YAML::Node& n, size_t k, uint64_t base_seed) {
  GoldenCase c;
  c.op = get<std::string>(n, "op", "avgp", k);
  c.seed = get<uint64_t>(n, "seed", base_seed + k, k);
  c.C = get<int64_t>(n, "C", get<int64_t>(n, "INC", get<int64_t>(n, "OC", 8, k), k), k);
  c.H = get<int64_t>(n, "H", get<int64_t>(n, "INH_", 8, k), k);
  c.W = get<int64_t>(n, "W", get<int64_t>(n, "INW_", 8, k), k);
  PoolAttrs& a = c.attrs;
  a.kernel_shape = ints(n, "kernel_shape", k);
  if (a.kernel_shape.empty())
    a.kernel_shape = {get<int64_t>(n, "KH", 2, k), get<int64_t>(n, "KW", 2, k)};
  a.strides = ints(n, "strides", k);
  if (a.strides.empty())
    a.strides = {get<int64_t>(n, "strideH", 1, k), get<int64_t>(n, "strideW", 1, k)};
  a.pads = ints(n, "pads", k);
  if (a.pads.empty())
    a.pads = {get<int64_t>(n, "padU", 0, k), get<int64_t>(n, "padL", 0, k),
              get<int64_t>(n, "padD", 0, k), get<int64_t>(n, "padR", 0, k)};
  a.dilations = ints(n, "dilations", k);
  a.auto_pad = get<std::string>(n, "auto_pad", "NOTSET", k);
  a.ceil_mode = get<int64_t>(n, "ceil_mode", 0, k) != 0;
  a.count_include_pad = get<int64_t>(n, "count_include_pad", 1, k);

  // Scales and zero points not given are drawn from the case's seed.
  std::mt19937_64 rng(c.seed ^ 0x5DEECE66Dull);
  std::uniform_real_distribution<double> scale(0.005, 0.05), ratio(0.3, 1.5);
  std::uniform_int_distribution<int> zp(0, 255);
  c.q.x_scale = get<double>(n, "x_scale", scale(rng), k);
  c.q.x_zp = get<int>(n, "x_zero_point", zp(rng), k);
  c.q.y_scale = get<double>(n, "y_scale", c.q.x_scale * ratio(rng), k);
  c.q.y_zp = get<int>(n, "y_zero_point", zp(rng), k);
  if (c.op == "add") {
    const int64_t elements = get<int64_t>(n, "elements", get<int64_t>(n, "vec_size", 0, k), k);
    if (elements > 0) {
      c.C = elements;
      c.H = c.W = 1;
    }
    c.add_q.a_scale = get<double>(n, "a_scale", scale(rng), k);
    c.add_q.a_zp = get<int>(n, "a_zero_point", zp(rng), k);
    c.add_q.b_scale = get<double>(n, "b_scale", scale(rng), k);
    c.add_q.b_zp = get<int>(n, "b_zero_point", zp(rng), k);
    c.add_q.c_scale =
        get<double>(n, "c_scale", (c.add_q.a_scale + c.add_q.b_scale) * ratio(rng), k);
    c.add_q.c_zp = get<int>(n, "c_zero_point", zp(rng), k);
  }
  if (n["data"]) {
    for (int64_t v : ints(n, "data", k)) {
      if (v < 0 || v > 255)
        fail(kFn, "case " + std::to_string(k) + ": data", std::to_string(v), "[0, 255]");
      c.data.push_back(static_cast<uint8_t>(v));
    }
  } else if (n["data_file"]) {
    c.data = read_bytes(get<std::string>(n, "data_file", "", k));
  }
  // Sizes come from the file: bound them before anything is allocated.
  const std::string where = "case " + std::to_string(k);
  const int64_t dim_max = int64_t{1} << 31;
  check_range(kFn, (where + ": C").c_str(), c.C, 1, dim_max);
  check_range(kFn, (where + ": H").c_str(), c.H, 1, dim_max);
  check_range(kFn, (where + ": W").c_str(), c.W, 1, dim_max);
  check_allocation(kFn, (where + ": elements").c_str(),
                   "C x H x W = " + std::to_string(c.C) + " x " + std::to_string(c.H) + " x " +
                       std::to_string(c.W),
                   static_cast<uint64_t>(c.C) * static_cast<uint64_t>(c.H),
                   static_cast<uint64_t>(c.W) * 4);  // inputs, outputs and accumulators
  return c;
}

std::string json_ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::string json_fields(const Instruction& ins, const HwConfig& hw, bool real) {
  std::string s = "{";
  const auto& fs = fields(ins.format());
  for (size_t i = 0; i < fs.size(); ++i) {
    const int64_t v = real ? real_field(ins.format(), static_cast<int>(i), ins.values[i], hw)
                           : static_cast<int64_t>(ins.values[i]);
    s += fmt::format("{}\"{}\": {}", i ? ", " : "", fs[i].name, v);
  }
  return s + "}";
}

// The config file's cases, hw name (hw_name when given) and base seed.
struct GoldenConfig {
  std::string hw_text;
  uint64_t base_seed = 2023;
  std::vector<GoldenCase> cases;
};

GoldenConfig read_config(const std::string& config, const std::string& hw_name) {
  const std::vector<char> text =
      read_file_bounded(kFn, "--config", config, kMaxTextFileBytes, "a readable YAML file");
  GoldenConfig g;
  g.hw_text = hw_name;
  // yaml-cpp reports with its own exceptions: turn each into npukit's format.
  try {
    const YAML::Node root = YAML::Load(std::string(text.begin(), text.end()));
    if (!root.IsMap() || !root["cases"] || !root["cases"].IsSequence())
      fail(kFn, "--config", "'" + config + "'", "a YAML mapping with a 'cases:' list");
    if (g.hw_text.empty()) g.hw_text = root["hw"] ? root["hw"].as<std::string>() : "M64P64Q16R16S8";
    if (root["seed"]) g.base_seed = root["seed"].as<uint64_t>();
    for (size_t k = 0; k < root["cases"].size(); ++k)
      g.cases.push_back(parse_case(root["cases"][k], k, g.base_seed));
  } catch (const YAML::Exception& e) {
    std::string msg = e.what();
    for (char& ch : msg)
      if (ch == '\0') ch = '?';
    fail(kFn, "--config", "'" + config + "'", "a valid YAML file (yaml-cpp: " + msg + ")");
  }
  return g;
}

// The manifest's quantization fields of one case.
std::string quant_json(const GoldenCase& c, const GoldenResult& r) {
  if (c.op == "add")
    return fmt::format(
        "\"a_scale\": {:.17g}, \"a_zero_point\": {}, \"b_scale\": {:.17g}, \"b_zero_point\": {}, "
        "\"c_scale\": {:.17g}, \"c_zero_point\": {}, \"M1\": {:.17g}, \"M2\": {:.17g}",
        c.add_q.a_scale, c.add_q.a_zp, c.add_q.b_scale, c.add_q.b_zp, c.add_q.c_scale, c.add_q.c_zp,
        c.add_q.a_scale / c.add_q.c_scale, c.add_q.b_scale / c.add_q.c_scale);
  if (c.op == "maxp") return "\"x_zero_point\": 0, \"y_zero_point\": 0";
  const double n = static_cast<double>(r.ins[f64::vec_size]);
  return fmt::format(
      "\"x_scale\": {:.17g}, \"x_zero_point\": {}, \"y_scale\": {:.17g}, \"y_zero_point\": {}, "
      "\"M1\": {:.17g}",
      c.q.x_scale, c.q.x_zp, c.q.y_scale, c.q.y_zp, c.q.x_scale / (c.q.y_scale * n));
}

}  // namespace

void run_golden(const std::string& config, const std::string& out_dir, const std::string& hw_name,
                const std::string& profile_name_) {
  const GoldenConfig g = read_config(config, hw_name);
  const std::vector<GoldenCase>& cases = g.cases;
  const HwConfig hw = hw_preset(g.hw_text);
  const Profile profile = profile_from_name(profile_name_);
  post_rounding_for(profile);
  const std::vector<GoldenResult> results = make_golden(cases, hw, profile);

  std::filesystem::create_directories(out_dir);
  const std::filesystem::path dir(out_dir);
  std::string ins_txt, asm_text, manifest;
  std::vector<Instruction> program;
  manifest = fmt::format(
      "{{\n  \"hw\": {{\"name\": \"{}\", \"M\": {}, \"P\": {}, \"Q\": {}, "
      "\"R\": {}, \"S\": {}}},\n  \"profile\": \"{}\",\n  \"seed\": {},\n"
      "  \"cases\": [\n",
      hw.name, hw.M, hw.P, hw.Q, hw.R, hw.S, profile_name(profile), g.base_seed);
  for (size_t k = 0; k < results.size(); ++k) {
    const GoldenResult& r = results[k];
    const GoldenCase& c = cases[k];
    const bool add = c.op == "add";
    // (fmt: g++ 12's -Wrestrict misfires on these concatenations once inlined here)
    const std::string xn = fmt::format("{}{}.bin", add ? "A" : "X", k);
    const std::string bn = fmt::format("B{}.bin", k);
    const std::string yn = fmt::format("{}{}.bin", add ? "C" : "Y", k);
    write_bytes((dir / xn).string(), r.x);
    if (add) write_bytes((dir / bn).string(), r.x2);
    write_bytes((dir / yn).string(), r.y);
    ins_txt += ins_txt_line(r.ins) + "\n";
    asm_text += disassemble(r.ins, hw) + "\n";
    program.push_back(r.ins);
    manifest += fmt::format(
        "    {{\"index\": {}, \"op\": \"{}\", \"opcode\": \"{}\", \"seed\": {}, \"ceil_mode\": {}, "
        "\"pads\": {},\n     \"x_file\": \"{}\", {}\"y_file\": \"{}\", \"x_shape\": {}, "
        "\"y_shape\": {},\n     {},\n     \"fields\": {},\n     \"stored\": {}}}{}\n",
        k, c.op, op_name(r.ins.op), c.seed, c.attrs.ceil_mode ? 1 : 0, json_ints(c.attrs.pads), xn,
        add ? "\"b_file\": \"" + bn + "\", " : "", yn, json_ints(r.x_shape), json_ints(r.y_shape),
        quant_json(c, r), json_fields(r.ins, hw, true), json_fields(r.ins, hw, false),
        k + 1 < results.size() ? "," : "");
  }
  manifest += "  ]\n}\n";
  write_text((dir / "ins.txt").string(), ins_txt);
  write_text((dir / "program.asm").string(), asm_text);
  write_bytes((dir / "program.bin").string(), encode_stream(program));
  write_text((dir / "manifest.json").string(), manifest);
  fmt::print("{} cases ({}, {}) -> {}\n", results.size(), hw.name, profile_name(profile), out_dir);
}

}  // namespace npukit::cli
