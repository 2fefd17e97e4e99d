#include "onnx/attributes.hpp"

#include "npukit/error.hpp"
#include "npukit/ops/onnx_window.hpp"
#include "npukit/ops/pool2d.hpp"

namespace npukit::onnx {

namespace {
const Attr* find(const Node& n, const char* name, Attr::Kind kind) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return nullptr;
  static const char* kinds[] = {"an int",           "a float",  "a string", "a list of ints",
                                "a list of floats", "a tensor", "other"};
  check(it->second.kind == kind, n.op_type.c_str(), name, "an attribute of another type",
        kinds[static_cast<int>(kind)]);
  return &it->second;
}
}  // namespace

bool has_attr(const Node& n, const char* name) {
  return n.attrs.count(name) != 0;
}

int64_t attr_int(const Node& n, const char* name, int64_t dflt) {
  const Attr* a = find(n, name, Attr::Kind::i);
  return a ? a->i : dflt;
}

float attr_float(const Node& n, const char* name, float dflt) {
  const Attr* a = find(n, name, Attr::Kind::f);
  return a ? a->f : dflt;
}

std::string attr_string(const Node& n, const char* name, const std::string& dflt) {
  const Attr* a = find(n, name, Attr::Kind::s);
  return a ? a->s : dflt;
}

std::vector<int64_t> attr_ints(const Node& n, const char* name, std::vector<int64_t> dflt) {
  if (const Attr* a = find(n, name, Attr::Kind::ints)) return a->ints;
  return dflt;
}

void expect_attrs(const Node& n, std::initializer_list<const char*> known) {
  for (const auto& [name, attr] : n.attrs) {
    bool ok = false;
    std::string all;
    for (const char* k : known) {
      ok = ok || name == k;
      all += (all.empty() ? "" : ", ") + std::string(k);
    }
    check(ok, n.op_type.c_str(), "attribute", "'" + name + "'",
          all.empty() ? std::string("no attributes") : all);
  }
}

bool present(const PlanContext& c, size_t i) {
  return i < c.in.size() && c.in[i].present;
}

const Operand& operand(const PlanContext& c, size_t i, std::initializer_list<Elem> allowed) {
  const std::string param = "input " + std::to_string(i);
  check(present(c, i), c.node.op_type.c_str(), param.c_str(), "absent", "a tensor");
  const Operand& o = c.in[i];
  std::string all;
  bool ok = false;
  for (Elem e : allowed) {
    ok = ok || o.elem == e;
    all += (all.empty() ? "" : " or ") + std::string(elem_name(e));
  }
  check(ok, c.node.op_type.c_str(), (param + " ('" + c.node.inputs[i] + "') type").c_str(),
        elem_name(o.elem), all);
  return o;
}

void expect_rank(const PlanContext& c, size_t i, int lo, int hi) {
  const Operand& o = c.in[i];
  const auto r = static_cast<int>(o.shape.size());
  check(r >= lo && r <= hi, c.node.op_type.c_str(),
        ("input " + std::to_string(i) + " ('" + c.node.inputs[i] + "')").c_str(),
        "shape " + shape_text(o.shape),
        lo == hi ? "rank " + std::to_string(lo)
                 : "rank " + std::to_string(lo) + " to " + std::to_string(hi));
}

Window2d onnx_window(const PlanContext& c, const Shape& x, const Shape* kernel, bool ceil_mode) {
  const Node& n = c.node;
  auto optional_ints = [&](const char* name) -> std::optional<std::vector<int64_t>> {
    if (!has_attr(n, name)) return std::nullopt;
    return attr_ints(n, name);
  };
  OnnxWindowAttributes a;
  a.kernel_shape = optional_ints("kernel_shape");
  a.strides = optional_ints("strides");
  a.pads = optional_ints("pads");
  a.dilations = optional_ints("dilations");
  a.auto_pad = attr_string(n, "auto_pad", "NOTSET");
  a.ceil_mode = ceil_mode ? 1 : 0;
  if (kernel)
    return onnx_window_2d(n.op_type.c_str(), a, x[2], x[3], WindowUse::conv, c.profile,
                          {(*kernel)[2], (*kernel)[3]});
  return onnx_window_2d(n.op_type.c_str(), a, x[2], x[3], WindowUse::pool, c.profile);
}

const Constant& constant_input(const PlanContext& c, size_t i, const char* what) {
  check(present(c, i) && c.in[i].value != nullptr, c.node.op_type.c_str(), what,
        present(c, i) ? "'" + c.node.inputs[i] + "' computed at run time" : std::string("absent"),
        "an initializer or Constant");
  return *c.in[i].value;
}

std::vector<int64_t> constant_ints(const PlanContext& c, size_t i, const char* what) {
  const Constant& k = constant_input(c, i, what);
  check(k.elem == Elem::s64, c.node.op_type.c_str(), what, elem_name(k.elem), "int64");
  return k.ints;
}

Operand make_operand(Elem e, Shape shape) {
  Operand o;
  o.present = true;
  o.elem = e;
  o.shape = std::move(shape);
  return o;
}

DType runtime_dtype(const PlanContext& c, Elem e) {
  auto d = dtype_of(e);
  check(d.has_value(), c.node.op_type.c_str(), "type", elem_name(e),
        "float, uint8, int8, int32, int64 or bool");
  return *d;
}

}  // namespace npukit::onnx
