// The one translation of ONNX's 2-D window attributes (kernel_shape, strides,
// pads, dilations, auto_pad, ceil_mode, count_include_pad) into a Window2d,
// used by every face that takes them: the ONNX runner, the Python operators,
// `npukit compare` and the GHP compiler. Pools resolve auto_pad with their
// profile's pooling geometry (pool_geometry_for) and follow ONNX Runtime's
// "pad should be smaller than kernel"; convolutions use ONNX's formulas.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npukit/profile.hpp"
#include "npukit/window.hpp"

namespace npukit {

// The attributes as a node carries them: absent ones are nullopt (ONNX defaults:
// strides and dilations 1, pads 0, auto_pad NOTSET, ceil_mode 0).
struct OnnxWindowAttributes {
  std::optional<std::vector<int64_t>> kernel_shape, strides, pads, dilations;
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
};

enum class WindowUse : uint8_t {
  pool,  // kernel_shape required; pads below the kernel; the profile's pooling geometry
  conv,  // the kernel comes from the weight (kernel_shape, if given, must match it)
};

// Checks every attribute (list lengths: 2, pads 4 as [top, left, bottom,
// right]; ceil_mode 0 or 1; no pads together with auto_pad other than NOTSET;
// pools: pads below the kernel) and resolves auto_pad for an in_h x in_w
// input. `weight_kernel` is the weight's (kh, kw) for WindowUse::conv. Errors
// name `function` and the attribute.
Window2d onnx_window_2d(const char* function, const OnnxWindowAttributes& a, int64_t in_h,
                        int64_t in_w, WindowUse use, Profile profile = Profile::onnxruntime,
                        const std::vector<int64_t>& weight_kernel = {});

// count_include_pad: 0 or 1, else npukit::Error naming `function`.
bool onnx_count_include_pad(const char* function, int64_t value);

}  // namespace npukit
