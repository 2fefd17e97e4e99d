// Planners of ConvTranspose (fp32, 2-D) and Resize (fp32, 4-D, on H and W).
// Output shapes and implicit pads follow ONNX Runtime 1.30's rules; the
// arithmetic is the core's (conv_transpose2d, resize2d).
#include <cmath>
#include <string>

#include "npukit/error.hpp"
#include "npukit/ops/conv_transpose.hpp"
#include "npukit/ops/resize.hpp"
#include "onnx/attributes.hpp"

namespace npukit::onnx {

namespace {

constexpr auto F = Elem::f32;

std::vector<int64_t> pair_attr(const PlanContext& c, const char* name, int64_t dflt) {
  std::vector<int64_t> v = attr_ints(c.node, name, {dflt, dflt});
  check(v.size() == 2, "ConvTranspose", name, shape_text(v), "2 values (H, W)");
  return v;
}

NodePlan plan_conv_transpose(const PlanContext& c) {
  const char* fn = "ConvTranspose";
  expect_attrs(c.node, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                        "output_shape", "pads", "strides"});
  const Operand& x = operand(c, 0, {F});
  const Operand& w = operand(c, 1, {F});
  expect_rank(c, 0, 4, 4);
  expect_rank(c, 1, 4, 4);
  ConvTransposeParams p;
  p.groups = attr_int(c.node, "group", 1);
  check_range(fn, "group", p.groups, 1, std::max<int64_t>(1, x.shape[1]));
  check(x.shape[1] % p.groups == 0, fn, "group", std::to_string(p.groups),
        "a divisor of the input channels " + std::to_string(x.shape[1]));
  check(w.shape[0] == x.shape[1], fn, "W", "shape " + shape_text(w.shape),
        "(C=" + std::to_string(x.shape[1]) + ", M/group, kH, kW)");
  if (has_attr(c.node, "kernel_shape")) {
    const auto k = attr_ints(c.node, "kernel_shape");
    check(k.size() == 2 && k[0] == w.shape[2] && k[1] == w.shape[3], fn, "kernel_shape",
          shape_text(k), "the weight's (" + shape_text({w.shape[2], w.shape[3]}) + ")");
  }
  const auto s = pair_attr(c, "strides", 1), d = pair_attr(c, "dilations", 1);
  const auto op = pair_attr(c, "output_padding", 0);
  for (int i = 0; i < 2; ++i) {
    check_range(fn, "strides", s[i], 1, 1 << 16);
    check_range(fn, "dilations", d[i], 1, 1 << 16);
    // ONNX allows up to max(stride, dilation) - 1; ONNX Runtime 1.30 also rejects an
    // output_padding that changes the input size its output implies: one below the stride.
    check_range(fn, "output_padding", op[i], 0, s[i] - 1);
  }
  const std::vector<int64_t> pads = attr_ints(c.node, "pads", {0, 0, 0, 0});
  check(pads.size() == 4, fn, "pads", shape_text(pads), "4 values (top, left, bottom, right)");
  for (int64_t v : pads) check_range(fn, "pads", v, 0, 1 << 20);
  const std::string ap = attr_string(c.node, "auto_pad", "NOTSET");
  check(ap == "NOTSET" || ap == "VALID" || ap == "SAME_UPPER" || ap == "SAME_LOWER", fn, "auto_pad",
        "'" + ap + "'", "NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  const std::vector<int64_t> os = attr_ints(c.node, "output_shape");
  // ONNX's shape inference (run by ONNX Runtime at load) takes the spatial sizes only.
  check(os.empty() || os.size() == 2, fn, "output_shape", shape_text(os), "2 values (H, W)");
  for (int64_t v : os) check_range(fn, "output_shape", v, 1, 1 << 24);
  ConvTransposeAxis a[2];
  for (int i = 0; i < 2; ++i) {
    const auto k = w.shape[static_cast<size_t>(2 + i)];
    a[i] = conv_transpose_axis(x.shape[static_cast<size_t>(2 + i)], s[i], k, d[i], op[i],
                               ap.c_str(), pads[i], pads[i + 2], os.empty() ? -1 : os[i]);
    check(a[i].out_size >= 1, fn, i == 0 ? "output height" : "output width",
          std::to_string(a[i].out_size), ">= 1 (pads larger than the full output)");
  }
  p.kernel_h = w.shape[2];
  p.kernel_w = w.shape[3];
  p.stride_h = s[0];
  p.stride_w = s[1];
  p.dilation_h = d[0];
  p.dilation_w = d[1];
  p.pad_top = a[0].pad_head;
  p.pad_left = a[1].pad_head;
  p.out_h = a[0].out_size;
  p.out_w = a[1].out_size;
  p.has_bias = present(c, 2);
  const int64_t M = w.shape[1] * p.groups;
  if (p.has_bias) {
    operand(c, 2, {F});
    check(c.in[2].shape == Shape{M}, fn, "B", "shape " + shape_text(c.in[2].shape),
          shape_text({M}));
  }
  const Shape y{x.shape[0], M, p.out_h, p.out_w};
  return {{make_operand(F, y)}, [p](const auto& in, const auto& out) {
            conv_transpose2d(in[0], in[1], p.has_bias ? in[2] : TensorView(), out[0], p);
          }};
}

template <class E>
E pick(const char* attr, const std::string& v,
       std::initializer_list<std::pair<const char*, E>> table, const char* allowed) {
  for (const auto& [name, e] : table)
    if (v == name) return e;
  fail("Resize", attr, "'" + v + "'", allowed);
}

std::vector<float> known_floats(const PlanContext& c, size_t i, const char* what) {
  const Constant& k = constant_input(c, i, what);
  check(k.elem == F, "Resize", what, elem_name(k.elem), "float");
  return k.tensor.to_vector<float>();
}

NodePlan plan_resize(const PlanContext& c) {
  const char* fn = "Resize";
  check(c.node.opset >= 11, fn, "opset", std::to_string(c.node.opset), "11 to 19");
  expect_attrs(c.node, {"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a",
                        "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy",
                        "mode", "nearest_mode"});
  const Operand& x = operand(c, 0, {F});
  expect_rank(c, 0, 4, 4);
  check(attr_int(c.node, "antialias", 0) == 0, fn, "antialias",
        std::to_string(attr_int(c.node, "antialias", 0)), "0 (antialiasing is not supported)");
  check(!has_attr(c.node, "axes"), fn, "axes", "given", "absent (all 4 axes)");
  const std::string kar = attr_string(c.node, "keep_aspect_ratio_policy", "stretch");
  check(kar == "stretch", fn, "keep_aspect_ratio_policy", "'" + kar + "'", "stretch");
  check(attr_int(c.node, "exclude_outside", 0) == 0, fn, "exclude_outside",
        std::to_string(attr_int(c.node, "exclude_outside", 0)), "0 (cubic is not supported)");
  ResizeParams p;
  p.mode = pick<ResizeMode>("mode", attr_string(c.node, "mode", "nearest"),
                            {{"nearest", ResizeMode::nearest}, {"linear", ResizeMode::linear}},
                            "nearest or linear (cubic is not supported)");
  p.coord = pick<ResizeCoord>(
      "coordinate_transformation_mode",
      attr_string(c.node, "coordinate_transformation_mode", "half_pixel"),
      {{"half_pixel", ResizeCoord::half_pixel},
       {"pytorch_half_pixel", ResizeCoord::pytorch_half_pixel},
       {"align_corners", ResizeCoord::align_corners},
       {"asymmetric", ResizeCoord::asymmetric},
       {"tf_half_pixel_for_nn", ResizeCoord::tf_half_pixel_for_nn}},
      "half_pixel, pytorch_half_pixel, align_corners, asymmetric or tf_half_pixel_for_nn "
      "(tf_crop_and_resize and half_pixel_symmetric are not supported)");
  p.nearest =
      pick<ResizeNearest>("nearest_mode", attr_string(c.node, "nearest_mode", "round_prefer_floor"),
                          {{"round_prefer_floor", ResizeNearest::round_prefer_floor},
                           {"round_prefer_ceil", ResizeNearest::round_prefer_ceil},
                           {"floor", ResizeNearest::floor},
                           {"ceil", ResizeNearest::ceil}},
                          "round_prefer_floor, round_prefer_ceil, floor or ceil");
  // Inputs: X, roi (only for tf_crop_and_resize: ignored), scales, sizes; one of the last two.
  std::vector<float> scales;
  if (present(c, 2)) scales = known_floats(c, 2, "scales");
  std::vector<int64_t> sizes;
  if (present(c, 3)) sizes = constant_ints(c, 3, "sizes");
  check(scales.empty() != sizes.empty(), fn, "scales and sizes",
        scales.empty() ? "neither" : "both", "exactly one of them (non-empty)");
  Shape y = x.shape;
  float sc[4];
  if (!scales.empty()) {
    check(scales.size() == 4, fn, "scales", std::to_string(scales.size()) + " values", "4");
    for (size_t i = 0; i < 4; ++i) {
      check(scales[i] > 0 && std::isfinite(scales[i]), fn, "scales", std::to_string(scales[i]),
            "finite values > 0");
      sc[i] = scales[i];
      y[i] = static_cast<int64_t>(scales[i] * static_cast<float>(x.shape[i]));
    }
  } else {
    check(sizes.size() == 4, fn, "sizes", shape_text(sizes), "4 values");
    for (size_t i = 0; i < 4; ++i) {
      check_range(fn, "sizes", sizes[i], 0, 1 << 24);
      y[i] = sizes[i];
      sc[i] = x.shape[i] ? static_cast<float>(sizes[i]) / static_cast<float>(x.shape[i]) : 1.0f;
    }
  }
  check(y[0] == x.shape[0] && y[1] == x.shape[1], fn, "scales/sizes",
        "output " + shape_text(y) + " from input " + shape_text(x.shape),
        "N and C unchanged (resizing H and W only)");
  p.scale_h = sc[2];
  p.scale_w = sc[3];
  return {{make_operand(F, y)},
          [p](const auto& in, const auto& out) { resize2d(in[0], out[0], p); }};
}

}  // namespace

const std::vector<OpEntry>& deconv_ops() {
  static const std::vector<OpEntry> ops = {
      {"", "ConvTranspose", 2, 3, 1, plan_conv_transpose},
      {"", "Resize", 1, 4, 1, plan_resize},
  };
  return ops;
}

}  // namespace npukit::onnx
