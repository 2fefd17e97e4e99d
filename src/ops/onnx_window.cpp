#include "npukit/ops/onnx_window.hpp"

#include "npukit/error.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

namespace {

void pair_of(const char* fn, const char* name, const std::optional<std::vector<int64_t>>& v,
             int64_t fallback, int64_t& a, int64_t& b) {
  if (!v) {
    a = b = fallback;
    return;
  }
  check(v->size() == 2, fn, name, shape_text(*v), "2 values for a 2-D window");
  a = (*v)[0];
  b = (*v)[1];
}

}  // namespace

Window2d onnx_window_2d(const char* fn, const OnnxWindowAttributes& a, int64_t in_h, int64_t in_w,
                        WindowUse use, Profile profile, const std::vector<int64_t>& weight_kernel) {
  Window2d w;
  if (use == WindowUse::conv) {
    check(weight_kernel.size() == 2, fn, "weight kernel", shape_text(weight_kernel),
          "the weight's (kh, kw)");
    w.kernel_h = weight_kernel[0];
    w.kernel_w = weight_kernel[1];
    if (a.kernel_shape)
      check(*a.kernel_shape == weight_kernel, fn, "kernel_shape", shape_text(*a.kernel_shape),
            "the weight's kernel size " + shape_text(weight_kernel));
  } else {
    check(a.kernel_shape.has_value(), fn, "kernel_shape", "absent", "2 values (required)");
    pair_of(fn, "kernel_shape", a.kernel_shape, 1, w.kernel_h, w.kernel_w);
  }
  pair_of(fn, "strides", a.strides, 1, w.stride_h, w.stride_w);
  pair_of(fn, "dilations", a.dilations, 1, w.dilation_h, w.dilation_w);
  if (a.pads) {
    check(a.pads->size() == 4, fn, "pads", shape_text(*a.pads),
          "4 values [top, left, bottom, right]");
    w.pad_top = (*a.pads)[0];
    w.pad_left = (*a.pads)[1];
    w.pad_bottom = (*a.pads)[2];
    w.pad_right = (*a.pads)[3];
  }
  check_range(fn, "ceil_mode", a.ceil_mode, 0, 1);
  w.ceil_mode = a.ceil_mode != 0;
  const AutoPad ap = auto_pad_from_name(a.auto_pad, fn);
  check(ap == AutoPad::notset || !a.pads, fn, "pads", a.pads ? shape_text(*a.pads) : "absent",
        "no pads when auto_pad is " + a.auto_pad);
  if (use == WindowUse::pool) {
    // ONNX Runtime refuses pool pads >= kernel ("Pad should be smaller than
    // kernel"): such windows could lie entirely in the padding.
    check_pool_pads(fn, w);
    resolve_pool_auto_pad(w, ap, in_h, in_w, pool_geometry_for(profile));
  } else {
    resolve_auto_pad(w, ap, in_h, in_w);
  }
  return w;
}

bool onnx_count_include_pad(const char* fn, int64_t value) {
  check_range(fn, "count_include_pad", value, 0, 1);
  return value != 0;
}

}  // namespace npukit
