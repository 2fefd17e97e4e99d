#include "onnx/attributes.hpp"

#include "npukit/error.hpp"
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
  const Attr* a = find(n, name, Attr::Kind::ints);
  return a ? a->ints : dflt;
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
  const char* fn = n.op_type.c_str();
  auto pair = [&](const char* name, std::vector<int64_t> v, int64_t& a, int64_t& b) {
    check(v.size() == 2, fn, name, shape_text(v), "2 values for a 2-D window");
    a = v[0];
    b = v[1];
  };
  Window2d w;
  if (kernel) {
    w.kernel_h = (*kernel)[2];
    w.kernel_w = (*kernel)[3];
    if (has_attr(n, "kernel_shape"))
      check(attr_ints(n, "kernel_shape") == Shape{w.kernel_h, w.kernel_w}, fn, "kernel_shape",
            shape_text(attr_ints(n, "kernel_shape")),
            "the weight's kernel size " + shape_text({w.kernel_h, w.kernel_w}));
  } else {
    check(has_attr(n, "kernel_shape"), fn, "kernel_shape", "absent", "2 values (required)");
    pair("kernel_shape", attr_ints(n, "kernel_shape"), w.kernel_h, w.kernel_w);
  }
  pair("strides", attr_ints(n, "strides", {1, 1}), w.stride_h, w.stride_w);
  pair("dilations", attr_ints(n, "dilations", {1, 1}), w.dilation_h, w.dilation_w);
  const std::vector<int64_t> pads = attr_ints(n, "pads", {0, 0, 0, 0});
  check(pads.size() == 4, fn, "pads", shape_text(pads), "4 values [top, left, bottom, right]");
  w.pad_top = pads[0];
  w.pad_left = pads[1];
  w.pad_bottom = pads[2];
  w.pad_right = pads[3];
  w.ceil_mode = ceil_mode;
  const AutoPad ap = auto_pad_from_name(attr_string(n, "auto_pad", "NOTSET"), fn);
  check(ap == AutoPad::notset || !has_attr(n, "pads"), fn, "pads", shape_text(pads),
        "no pads when auto_pad is set");
  // ONNX Runtime refuses pool pads >= kernel ("Pad should be smaller than
  // kernel"): such windows can lie entirely in the padding.
  if (!kernel) check_pool_pads(fn, w);
  // Pools (no weight) follow the profile's pooling geometry; convolutions ONNX's.
  resolve_pool_auto_pad(w, ap, x[2], x[3],
                        kernel == nullptr ? pool_geometry_for(c.profile) : PoolGeometry::onnx);
  return w;
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
