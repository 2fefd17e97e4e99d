// When the flat-plane s8/u8 max pooling kernels apply (x8-maxpool2d-flat.hpp).
#include "x8-maxpool2d-flat.hpp"

namespace npukit::cpu {

namespace {

// Whether every tap of the axis is the plain window o - pad + k, on the input
// or else padding (never past the padding, zero insertion or dilation).
bool plain_axis(const AxisWindow& a, int64_t out, int64_t pad) {
  if (a.dilation != 1 || a.ins != 0 || a.stride != 1) return false;
  const AxisTaps t = axis_taps(a, out);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < a.kernel; ++k) {
      const int64_t i = o - pad + k;
      const bool on_input = i >= 0 && i < a.in;
      const Tap kind = t.kind_at(o, k);
      if (on_input ? (kind != Tap::input || t.index_at(o, k) != i) : kind != Tap::padding)
        return false;
    }
  return true;
}

const char* common_declines(const Pool2dProblem& pr) {
  if (pr.x.dtype() == DType::f32) return "not s8/u8";
  if (pr.p.mode != PoolMode::max) return "not max pooling";
  if (pr.x.stride(3) != 1 || pr.x.stride(2) != pr.x.dim(3))
    return "x planes are not contiguous (NCHW rows back to back)";
  return nullptr;
}

}  // namespace

const char* x8_flat_same_declines(const Pool2dProblem& pr) {
  if (const char* why = common_declines(pr)) return why;
  const Window2d& w = pr.p.window;
  const int64_t H = pr.x.dim(2), W = pr.x.dim(3);
  if (pr.y.dim(2) != H || pr.y.dim(3) != W) return "output size differs from the input's";
  if (w.stride_h != 1 || w.stride_w != 1) return "stride is not 1";
  if (pr.y.stride(3) != 1 || pr.y.stride(2) != W) return "y planes are not contiguous";
  if (w.kernel_h * w.kernel_w * ((H * W + 63) / 64) > (int64_t{1} << 22))
    return "mask table too large (plane or window)";
  if (!plain_axis(axis_h(w, H), H, w.pad_top) || !plain_axis(axis_w(w, W), W, w.pad_left))
    return "taps are not the plain same-size window";
  return nullptr;
}

const char* x8_flat_same_declines_avx2(const Pool2dProblem& pr) {
  if (const char* why = x8_flat_same_declines(pr)) return why;
  const Window2d& w = pr.p.window;
  if (w.kernel_h * w.kernel_w * ((pr.x.dim(2) * pr.x.dim(3) + 31) / 32) * 32 > (int64_t{1} << 22))
    return "byte mask table too large (plane or window)";
  return nullptr;
}

}  // namespace npukit::cpu
