// The fp32 layout pass (fp32_layout.hpp): candidates from their writers,
// dropped where a reader cannot take them, then FusedConv nodes whose Z and
// output disagree drop both until nothing changes.
#include "onnx/fp32_layout.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "npukit/kernels.hpp"
#include "npukit/ops/conv2d.hpp"
#include "onnx/attributes.hpp"
#include "ops/cpu/conv_nchw.hpp"
#include "ops/cpu/dwconv.hpp"

namespace npukit::onnx {

namespace {

size_t at(const std::vector<size_t>& ids, size_t i) {
  return i < ids.size() ? ids[i] : SIZE_MAX;
}

bool is_op(const Node& n, const char* domain, const char* op) {
  return n.domain == domain && n.op_type == op;
}
bool is_fused_conv(const Node& n) {
  return is_op(n, "com.microsoft", "FusedConv");
}
bool is_maxpool(const Node& n) {
  return is_op(n, "", "MaxPool") && (n.outputs.size() < 2 || n.outputs[1].empty());
}
bool is_global_pool(const Node& n) {
  return is_op(n, "", "GlobalAveragePool") || is_op(n, "", "GlobalMaxPool");
}

bool is_f32_activation(const Operand& t) {
  return t.present && !t.value && t.elem == Elem::f32 && t.shape.size() == 4;
}

// Whether conv2d runs this Conv / FusedConv fast on channels-last operands.
bool channels_last_conv(const LayoutStep& s, const std::vector<Operand>& types) {
  const Node& n = *s.node;
  if (!is_op(n, "", "Conv") && !is_fused_conv(n)) return false;
  const size_t xi = at(*s.in, 0), wi = at(*s.in, 1);
  if (xi == SIZE_MAX || wi == SIZE_MAX) return false;
  const Operand &x = types[xi], &w = types[wi];
  if (x.elem != Elem::f32 || x.shape.size() != 4 || w.shape.size() != 4 || w.value == nullptr)
    return false;
  Conv2dParams p;
  p.groups = attr_int(n, "group", 1);
  apply_profile(p, s.profile);
  return cpu::conv_ocl_channels_last(w.shape, p);
}

// Whether the depthwise family runs this depthwise Conv / FusedConv (no Z)
// fast on channels-last operands.
bool channels_last_dwconv(const LayoutStep& s, const std::vector<Operand>& types) {
  const Node& n = *s.node;
  if (!is_op(n, "", "Conv") && !is_fused_conv(n)) return false;
  const size_t xi = at(*s.in, 0), wi = at(*s.in, 1), yi = at(*s.out, 0);
  if (xi == SIZE_MAX || wi == SIZE_MAX || yi == SIZE_MAX || at(*s.in, 3) != SIZE_MAX) return false;
  const Operand &x = types[xi], &w = types[wi];
  if (x.elem != Elem::f32 || w.value == nullptr) return false;
  Conv2dParams p;
  p.groups = attr_int(n, "group", 1);
  apply_profile(p, s.profile);
  return cpu::dwconv_channels_last(x.shape, w.shape, types[yi].shape, p);
}

bool enabled() {
  if (!layout_switch_on("NPUKIT_FP32_LAYOUT")) return false;
  // The channels-last convolution that makes it pay is AVX-512's.
  return kernel_allowed(Isa::avx512, false);
}

// Whether input i of step s may be channels-last.
bool reads_channels_last(const LayoutStep& s, size_t i, const std::vector<Operand>& types) {
  const Node& n = *s.node;
  if (i == 0 && (is_maxpool(n) || is_global_pool(n))) return true;
  if (i == 3 && is_fused_conv(n)) return true;  // Z, checked against the output below
  return i == 0 && (channels_last_conv(s, types) || channels_last_dwconv(s, types));
}

}  // namespace

std::vector<bool> channels_last_f32_values(const std::vector<LayoutStep>& steps,
                                           const std::vector<Operand>& types,
                                           const std::vector<size_t>& output_ids) {
  std::vector<bool> cl(types.size(), false);
  if (!enabled()) return cl;
  for (const LayoutStep& s : steps) {
    if (!is_maxpool(*s.node) && !channels_last_conv(s, types) && !channels_last_dwconv(s, types))
      continue;
    const size_t v = at(*s.out, 0);
    if (v != SIZE_MAX) cl[v] = is_f32_activation(types[v]);
  }
  for (size_t v : output_ids) cl[v] = false;
  for (const LayoutStep& s : steps)
    for (size_t i = 0; i < s.in->size(); ++i) {
      const size_t v = (*s.in)[i];
      if (v != SIZE_MAX && cl[v] && !reads_channels_last(s, i, types)) cl[v] = false;
    }
  // y starts as a copy of Z: one layout for both, or the copy transposes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const LayoutStep& s : steps) {
      if (!is_fused_conv(*s.node)) continue;
      const size_t z = at(*s.in, 3), y = at(*s.out, 0);
      if (z == SIZE_MAX || y == SIZE_MAX || cl[z] == cl[y]) continue;
      cl[z] = cl[y] = false;
      changed = true;
    }
  }
  return cl;
}

}  // namespace npukit::onnx
