// ONNX Runtime 1.30's QDQ rewrites, restated from its documented behaviour
// and its optimizer sources (read for facts): level 2's ReluQuantFusion and
// ClipQuantFusion rules, the s8 -> u8 weight conversion, then the QDQ
// selector-action transformer. Level 1's QDQ propagation and double-QDQ
// removal are not modelled (see docs/qdq.md).
#include "onnx/qdq_fusion.hpp"

#include "onnx/ort_level1.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace npukit::onnx {

namespace {

constexpr size_t kNone = SIZE_MAX;

bool is(const Node& n, const char* op) {
  return n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx");
}

// The version of an operator's schema that a model's opset selects (the
// largest version that is not newer): ORT's rules name schema versions.
int64_t since_version(const Node& n, std::initializer_list<int64_t> versions) {
  int64_t v = 0;
  for (int64_t x : versions)
    if (x <= n.opset) v = x;
  return v;
}
int64_t relu_version(const Node& n) {
  return since_version(n, {1, 6, 13, 14});
}
int64_t q_version(const Node& n) {
  return since_version(n, {10, 13, 19, 21, 23, 24});
}
int64_t maxpool_version(const Node& n) {
  return since_version(n, {1, 8, 10, 11, 12, 22});
}

// x86 conversion of an out-of-range double to int32 (cvtsd2si): INT32_MIN.
int32_t to_int32_x86(double v) {
  if (!(v >= -2147483648.0 && v < 2147483648.0)) return INT32_MIN;
  return static_cast<int32_t>(v);
}

class Fuser {
 public:
  Fuser(LoadedGraph& g, QdqFusionLog* log, bool ort_only_ops)
      : g_(g), log_(log), ort_only_ops_(ort_only_ops), dead_(g.nodes.size(), 0) {
    for (const auto& [name, k] : g.constants) konst_[name] = k.get();
    for (const Declared& d : g.outputs) graph_outputs_.insert(d.info.name);
    for (const Declared& d : g.inputs)
      if (auto e = elem_from_onnx(d.onnx_type)) elem_[d.info.name] = *e;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      for (const std::string& o : n.outputs)
        if (!o.empty()) producer_[o] = i;
      add_uses(i);
      if (is(n, "Constant") && !n.outputs.empty()) {
        auto it = n.attrs.find("value");
        if (it != n.attrs.end() && it->second.tensor)
          konst_[n.outputs[0]] = it->second.tensor.get();
      }
      if (is(n, "QuantizeLinear") && !n.outputs.empty()) elem_[n.outputs[0]] = q_output_elem(n);
    }
    for (const auto& [name, k] : konst_) elem_[name] = k->elem;
  }

  void run() {
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_[i]) remove_redundant_activation(i);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_[i]) activation_pair_to_u8(i);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_[i]) select_and_fuse(i);
    for (size_t i : touched_dq_)
      if (!dead_[i] && unused(g_.nodes[i].outputs[0])) kill(i);
    std::vector<Node> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_[i]) kept.push_back(std::move(g_.nodes[i]));
    g_.nodes = std::move(kept);
  }

 private:
  LoadedGraph& g_;
  QdqFusionLog* log_;
  bool ort_only_ops_;
  std::vector<char> dead_;
  std::map<std::string, const Constant*> konst_;
  std::map<std::string, Elem> elem_;  // element types known before any rewrite
  std::map<std::string, size_t> producer_;
  std::map<std::string, std::multiset<size_t>> users_;
  std::set<std::string> graph_outputs_;
  std::set<size_t> touched_dq_;
  size_t clip_ = kNone;  // the redundant Relu/Clip of the group being fused

  // ---- graph bookkeeping ----
  void add_uses(size_t i) {
    for (const std::string& in : g_.nodes[i].inputs)
      if (!in.empty()) users_[in].insert(i);
  }
  void drop_uses(size_t i) {
    for (const std::string& in : g_.nodes[i].inputs)
      if (!in.empty()) {
        auto& u = users_[in];
        auto it = u.find(i);
        if (it != u.end()) u.erase(it);
      }
  }
  void kill(size_t i) {
    drop_uses(i);
    dead_[i] = 1;
  }
  bool unused(const std::string& v) const {
    auto it = users_.find(v);
    return !graph_outputs_.count(v) && (it == users_.end() || it->second.empty());
  }
  // The node that alone consumes v (once), v not being a graph output.
  size_t only_consumer(const std::string& v) const {
    auto it = users_.find(v);
    if (graph_outputs_.count(v) || it == users_.end() || it->second.size() != 1) return kNone;
    return *it->second.begin();
  }
  size_t live_producer(const std::string& v, const char* op) const {
    auto it = producer_.find(v);
    if (it == producer_.end() || dead_[it->second] || !is(g_.nodes[it->second], op)) return kNone;
    return it->second;
  }
  const Constant* constant(const std::string& v) const {
    auto it = konst_.find(v);
    return it == konst_.end() ? nullptr : it->second;
  }
  std::optional<Elem> elem(const std::string& v) const {
    auto it = elem_.find(v);
    if (it == elem_.end()) return std::nullopt;
    return it->second;
  }
  Elem q_output_elem(const Node& q) const {
    if (q.inputs.size() > 2 && !q.inputs[2].empty())
      if (const Constant* z = constant(q.inputs[2])) return z->elem;
    auto od = q.attrs.find("output_dtype");
    if (od != q.attrs.end() && od->second.i != 0)
      if (auto e = elem_from_onnx(static_cast<int32_t>(od->second.i))) return *e;
    return Elem::u8;
  }
  void note(const std::string& s) {
    if (log_) log_->lines.push_back(s);
  }

  // ---- scales and zero points ----
  // A Q or DQ whose scale (and zero point, when given) are constants holding
  // one value: ORT's per-tensor condition for activations.
  bool per_tensor_constants(const Node& n) const {
    const Constant* s = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
    if (!s || s->elem != Elem::f32 || s->tensor.numel() != 1) return false;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const Constant* z = constant(n.inputs[2]);
      if (!z || z->tensor.numel() != 1 ||
          (z->elem != Elem::u8 && z->elem != Elem::s8 && z->elem != Elem::s32))
        return false;
    }
    return true;
  }
  bool constants_given(const Node& n) const {
    if (n.inputs.size() < 2 || !constant(n.inputs[1])) return false;
    return n.inputs.size() < 3 || n.inputs[2].empty() || constant(n.inputs[2]);
  }
  float scale_of(const Node& n) const {
    return constant(n.inputs[1])->tensor.to_vector<float>()[0];
  }
  int32_t zero_point_of(const Node& n) const {
    if (n.inputs.size() < 3 || n.inputs[2].empty()) return 0;
    const Constant* z = constant(n.inputs[2]);
    if (z->elem == Elem::u8) return z->tensor.to_vector<uint8_t>()[0];
    if (z->elem == Elem::s8) return z->tensor.to_vector<int8_t>()[0];
    return z->tensor.to_vector<int32_t>()[0];
  }
  // ORT's IsQDQPairSupported: the same constant scalar scale and zero point.
  bool same_quantization(const Node& dq, const Node& q) const {
    return per_tensor_constants(dq) && per_tensor_constants(q) && scale_of(dq) == scale_of(q) &&
           zero_point_of(dq) == zero_point_of(q);
  }
  // The zero point input of a Q or DQ, absent -> "" (the fused op's optional input).
  static std::string zp_input(const Node& n) { return n.inputs.size() > 2 ? n.inputs[2] : ""; }

  // ---- level 2 rewrite rules: Relu / Clip made redundant by the next Q ----
  // Clip's bounds when they are constants (absent: the float range).
  bool clip_bounds(const Node& a, float& mn, float& mx) const {
    mn = std::numeric_limits<float>::lowest();
    mx = std::numeric_limits<float>::max();
    if (a.opset < 11) {
      if (auto it = a.attrs.find("min"); it != a.attrs.end()) mn = it->second.f;
      if (auto it = a.attrs.find("max"); it != a.attrs.end()) mx = it->second.f;
      return true;
    }
    for (size_t k = 1; k < 3 && k < a.inputs.size(); ++k) {
      if (a.inputs[k].empty()) continue;
      const Constant* b = constant(a.inputs[k]);
      if (!b || b->elem != Elem::f32 || b->tensor.numel() != 1) return false;
      (k == 1 ? mn : mx) = b->tensor.to_vector<float>()[0];
    }
    return true;
  }

  // A Q's rank-0 constant float scale and zero point (absent zero point: 0 of
  // the output type) and its code range; false when not of that form.
  bool q_scalar(const Node& q, float& scale, int32_t& zp, int32_t& lo, int32_t& hi) const {
    const Constant* s = q.inputs.size() > 1 ? constant(q.inputs[1]) : nullptr;
    if (!s || s->elem != Elem::f32 || !s->shape.empty()) return false;
    scale = s->tensor.to_vector<float>()[0];
    zp = 0;
    if (q.inputs.size() > 2 && !q.inputs[2].empty()) {
      const Constant* z = constant(q.inputs[2]);
      if (!z || !z->shape.empty() || (z->elem != Elem::u8 && z->elem != Elem::s8)) return false;
      zp = zero_point_of(q);
    }
    const bool s8 = q_output_elem(q) == Elem::s8;
    lo = s8 ? -128 : 0;
    hi = s8 ? 127 : 255;
    return true;
  }

  // ---- level 2 rewrite rules: Relu / Clip made redundant by the next Q ----
  void remove_redundant_activation(size_t i) {
    const Node& a = g_.nodes[i];
    const bool relu = is(a, "Relu"), clip = is(a, "Clip");
    if ((!relu && !clip) || a.outputs.size() != 1 || a.inputs.empty()) return;
    // ReluQuantFusion matches Relu 6 and 13, ClipQuantFusion every Clip; both QuantizeLinear 10
    // and 13.
    if (relu && relu_version(a) != 6 && relu_version(a) != 13) return;
    const size_t qi = only_consumer(a.outputs[0]);
    if (qi == kNone || !is(g_.nodes[qi], "QuantizeLinear")) return;
    Node& q = g_.nodes[qi];
    if (q_version(q) != 10 && q_version(q) != 13) return;
    if (q.inputs.size() != 3 || q.inputs[2].empty()) return;
    const Constant* z = constant(q.inputs[2]);
    const Constant* s = constant(q.inputs[1]);
    if (!z || z->tensor.numel() != 1 || (z->elem != Elem::u8 && z->elem != Elem::s8)) return;
    const int32_t zp = zero_point_of(q);
    const int32_t lo = z->elem == Elem::u8 ? 0 : -128, hi = z->elem == Elem::u8 ? 255 : 127;
    if (relu) {
      if (zp != lo) return;  // Q clamps at real 0 only when its zero point is the minimum
    } else {
      // ClipQuantFusion: scalar (rank 0) scale and zero point, constant bounds.
      if (!s || s->elem != Elem::f32 || !s->shape.empty() || !z->shape.empty()) return;
      float mn, mx;
      if (!clip_bounds(a, mn, mx)) return;
      const float scale = s->tensor.to_vector<float>()[0];
      const float lower = scale * static_cast<float>(lo - zp);
      const float upper = scale * static_cast<float>(hi - zp);
      constexpr float eps = std::numeric_limits<float>::epsilon();
      if (eps < mn - lower || eps < upper - mx) return;
    }
    drop_uses(qi);
    q.inputs[0] = a.inputs[0];
    add_uses(qi);
    note(a.op_type + " '" + a.name + "' removed: QuantizeLinear '" + q.name +
         "' clamps to its range");
    kill(i);
  }

  // QDQS8ToU8Transformer on a Q -> DQ pair of s8 activations (the Q's only
  // consumer is the DQ; both have one constant s8 zero point, equal): both
  // take the u8 zero point zp + 128, so the codes between them become u8
  // (code + 128) and the groups around them fuse as u8.
  void activation_pair_to_u8(size_t qi) {
    Node& q = g_.nodes[qi];
    if (!is(q, "QuantizeLinear") || q.outputs.size() != 1 || q.inputs.size() != 3) return;
    const size_t di = only_consumer(q.outputs[0]);
    if (di == kNone || !is(g_.nodes[di], "DequantizeLinear")) return;
    Node& d = g_.nodes[di];
    if (d.inputs.size() != 3 || d.inputs[0] != q.outputs[0]) return;
    const Constant* qz = constant(q.inputs[2]);
    const Constant* dz = constant(d.inputs[2]);
    if (!qz || !dz || qz->elem != Elem::s8 || dz->elem != Elem::s8 || qz->tensor.numel() != 1 ||
        dz->tensor.numel() != 1 || zero_point_of(q) != zero_point_of(d))
      return;
    auto k = std::make_shared<Constant>();
    k->elem = Elem::u8;
    k->shape = qz->shape;
    k->tensor = Tensor(DType::u8, k->shape);
    static_cast<uint8_t*>(k->tensor.view().raw())[0] = static_cast<uint8_t>(zero_point_of(q) + 128);
    std::string name = q.inputs[2] + "_s8_2_u8";
    while (konst_.count(name) || producer_.count(name)) name += "_";
    g_.constants[name] = k;
    konst_[name] = k.get();
    elem_[name] = Elem::u8;
    for (Node* n : {&q, &d}) {
      const size_t ni = n == &q ? qi : di;
      drop_uses(ni);
      n->inputs[2] = name;
      add_uses(ni);
    }
    elem_[q.outputs[0]] = Elem::u8;
    note("QuantizeLinear '" + q.name + "' -> DequantizeLinear '" + d.name +
         "': s8 codes stored as u8 (zero point + 128)");
  }

  // The selectors' own test (IsClipMadeRedundantByQ) for a Relu or Clip
  // between a target and its Q: Relu when the zero point is the minimum;
  // Clip when its bounds, in codes (rint(bound / scale) + zp), cover the range.
  bool clip_redundant(const Node& a, const Node& q) const {
    float scale;
    int32_t zp, lo, hi;
    if (!q_scalar(q, scale, zp, lo, hi)) return false;
    if (is(a, "Relu")) return zp == lo;
    float mn, mx;
    if (!clip_bounds(a, mn, mx)) return false;
    const int64_t qmin = int64_t{to_int32_x86(std::rint(static_cast<double>(mn / scale)))} + zp;
    const int64_t qmax = int64_t{to_int32_x86(std::rint(static_cast<double>(mx / scale)))} + zp;
    return qmin <= lo && qmax >= hi;
  }

  // ---- the selector-action rules ----
  enum class Rule { none, conv, gemm, matmul, binary, unary, variadic, drop };

  Rule rule_of(const Node& n) const {
    if (!(n.domain.empty() || n.domain == "ai.onnx")) return Rule::none;
    const std::string& t = n.op_type;
    if (t == "Conv") return Rule::conv;
    // QGemm is ONNX Runtime's own operator (the profile table gives it to ORT
    // alone): under pytorch a Gemm group runs literally.
    if (t == "Gemm") return ort_only_ops_ ? Rule::gemm : Rule::none;
    if (t == "MatMul") return Rule::matmul;
    if (t == "Add" || t == "Mul") return Rule::binary;
    if (t == "AveragePool" || t == "GlobalAveragePool" || t == "Sigmoid" || t == "LeakyRelu")
      return Rule::unary;
    if (t == "Concat") return Rule::variadic;
    if (t == "MaxPool" || t == "Reshape" || t == "Flatten" || t == "Transpose" || t == "Squeeze" ||
        t == "Unsqueeze" || t == "Slice" || t == "Gather" || t == "Expand" || t == "Tile")
      return find_op("", t) ? Rule::drop : Rule::none;
    return Rule::none;
  }

  void select_and_fuse(size_t ti) {
    const Node& t = g_.nodes[ti];
    const Rule rule = rule_of(t);
    if (rule == Rule::none || t.outputs.size() != 1) return;
    // The DQ parents, input by input (kNone where the input is not a DQ's).
    std::vector<size_t> dq;
    size_t n_dq = 0, n_inputs = 0;
    for (const std::string& in : t.inputs) {
      dq.push_back(in.empty() ? kNone : live_producer(in, "DequantizeLinear"));
      n_inputs += !in.empty();
      n_dq += dq.back() != kNone;
    }
    // One Q consumes the target's only output, possibly through a Relu or
    // Clip that the Q makes redundant (dropped with the group).
    size_t qi = only_consumer(t.outputs[0]);
    size_t clip = kNone;
    if (qi != kNone && (is(g_.nodes[qi], "Relu") || is(g_.nodes[qi], "Clip")) &&
        g_.nodes[qi].outputs.size() == 1) {
      clip = qi;
      qi = only_consumer(g_.nodes[clip].outputs[0]);
      if (qi == kNone || !is(g_.nodes[qi], "QuantizeLinear") ||
          !clip_redundant(g_.nodes[clip], g_.nodes[qi]) || rule == Rule::drop)
        return;
    }
    if (qi == kNone || !is(g_.nodes[qi], "QuantizeLinear")) return;
    if (g_.nodes[qi].outputs.empty() || g_.nodes[qi].outputs[0].empty()) return;
    clip_ = clip;
    const Node& q = g_.nodes[qi];
    if (!per_tensor_constants(q)) return;
    const Elem y = q_output_elem(q);
    auto dq_elem = [&](size_t k) { return elem(g_.nodes[dq[k]].inputs[0]); };
    auto activation_ok = [&](size_t k) {
      return dq[k] != kNone && dq_elem(k) == y && per_tensor_constants(g_.nodes[dq[k]]);
    };
    // Integer convolutions and matrix products take s8 activations only where
    // ORT allows int8 QDQ (not x86; its Q -> DQ pairs became u8 above); the
    // other rules have no such condition.
    if (y != Elem::u8 && (rule == Rule::conv || rule == Rule::gemm || rule == Rule::matmul)) return;

    switch (rule) {
      case Rule::conv:
      case Rule::gemm:
      case Rule::matmul: {
        if (n_dq != n_inputs || n_inputs < 2 || !activation_ok(0) || dq[1] == kNone) return;
        const Node& w = g_.nodes[dq[1]];
        const Constant* wk = constant(w.inputs[0]);
        if (!wk || (wk->elem != Elem::s8 && wk->elem != Elem::u8) || !constants_given(w)) return;
        if (rule == Rule::matmul && n_inputs != 2) return;
        if (n_inputs == 3) {
          const Node& b = g_.nodes[dq[2]];
          const Constant* bk = constant(b.inputs[0]);
          if (!bk || bk->elem != Elem::s32) return;
          if (rule == Rule::gemm) {
            auto beta = t.attrs.find("beta");
            if (beta != t.attrs.end() && beta->second.f != 1.0f) return;
          }
        }
        return fuse_weighted(ti, rule, dq, qi);
      }
      case Rule::binary:
        if (n_inputs != 2 || n_dq != 2 || !activation_ok(0) || !activation_ok(1)) return;
        return fuse_generic(ti, dq, qi);
      case Rule::unary:
        if (n_inputs != 1 || n_dq != 1 || !activation_ok(0)) return;
        return fuse_generic(ti, dq, qi);
      case Rule::variadic:
        if (n_dq != n_inputs || n_inputs < 1) return;
        for (size_t k = 0; k < dq.size(); ++k)
          if (!activation_ok(k)) return;
        return fuse_generic(ti, dq, qi);
      case Rule::drop: {
        if (n_dq != 1 || dq[0] == kNone || dq_elem(0) != y) return;
        if (y != Elem::u8 && y != Elem::s8) return;
        const Node& d = g_.nodes[dq[0]];
        if (!same_quantization(d, q)) return;
        if (is(t, "MaxPool") && (maxpool_version(t) != 12 || !(scale_of(q) > 0))) return;
        return drop_qdq(ti, dq[0], qi);
      }
      case Rule::none:
        return;
    }
  }

  // Replaces target + Q by `fused` (whose output is Q's output).
  void replace(size_t ti, const std::vector<size_t>& dq, size_t qi, Node fused) {
    std::string what = g_.nodes[ti].op_type + " '" + g_.nodes[ti].name + "' -> " +
                       (fused.domain.empty() ? "" : fused.domain + ".") + fused.op_type;
    fused.outputs = {g_.nodes[qi].outputs[0]};
    kill(qi);
    if (clip_ != kNone) {
      what += " (" + g_.nodes[clip_].op_type + " '" + g_.nodes[clip_].name + "' made redundant)";
      kill(clip_);
    }
    drop_uses(ti);
    g_.nodes[ti] = std::move(fused);
    producer_[g_.nodes[ti].outputs[0]] = ti;
    add_uses(ti);
    for (size_t d : dq)
      if (d != kNone) touched_dq_.insert(d);
    note(what);
  }

  Node make(const Node& t, const char* op, const char* domain) const {
    Node n;
    n.name = t.name;
    n.op_type = op;
    n.domain = domain;
    n.opset = *domain ? 1 : t.opset;
    return n;
  }

  void fuse_weighted(size_t ti, Rule rule, const std::vector<size_t>& dq, size_t qi) {
    const Node& t = g_.nodes[ti];
    const Node& x = g_.nodes[dq[0]];
    const Node& w = g_.nodes[dq[1]];
    const Node& q = g_.nodes[qi];
    Node f = rule == Rule::conv   ? make(t, "QLinearConv", "")
             : rule == Rule::gemm ? make(t, "QGemm", "com.microsoft")
                                  : make(t, "QLinearMatMul", "");
    f.inputs = {x.inputs[0], x.inputs[1], zp_input(x), w.inputs[0], w.inputs[1], zp_input(w)};
    std::string converted;
    if (weights_to_u8(f.inputs[3], f.inputs[5])) converted = " (weights s8 -> u8)";
    const std::string bias = dq.size() > 2 && dq[2] != kNone ? g_.nodes[dq[2]].inputs[0] : "";
    if (rule == Rule::gemm) f.inputs.push_back(bias);
    f.inputs.push_back(q.inputs[1]);
    f.inputs.push_back(zp_input(q));
    if (rule == Rule::conv && !bias.empty()) f.inputs.push_back(bias);
    f.attrs = t.attrs;
    if (rule == Rule::gemm) f.attrs.erase("beta");
    replace(ti, dq, qi, std::move(f));
    if (!converted.empty() && log_) log_->lines.back() += converted;
  }

  // ORT on x86 (QDQS8ToU8Transformer, which runs because int8 QDQ is not
  // "allowed" there) stores constant s8 weights with a value outside
  // [-64, 64] as u8 codes w ^ 0x80 with zero points zp ^ 0x80 (+128), so
  // their products run in the u8 x u8 kernels, which sum exactly; 7-bit
  // weights stay s8 (a u8 x s8 pair sum cannot saturate then). Renames the
  // weight and zero-point inputs to converted constants; true if converted.
  bool weights_to_u8(std::string& w_name, std::string& zp_name) {
    const Constant* w = constant(w_name);
    if (!w || w->elem != Elem::s8) return false;
    const Constant* z = zp_name.empty() ? nullptr : constant(zp_name);
    if (z && z->elem != Elem::s8) return false;
    const std::vector<int8_t> wv = w->tensor.to_vector<int8_t>();
    if (std::none_of(wv.begin(), wv.end(), [](int8_t v) { return v < -64 || v > 64; }))
      return false;
    auto flip = [&](const Constant* src, const std::string& base) {
      auto k = std::make_shared<Constant>();
      k->elem = Elem::u8;
      k->shape = src ? src->shape : Shape{};
      k->tensor = Tensor(DType::u8, k->shape);
      auto* out = static_cast<uint8_t*>(k->tensor.view().raw());
      if (src) {
        const std::vector<int8_t> v = src->tensor.to_vector<int8_t>();
        for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<uint8_t>(v[i]) ^ 0x80u;
      } else {
        out[0] = 0x80;  // an absent zero point is 0: 128 in u8
      }
      std::string name = base + "_s8_2_u8";
      while (konst_.count(name) || producer_.count(name)) name += "_";
      g_.constants[name] = k;
      konst_[name] = k.get();
      elem_[name] = Elem::u8;
      return name;
    };
    zp_name = flip(z, zp_name.empty() ? w_name + "_zero_point" : zp_name);
    w_name = flip(w, w_name);
    return true;
  }

  void fuse_generic(size_t ti, const std::vector<size_t>& dq, size_t qi) {
    const Node& t = g_.nodes[ti];
    const Node& q = g_.nodes[qi];
    auto triple = [&](Node& f, size_t k) {
      const Node& d = g_.nodes[dq[k]];
      f.inputs.insert(f.inputs.end(), {d.inputs[0], d.inputs[1], zp_input(d)});
    };
    Node f;
    if (t.op_type == "Concat") {
      f = make(t, "QLinearConcat", "com.microsoft");
      f.inputs = {q.inputs[1], zp_input(q)};
      for (size_t k = 0; k < dq.size(); ++k) triple(f, k);
    } else {
      f = make(t, ("QLinear" + t.op_type).c_str(), "com.microsoft");
      f.op_type = "QLinear" + t.op_type;
      for (size_t k = 0; k < dq.size(); ++k) triple(f, k);
      f.inputs.insert(f.inputs.end(), {q.inputs[1], zp_input(q)});
    }
    f.attrs = t.attrs;
    if (t.op_type == "AveragePool") {
      // ONNX 19's dilations: QLinearAveragePool has none (only all-ones can fuse).
      auto d = f.attrs.find("dilations");
      if (d != f.attrs.end()) {
        if (std::any_of(d->second.ints.begin(), d->second.ints.end(),
                        [](int64_t v) { return v != 1; }))
          return;
        f.attrs.erase(d);
      }
    }
    if (!find_op(f.domain, f.op_type)) return;  // no planner yet (e.g. QLinearMul): run literally
    // com.microsoft operators that the profile table gives to ONNX Runtime
    // alone (src/ops/profile_support.cpp): under pytorch their groups run literally.
    const bool ort_only = f.op_type == "QLinearConcat" || f.op_type == "QLinearSigmoid" ||
                          f.op_type == "QLinearLeakyRelu" || f.op_type == "QGemm" ||
                          f.op_type == "QLinearMul";
    if (ort_only && !ort_only_ops_) return;
    // A zero point the Q or DQ leaves out is a trailing optional input of the
    // QLinear ops only for the output; an absent input zero point in the middle
    // stays an empty name (the planners read it as 0).
    while (!f.inputs.empty() && f.inputs.back().empty()) f.inputs.pop_back();
    replace(ti, dq, qi, std::move(f));
  }

  void drop_qdq(size_t ti, size_t di, size_t qi) {
    Node& t = g_.nodes[ti];
    const std::string out = g_.nodes[qi].outputs[0];
    kill(qi);
    drop_uses(ti);
    t.inputs[0] = g_.nodes[di].inputs[0];
    t.outputs[0] = out;
    producer_[out] = ti;
    add_uses(ti);
    touched_dq_.insert(di);
    note(t.op_type + " '" + t.name + "' runs on the codes (its DequantizeLinear and " +
         "QuantizeLinear dropped)");
  }
};

}  // namespace

void fuse_qdq(LoadedGraph& g, QdqFusionLog* log, bool ort_only_ops) {
  ort_level1_cleanups(g, log);
  Fuser(g, log, ort_only_ops).run();
}

}  // namespace npukit::onnx
