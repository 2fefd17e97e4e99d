// The int8 layout pass (int8_layout.hpp): candidates, then QLinearAdd nodes
// that cannot be all channels-last drop their operands until nothing changes.
#include "onnx/int8_layout.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "npukit/error.hpp"
#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

size_t at(const std::vector<size_t>& ids, size_t i) {
  return i < ids.size() ? ids[i] : SIZE_MAX;
}

bool is_op(const Node& n, const char* domain, const char* op) {
  return n.domain == domain && n.op_type == op;
}
bool is_qconv(const Node& n) {
  return is_op(n, "", "QLinearConv");
}
bool is_qadd(const Node& n) {
  return is_op(n, "com.microsoft", "QLinearAdd");
}
// An 8-bit MaxPool (resnet's stem): the integer maximum does not depend on
// the layout, and pool2d's x8 kernels take any strides.
bool is_maxpool(const Node& n) {
  return is_op(n, "", "MaxPool") && (n.outputs.size() < 2 || n.outputs[1].empty());
}
bool is_nchw_global_pool(const Node& n) {
  return is_op(n, "com.microsoft", "QLinearGlobalAveragePool") &&
         attr_int(n, "channels_last", 0) == 0;
}

bool is_depthwise(const Operand& x, const Operand& w, int64_t groups) {
  return groups == x.shape[1] && w.shape[0] == groups && w.shape[1] == 1;
}

// A depthwise QLinearConv: its channels-last kernels want x and y channels-last.
bool depthwise_step(const LayoutStep& s, const std::vector<Operand>& types) {
  const size_t xi = at(*s.in, 0), wi = at(*s.in, 3);
  if (!is_qconv(*s.node) || xi == SIZE_MAX || wi == SIZE_MAX) return false;
  const Operand &x = types[xi], &w = types[wi];
  return x.shape.size() == 4 && w.shape.size() == 4 &&
         is_depthwise(x, w, attr_int(*s.node, "group", 1));
}

// Whether a channels-last kernel takes this QLinearConv (qconv_kernels's
// x8-qconv-gemm-nhwc / x8-qconv-dw-nhwc declines, read from the plan).
bool channels_last_conv(const LayoutStep& s, const std::vector<Operand>& types) {
  const Node& n = *s.node;
  const size_t xi = at(*s.in, 0), wi = at(*s.in, 3), zi = at(*s.in, 5);
  if (xi == SIZE_MAX || wi == SIZE_MAX) return false;
  const Operand &x = types[xi], &w = types[wi];
  if (x.shape.size() != 4 || w.shape.size() != 4) return false;
  const int64_t groups = attr_int(n, "group", 1);
  if (is_depthwise(x, w, groups)) return true;
  if (groups != 1) return false;
  const bool w_u8 = w.elem == Elem::u8;
  // MLAS's int16 pairs: x8-qconv-pairs-gemm-nhwc-avx2 takes an even channel
  // count (an odd one pairs products across taps: the NCHW GEMM's im2col
  // order); below 16 channels the NCHW GEMM is faster (the bundled model's
  // 8 -> 16 layer at batch 100: 0.41 against 0.85 ms at the AVX2 cap); from
  // AVX-512 the NCHW x8-qconv-pairs-gemm-nchw-avx512 is (resnet18_int8 at the
  // avx512 cap: 9.6 ms NCHW against 14.5 channels-last).
  if (x.elem == Elem::u8 && !w_u8 &&
      profile_accumulation(s.profile) == IntAccumulation::mlas_u8s8_int16_pairs &&
      (x.shape[1] % 2 != 0 || x.shape[1] < 16 || kernel_allowed(Isa::avx512, false)))
    return false;
  // Below AVX-512 VNNI, 5-15 input channels run faster on the NCHW GEMM, and
  // so does the 8-bit MaxPool before them (the bundled model at the AVX2 cap:
  // its 8 -> 16 layer 1.08 -> 0.54 ms, the MaxPool 0.60 -> 0.02).
  if (x.shape[1] > 4 && x.shape[1] < 16 && !kernel_allowed(Isa::avx512_vnni, false)) return false;
  const int32_t symmetric = w_u8 ? 128 : 0;
  if (zi == SIZE_MAX) return !w_u8;  // absent: 0
  const Constant* z = types[zi].value;
  if (z == nullptr) return false;  // read at run time
  if (z->elem == Elem::u8) {
    for (uint8_t v : z->tensor.to_vector<uint8_t>())
      if (v != symmetric) return false;
  } else if (z->elem == Elem::s8) {
    for (int8_t v : z->tensor.to_vector<int8_t>())
      if (v != symmetric) return false;
  } else {
    return false;
  }
  return true;
}

bool enabled() {
  if (!layout_switch_on("NPUKIT_INT8_LAYOUT")) return false;
  // The channels-last convolutions that make it pay run from AVX2.
  return kernel_allowed(Isa::avx2, false);
}

}  // namespace

bool layout_switch_on(const char* variable) {
  const char* env = std::getenv(variable);
  const std::string mode = env && *env ? env : "channels_last";
  check(mode == "channels_last" || mode == "nchw", "npukit::onnx::Model::run", variable, mode,
        "channels_last or nchw");
  return mode == "channels_last";
}

std::vector<bool> channels_last_values(const std::vector<LayoutStep>& steps,
                                       const std::vector<Operand>& types,
                                       const std::vector<size_t>& output_ids) {
  std::vector<bool> cl(types.size(), false);
  if (!enabled()) return cl;
  for (const LayoutStep& s : steps) {
    if (!is_qadd(*s.node) && !is_maxpool(*s.node) &&
        !(is_qconv(*s.node) && channels_last_conv(s, types)))
      continue;
    const size_t v = at(*s.out, 0);
    if (v == SIZE_MAX) continue;
    const Operand& t = types[v];
    cl[v] =
        t.present && !t.value && t.shape.size() == 4 && (t.elem == Elem::u8 || t.elem == Elem::s8);
  }
  for (size_t v : output_ids) cl[v] = false;
  // Every reader must take channels-last input.
  for (const LayoutStep& s : steps)
    for (size_t i = 0; i < s.in->size(); ++i) {
      const size_t v = (*s.in)[i];
      if (v == SIZE_MAX || !cl[v]) continue;
      const Node& n = *s.node;
      const bool ok = (is_qconv(n) && i == 0 && channels_last_conv(s, types)) ||
                      (is_qadd(n) && (i == 0 || i == 3)) || (is_nchw_global_pool(n) && i == 0) ||
                      (is_maxpool(n) && i == 0);
      if (!ok) cl[v] = false;
    }
  // A QLinearAdd's fast kernel wants its three operands in one layout, and no
  // broadcasting; a depthwise conv's wants x and y channels-last (its x can
  // be NCHW when the producer is not a candidate: an odd-channel first layer
  // under MLAS's int16 pairs).
  for (bool changed = true; changed;) {
    changed = false;
    for (const LayoutStep& s : steps) {
      if (depthwise_step(s, types)) {
        const size_t x = at(*s.in, 0), y = at(*s.out, 0);
        if (x != SIZE_MAX && y != SIZE_MAX && cl[y] && !cl[x]) cl[y] = false, changed = true;
        continue;
      }
      // An 8-bit MaxPool between layouts takes the generic kernel (the
      // bundled model's 8 channels at the AVX2 cap: 0.6 ms against 0.02 NCHW).
      if (is_maxpool(*s.node)) {
        const size_t x = at(*s.in, 0), y = at(*s.out, 0);
        if (x != SIZE_MAX && y != SIZE_MAX && cl[x] != cl[y]) cl[x] = cl[y] = false, changed = true;
        continue;
      }
      if (!is_qadd(*s.node)) continue;
      const size_t a = at(*s.in, 0), b = at(*s.in, 3), c = at(*s.out, 0);
      if (c == SIZE_MAX || a == SIZE_MAX || b == SIZE_MAX) continue;
      const bool all = cl[a] && cl[b] && cl[c] && types[a].shape == types[b].shape;
      if (all || !(cl[a] || cl[b] || cl[c])) continue;
      cl[a] = cl[b] = cl[c] = false;
      changed = true;
    }
  }
  return cl;
}

TensorView channels_last_view(void* data, DType dtype, const Shape& nchw) {
  const int64_t C = nchw[1], H = nchw[2], W = nchw[3];
  return TensorView(data, dtype, nchw, {H * W * C, 1, W * C, C});
}

}  // namespace npukit::onnx
