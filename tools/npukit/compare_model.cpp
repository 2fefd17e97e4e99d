#include "compare_model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include "compare_svg.hpp"
#include "model_inputs.hpp"
#include "npukit/error.hpp"
#include "npukit/onnx/model.hpp"
#include "npukit/ops/layout.hpp"

namespace npukit::cli {

namespace {

constexpr const char* kFn = "npukit compare";

struct ProfileResult {
  std::string profile;
  std::string error;                     // why it could not run ("" when it ran)
  std::map<std::string, Tensor> values;  // by value name
  std::vector<std::string> fell_back;    // nodes that followed onnxruntime (--fallback)
  std::vector<onnx::NodeInfo> nodes;     // execution order
};

double value_at(const TensorView& v, int64_t i) {
  switch (v.dtype()) {
    case DType::f32:
      return v.data<float>()[i];
    case DType::u8:
      return v.data<uint8_t>()[i];
    case DType::s8:
      return v.data<int8_t>()[i];
    case DType::s16:
      return v.data<int16_t>()[i];
    case DType::s32:
      return v.data<int32_t>()[i];
    case DType::s64:
      return static_cast<double>(v.data<int64_t>()[i]);
    case DType::b8:
      return v.data<uint8_t>()[i];
  }
  return std::nan("");
}

// Element i equal in both: the same bits, except that any NaN equals any NaN.
bool same_at(const TensorView& a, const TensorView& b, int64_t i) {
  if (a.dtype() == DType::f32 && std::isnan(a.data<float>()[i]) && std::isnan(b.data<float>()[i]))
    return true;
  const size_t es = dtype_size(a.dtype());
  return std::memcmp(static_cast<const char*>(a.raw()) + i * static_cast<int64_t>(es),
                     static_cast<const char*>(b.raw()) + i * static_cast<int64_t>(es), es) == 0;
}

LayerDiff diff(const TensorView& ref, const Tensor* other) {
  LayerDiff d;
  if (!other) {
    d.note = "not computed";
    return d;
  }
  const TensorView v = other->view();
  if (v.dtype() != ref.dtype() || v.shape() != ref.shape()) {
    d.note = std::string(dtype_name(v.dtype())) + " " + shape_text(v.shape());
    return d;
  }
  d.compared = true;
  d.total = shape_numel(ref.shape());
  for (int64_t i = 0; i < d.total; ++i) {
    if (same_at(ref, v, i)) continue;
    ++d.differing;
    const double a = value_at(ref, i), b = value_at(v, i);
    d.max_abs = std::max(d.max_abs, std::isnan(a) || std::isnan(b) ? INFINITY : std::fabs(a - b));
  }
  return d;
}

ProfileResult run_one(const ModelCompareOptions& o, const std::string& name,
                      const std::vector<std::string>& input_args) {
  ProfileResult r;
  r.profile = name;
  try {
    // Every profile keeps every value, so layers line up by name.
    onnx::Model model = onnx::Model::load(o.model, profile_from_name(name), o.fallback,
                                          onnx::Intermediates::keep_all);
    const std::vector<Tensor> inputs = read_model_inputs(model, input_args, o.preprocess, kFn);
    std::vector<TensorView> views;
    for (const Tensor& t : inputs) views.push_back(t.view());
    model.execute(views);
    for (const onnx::NamedValue& v : model.values()) {
      if (v.node.empty()) continue;  // graph inputs are the same for everyone
      Tensor copy_of(v.view.dtype(), v.view.shape());
      copy(v.view, copy_of.view());
      r.values.emplace(v.name, std::move(copy_of));
    }
    r.nodes = model.nodes();
    for (const onnx::NodeInfo& n : r.nodes)
      if (semantics_base(n.profile) != semantics_base(model.profile()))
        r.fell_back.push_back(n.name);
  } catch (const onnx::ModelError& e) {
    r.error = e.issues().empty() ? e.what() : e.issues().front().text();
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

std::string cell_text(const LayerDiff& d) {
  if (!d.compared) return d.note;
  if (d.differing == 0) return "=";
  return fmt::format("{}/{} max {:.3g}", d.differing, d.total, d.max_abs);
}

// Rows: the reference's (ran[0]) node outputs in execution order; one column
// per other profile.
HeatMap build_heat_map(const std::string& model, const std::vector<const ProfileResult*>& ran) {
  HeatMap map;
  map.title =
      "npukit compare " + model + ": differing elements per layer against " + ran[0]->profile;
  for (size_t p = 1; p < ran.size(); ++p) map.columns.push_back(ran[p]->profile);
  for (const onnx::NodeInfo& n : ran[0]->nodes)
    for (const std::string& out : n.outputs) {
      auto it = ran[0]->values.find(out);
      if (out.empty() || it == ran[0]->values.end()) continue;
      HeatRow row{n.name + " (" + n.op_type + ")", out, {}};
      for (size_t p = 1; p < ran.size(); ++p) {
        auto o_it = ran[p]->values.find(out);
        row.cells.push_back(
            diff(it->second.view(), o_it == ran[p]->values.end() ? nullptr : &o_it->second));
      }
      map.rows.push_back(std::move(row));
    }
  return map;
}

void print_table(const HeatMap& map, const std::string& reference) {
  size_t layer_w = 5;
  for (const HeatRow& r : map.rows) layer_w = std::max(layer_w, r.label.size());
  std::vector<size_t> col_w;
  for (size_t c = 0; c < map.columns.size(); ++c) {
    size_t w = map.columns[c].size();
    for (const HeatRow& r : map.rows) w = std::max(w, cell_text(r.cells[c]).size());
    col_w.push_back(w);
  }
  fmt::print(
      "reference profile: {} (each cell: differing elements / total, largest difference)\n\n",
      reference);
  fmt::print("{:<{}}", "layer", layer_w);
  for (size_t c = 0; c < map.columns.size(); ++c) fmt::print("  {:<{}}", map.columns[c], col_w[c]);
  fmt::print("\n");
  for (const HeatRow& r : map.rows) {
    fmt::print("{:<{}}", r.label, layer_w);
    for (size_t c = 0; c < r.cells.size(); ++c)
      fmt::print("  {:<{}}", cell_text(r.cells[c]), col_w[c]);
    fmt::print("\n");
  }
}

void print_first_divergence(const HeatMap& map, const std::string& reference) {
  fmt::print("\nfirst divergence from {}:\n", reference);
  for (size_t c = 0; c < map.columns.size(); ++c) {
    const HeatRow* first = nullptr;
    for (const HeatRow& r : map.rows)
      if (!r.cells[c].compared || r.cells[c].differing > 0) {
        first = &r;
        break;
      }
    if (first)
      fmt::print("  {:<18} at {}: {}\n", map.columns[c], first->label, cell_text(first->cells[c]));
    else
      fmt::print("  {:<18} never: every layer identical\n", map.columns[c]);
  }
}

}  // namespace

int run_model_compare(const ModelCompareOptions& o) {
  std::vector<std::string> names = o.profiles;
  if (names.empty())
    for (Profile p : all_profiles()) names.push_back(profile_name(p));
  check(!names.empty(), kFn, "--profiles", "''", "at least one profile");
  for (const std::string& n : names) profile_from_name(n);  // bad names fail before any run

  std::vector<ProfileResult> results;
  for (const std::string& n : names) results.push_back(run_one(o, n, o.inputs));
  std::vector<const ProfileResult*> ran;
  for (const ProfileResult& r : results)
    if (r.error.empty()) ran.push_back(&r);
  for (const ProfileResult& r : results)
    if (!r.error.empty()) fmt::print("{}: does not run this model: {}\n", r.profile, r.error);
  for (const ProfileResult& r : results)
    if (r.error.empty() && !r.fell_back.empty())
      fmt::print("{}: {} node(s) followed onnxruntime (--fallback), e.g. {}\n", r.profile,
                 r.fell_back.size(), r.fell_back.front());
  if (ran.size() < 2) {
    fmt::print("fewer than two profiles ran the model: nothing to compare\n");
    return 1;
  }
  const HeatMap map = build_heat_map(o.model, ran);
  print_table(map, ran[0]->profile);
  print_first_divergence(map, ran[0]->profile);
  if (!o.svg.empty()) {
    std::ofstream f(o.svg);
    check(static_cast<bool>(f), kFn, "--svg", "'" + o.svg + "'", "a writable file");
    f << heat_map_svg(map);
    check(static_cast<bool>(f), kFn, "--svg", "'" + o.svg + "'", "a writable file");
    fmt::print("\nheat map: {}\n", o.svg);
  }
  return 0;
}

}  // namespace npukit::cli
