#include "onnx/ort_nchwc.hpp"

#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

bool is(const Node& n, const char* op) {
  return n.domain.empty() && n.op_type == op;
}

// A Conv, or the Conv + Relu/Clip that npukit's (and ORT's) activation fusion
// made of it before this rewrite: the same NCHWc candidate.
bool is_conv(const Node& n) {
  return is(n, "Conv") || (n.domain == "com.microsoft" && n.op_type == "FusedConv");
}

bool f32_4d(const Operand& o) {
  return o.present && o.elem == Elem::f32 && o.shape.size() == 4;
}

int64_t channels(const Operand& o) {
  return o.shape.size() >= 2 ? o.shape[1] : 0;
}

// TransformConv's conditions: constant 4-D float weights (and bias), and
// channel counts that fill the blocks (a depthwise or a narrow first layer
// has its own filter layouts).
bool conv_rewritten(const Node& n, const std::vector<Operand>& in, int64_t block) {
  if (in.size() < 2 || !f32_4d(in[0]) || !in[1].value || in[1].shape.size() != 4) return false;
  if (in.size() >= 3 && in[2].present && !in[2].value) return false;
  const int64_t out_c = in[1].shape[0], in_c = in[1].shape[1];
  const int64_t group = attr_int(n, "group", 1);
  if (group > 1) {
    if (out_c % block != 0) return false;
    if (in_c == 1 && out_c == group) return true;  // depthwise
    return in_c % block == 0 && out_c % group == 0 && (out_c / group) % block == 0;
  }
  return in_c < block || in_c % block == 0;
}

}  // namespace

OrtNchwcTracker::OrtNchwcTracker(const std::vector<Node>& nodes,
                                 const std::vector<std::string>& graph_outputs, int64_t block)
    : graph_outputs_(graph_outputs.begin(), graph_outputs.end()), block_(block) {
  for (const Node& n : nodes)
    for (const std::string& v : n.inputs)
      if (!v.empty()) ++uses_[v];
}

bool OrtNchwcTracker::nchwc(const std::string& value) const {
  const auto it = format_.find(value);
  return it != format_.end() && it->second == Format::nchwc;
}

bool OrtNchwcTracker::single_use(const std::string& value) const {
  const auto it = uses_.find(value);
  return it != uses_.end() && it->second == 1 && !graph_outputs_.count(value);
}

bool OrtNchwcTracker::global_pool_rewritten(const Node& n, const std::vector<Operand>& in) const {
  if (block_ <= 0 || n.inputs.empty() || in.empty() || !f32_4d(in[0])) return false;
  if (channels(in[0]) % block_ != 0) return false;
  const auto it = format_.find(n.inputs[0]);
  return it == format_.end() || it->second == Format::nchwc;
}

OrtNchwcTracker::Format OrtNchwcTracker::format_after(const Node& n,
                                                      const std::vector<Operand>& in) const {
  if (block_ <= 0 || in.empty() || n.inputs.empty()) return Format::plain;
  const std::string& x = n.inputs[0];
  if (is_conv(n)) return conv_rewritten(n, in, block_) ? Format::nchwc : Format::plain;
  if (is(n, "MaxPool") || is(n, "AveragePool")) {
    if (!f32_4d(in[0]) || channels(in[0]) % block_ != 0) return Format::plain;
    if (is(n, "MaxPool") && n.outputs.size() > 1 && !n.outputs[1].empty()) return Format::plain;
    // Measured (tests/python/test_ort_fp32_pool.py): ceil_mode averages that
    // count the padding keep ONNX Runtime's own loop.
    const bool kept = is(n, "AveragePool") && attr_int(n, "ceil_mode", 0) != 0 &&
                      attr_int(n, "count_include_pad", 0) != 0;
    return kept ? Format::plain : Format::nchwc;
  }
  if (is(n, "GlobalAveragePool") || is(n, "GlobalMaxPool"))
    return global_pool_rewritten(n, in) ? Format::nchwc : Format::plain;
  // Removed by ORT's level-1 optimizations before the rewrite: the format passes.
  if (is(n, "Identity") || is(n, "Dropout")) {
    const auto it = format_.find(x);
    return it == format_.end() ? Format::none : it->second;
  }
  if (is(n, "BatchNormalization") || is(n, "Relu") || is(n, "Sigmoid") || is(n, "Tanh"))
    return nchwc(x) ? Format::nchwc : Format::plain;
  // Fused into the convolution before the rewrite (ConvActivationFusion).
  if (is(n, "Clip") || is(n, "LeakyRelu") || is(n, "HardSigmoid"))
    return nchwc(x) && fusable_conv_.count(x) ? Format::nchwc : Format::plain;
  const bool add = is(n, "Add") || is(n, "Sum"), mul = is(n, "Mul");
  if (add || mul || is(n, "Concat")) {
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k].empty() || !nchwc(n.inputs[k]) || !f32_4d(in[k])) return Format::plain;
    for (size_t k = 1; k < in.size(); ++k) {
      if (add && channels(in[k]) != channels(in[0])) return Format::plain;
      if (mul && in[k].shape != in[0].shape) return Format::plain;  // no reshape path for Mul
    }
    if (is(n, "Concat")) {
      if (attr_int(n, "axis", 0) != 1) return Format::plain;
      for (const Operand& o : in)
        if (channels(o) % block_ != 0) return Format::plain;
    }
    return Format::nchwc;
  }
  return Format::plain;
}

void OrtNchwcTracker::record(const Node& n, const std::vector<Operand>& in) {
  const Format f = format_after(n, in);
  for (const std::string& o : n.outputs)
    if (!o.empty() && f != Format::none) format_[o] = f;
  if (is(n, "Identity") || is(n, "Dropout")) {  // a removed node: fusability passes too
    if (fusable_conv_.count(n.inputs[0]) && !n.outputs.empty()) fusable_conv_.insert(n.outputs[0]);
    return;
  }
  if (f != Format::nchwc || n.outputs.empty() || n.outputs[0].empty()) return;
  const std::string& y = n.outputs[0];
  // BatchNormalization after a single-use convolution folds into it.
  const bool conv_like =
      is_conv(n) || (is(n, "BatchNormalization") && fusable_conv_.count(n.inputs[0]));
  if (conv_like && single_use(y)) fusable_conv_.insert(y);
}

}  // namespace npukit::onnx
