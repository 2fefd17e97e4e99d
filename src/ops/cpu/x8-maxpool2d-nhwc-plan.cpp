// When the NHWC register kernels apply (x8-maxpool2d-nhwc.hpp).
#include "x8-maxpool2d-nhwc.hpp"

namespace npukit::cpu {

namespace {

// Every output along the axis has a tap on the input (taps o*stride -
// pad_begin + [0, kernel), dilation 1).
bool every_window_reads_input(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                              int64_t pad_begin) {
  return -pad_begin + kernel - 1 >= 0 && (out - 1) * stride - pad_begin <= in - 1;
}

}  // namespace

const char* x8_nhwc_declines(const Pool2dProblem& pr, int64_t min_channels) {
  if (pr.x.dtype() != DType::s8 && pr.x.dtype() != DType::u8) return "not s8/u8";
  if (pr.p.mode != PoolMode::max) return "not max pooling";
  const Window2d& w = pr.p.window;
  if (w.dilation_h != 1 || w.dilation_w != 1 || w.ins_h != 0 || w.ins_w != 0)
    return "dilation or zero insertion";
  if (pr.x.stride(1) != 1 || pr.y.stride(1) != 1) return "x or y not unit-stride along C";
  if (pr.x.dim(1) < min_channels)
    return min_channels == 16 ? "fewer than 16 channels (lanes mostly idle)"
                              : "fewer than 8 channels (lanes mostly idle)";
  if (!every_window_reads_input(pr.x.dim(2), pr.y.dim(2), w.kernel_h, w.stride_h, w.pad_top) ||
      !every_window_reads_input(pr.x.dim(3), pr.y.dim(3), w.kernel_w, w.stride_w, w.pad_left))
    return "a window without input taps";
  return nullptr;
}

}  // namespace npukit::cpu
