// When the stride-2 register kernels apply (x8-maxpool2d-s2.hpp).
#include "x8-maxpool2d-s2.hpp"

namespace npukit::cpu {

namespace {

// Every output along the axis has at least one tap on the input (the taps of
// output o are o*stride - pad_begin + [0, kernel), dilation 1).
bool every_window_reads_input(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                              int64_t pad_begin) {
  return -pad_begin + kernel - 1 >= 0 && (out - 1) * stride - pad_begin <= in - 1;
}

}  // namespace

X8S2Taps x8_s2_taps(const Window2d& w) {
  X8S2Taps t;
  const int64_t first = -w.pad_left, last = first + w.kernel_w - 1;
  for (int64_t d = first; d <= last; d += 2) t.loads[t.count++] = X8S2Load{d, d + 1 <= last};
  return t;
}

const char* x8_s2_declines(const Pool2dProblem& pr) {
  if (pr.x.dtype() != DType::s8 && pr.x.dtype() != DType::u8) return "not s8/u8";
  if (pr.p.mode != PoolMode::max) return "not max pooling";
  const Window2d& w = pr.p.window;
  if (w.stride_w != 2) return "stride_w is not 2";
  if (w.kernel_w > 16) return "kernel_w above 16";
  if (w.dilation_h != 1 || w.dilation_w != 1 || w.ins_h != 0 || w.ins_w != 0)
    return "dilation or zero insertion";
  if (pr.x.stride(3) != 1 || pr.y.stride(3) != 1) return "x or y not unit-stride along W";
  if (!every_window_reads_input(pr.x.dim(2), pr.y.dim(2), w.kernel_h, w.stride_h, w.pad_top) ||
      !every_window_reads_input(pr.x.dim(3), pr.y.dim(3), w.kernel_w, 2, w.pad_left))
    return "a window without input taps";
  return nullptr;
}

const char* x8_s2_cols_declines(const Pool2dProblem& pr) {
  if (const char* why = x8_s2_declines(pr)) return why;
  const Window2d& w = pr.p.window;
  if (w.pad_left < 0 || w.pad_left > 1 || w.kernel_w - w.pad_left > 2)
    return "column taps outside [2j - 1, 2j + 1] (pad_left above 1 or kernel_w - pad_left above 2)";
  return nullptr;
}

const char* x8_s2_vbmi_declines(const Pool2dProblem& pr) {
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
#else
  static const bool vbmi = false;
#endif
  if (!vbmi) return "the host has no AVX-512 VBMI";
  return x8_s2_cols_declines(pr);
}

}  // namespace npukit::cpu
