// Sliding-window geometry shared by pooling and convolution, for every face.
//
// One spatial axis of size `in` is first expanded by zero insertion (seed 002:
// `ins` zeros between neighbours, none after the last), then padded by
// `pad_begin`/`pad_end`; a kernel of `kernel` taps spaced `dilation` apart
// slides with `stride`. With ceil_mode a last partial window is kept unless it
// would start inside the end padding (ONNX / PyTorch rule).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit {

struct Window2d {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t ins_h = 0, ins_w = 0;  // zeros inserted between input rows / columns
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool ceil_mode = false;
  // ONNX Runtime's pooling count (pool_attributes.h): out = trunc(num / stride) + 1 with
  // num = padded size - effective kernel computed in C integers, so a num in (-stride, 0)
  // still gives one window (hanging past the padded end), and pads may be negative (its
  // SAME pads; a negative begin pad starts the windows inside the input, a negative end
  // pad only shortens the count: taps read the input wherever they land in it).
  bool truncated_count = false;
};

struct AxisWindow {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, ins = 0, pad_begin = 0, pad_end = 0;
  bool ceil_mode = false;
  bool truncated_count = false;

  int64_t inserted_size() const { return (in - 1) * (ins + 1) + 1; }
  int64_t effective_kernel() const { return (kernel - 1) * dilation + 1; }
};

AxisWindow axis_h(const Window2d& w, int64_t in_h);
AxisWindow axis_w(const Window2d& w, int64_t in_w);

// Validates every field (sizes >= 1, ins/pads >= 0, kernel fits the padded
// input) and returns the number of outputs; errors name `function` and the
// Window2d field (`axis` is "h" or "w").
int64_t axis_output_size(const AxisWindow& a, const char* function, char axis);

// ONNX auto_pad: NOTSET keeps the given pads, VALID means no padding,
// SAME_UPPER / SAME_LOWER pad so that out = ceil(in / stride), the odd extra
// pad going to the end (UPPER) or the beginning (LOWER). Fills the pads of `w`
// for an input of in_h x in_w.
enum class AutoPad : uint8_t { notset, valid, same_upper, same_lower };
AutoPad auto_pad_from_name(const std::string& name, const char* function);
void resolve_auto_pad(Window2d& w, AutoPad mode, int64_t in_h, int64_t in_w);

// How a pooling face turns ONNX attributes into a window.
enum class PoolGeometry : uint8_t {
  onnx,         // the ONNX formulas (resolve_auto_pad above); PyTorch's too
  onnxruntime,  // ONNX Runtime 1.30's pool_attributes.h: SAME total pad from the
                // *undilated* kernel, (ceil(in/s) - 1)*s + k - in, which may be negative
                // (stride > kernel); begin = total/2 (UPPER) or (total+1)/2 (LOWER) in C
                // division; truncated_count set for every auto_pad (NOTSET included)
};
// Resolves auto_pad under `g` (onnx: exactly resolve_auto_pad).
void resolve_pool_auto_pad(Window2d& w, AutoPad mode, int64_t in_h, int64_t in_w, PoolGeometry g);

// ONNX Runtime's pool rule "Pad should be smaller than kernel": every explicit
// pad below the kernel size of its axis (kernel sizes >= 1), else npukit::Error
// naming `function` and the pad. Used by the faces that take ONNX pool attributes.
void check_pool_pads(const char* function, const Window2d& w);

// (N, C, H, W) -> (N, C, OH, OW) for a window sliding over x: checks rank,
// N, C and every window field, naming `function` in errors. Shared by every
// pooling face.
std::vector<int64_t> window_output_shape(const std::vector<int64_t>& x, const Window2d& w,
                                         const char* function);

// Where each tap of each window reads from.
enum class Tap : uint8_t {
  input,          // a real input element
  inserted_zero,  // a zero put between elements by ins_h / ins_w
  padding,        // inside pad_begin / pad_end
  outside,        // past the end padding (only a ceil_mode window can reach it)
};

// The kind of a 2-D tap from its row and column kinds: the enum is ordered so
// that the "more outside" kind wins.
inline Tap combine(Tap row, Tap col) {
  return row > col ? row : col;
}

struct AxisTaps {
  int64_t out = 0, kernel = 0;
  std::vector<Tap> kind;       // [out * kernel]
  std::vector<int64_t> index;  // source element when kind == Tap::input, else -1

  Tap kind_at(int64_t o, int64_t k) const { return kind[static_cast<size_t>(o * kernel + k)]; }
  int64_t index_at(int64_t o, int64_t k) const {
    return index[static_cast<size_t>(o * kernel + k)];
  }
};

// Assumes a validated AxisWindow.
AxisTaps axis_taps(const AxisWindow& a, int64_t out);

}  // namespace npukit
