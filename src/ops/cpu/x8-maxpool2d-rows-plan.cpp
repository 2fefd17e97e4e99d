// Plan of the separable s8/u8 max pooling kernels (x8-maxpool2d-rows.hpp):
// the reference's tap table of each axis, laid out in buffer positions.
#include <cstdlib>

#include "x8-maxpool2d-rows.hpp"

namespace npukit::cpu {

namespace {

// False when the axis's taps do not fit one buffer (dilation, zero insertion,
// or input taps that are not one linear run).
bool make_axis(const AxisWindow& a, int64_t out, X8RowsAxis& r) {
  if (a.dilation != 1 || a.ins != 0 || out < 1) return false;
  const AxisTaps t = axis_taps(a, out);
  r.out = out;
  r.kernel = a.kernel;
  r.stride = a.stride;
  r.span = (out - 1) * a.stride + a.kernel;
  const auto span = static_cast<size_t>(r.span);
  r.kind.assign(span, Tap::outside);
  std::vector<int64_t> index(span, -1);
  std::vector<bool> seen(span, false);
  int64_t lo = -1, hi = -1;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < a.kernel; ++k) {
      const auto b = static_cast<size_t>(o * a.stride + k);
      const Tap kind = t.kind_at(o, k);
      const int64_t idx = kind == Tap::input ? t.index_at(o, k) : -1;
      if (seen[b] && (r.kind[b] != kind || index[b] != idx)) return false;
      seen[b] = true;
      r.kind[b] = kind;
      index[b] = idx;
      if (kind == Tap::input) {
        if (lo < 0) lo = static_cast<int64_t>(b);
        hi = static_cast<int64_t>(b) + 1;
      }
    }
  r.in_lo = lo < 0 ? 0 : lo;
  r.in_hi = lo < 0 ? 0 : hi;
  r.first_index = lo < 0 ? 0 : index[static_cast<size_t>(lo)];
  for (int64_t b = r.in_lo; b < r.in_hi; ++b) {
    const auto i = static_cast<size_t>(b);
    const int64_t want = r.first_index + (b - r.in_lo);
    // A position no window reads (stride > kernel) is filled from the input too.
    if (seen[i] ? index[i] != want : (want < 0 || want >= a.in)) return false;
    r.kind[i] = Tap::input;
  }
  r.in_first.assign(static_cast<size_t>(out), 0);
  r.in_count.assign(static_cast<size_t>(out), 0);
  r.any_pad.assign(static_cast<size_t>(out), 0);
  for (int64_t o = 0; o < out; ++o) {
    int64_t first = -1, count = 0;
    bool pad = false;
    for (int64_t k = 0; k < a.kernel; ++k) {
      const Tap kind = t.kind_at(o, k);
      pad = pad || kind == Tap::padding;
      if (kind != Tap::input) continue;
      if (first < 0) first = o * a.stride + k;
      ++count;
    }
    const auto i = static_cast<size_t>(o);
    r.in_first[i] = static_cast<int32_t>(first < 0 ? 0 : first);
    r.in_count[i] = static_cast<int32_t>(count);
    r.any_pad[i] = pad;
  }
  return true;
}

}  // namespace

X8RowsPlan make_x8_rows_plan(const Pool2dProblem& pr) {
  X8RowsPlan plan;
  const Window2d& win = pr.p.window;
  if (!make_axis(axis_h(win, pr.x.dim(2)), pr.y.dim(2), plan.h) ||
      !make_axis(axis_w(win, pr.x.dim(3)), pr.y.dim(3), plan.w)) {
    plan.unsupported = "dilation, zero insertion or taps that are not one run per axis";
    return plan;
  }
  for (int32_t n : plan.h.in_count) plan.empty_outputs = plan.empty_outputs || n == 0;
  for (int32_t n : plan.w.in_count) plan.empty_outputs = plan.empty_outputs || n == 0;
  return plan;
}

const char* x8_rows_declines(const Pool2dProblem& pr) {
  if (pr.x.dtype() != DType::s8 && pr.x.dtype() != DType::u8) return "not s8/u8";
  if (pr.x.stride(3) != 1) return "x is not unit-stride along W (not NCHW-like)";
  const Window2d& w = pr.p.window;
  if (w.stride_w > 2) return "stride_w > 2";
  if (w.dilation_h != 1 || w.dilation_w != 1) return "dilation";
  if (w.ins_h != 0 || w.ins_w != 0) return "zero insertion";
  // Buffer offsets are int32 per output; keep them well inside.
  if (pr.y.dim(2) * w.stride_h + w.kernel_h > (int64_t{1} << 30) ||
      pr.y.dim(3) * w.stride_w + w.kernel_w > (int64_t{1} << 30))
    return "an axis too long for 32-bit buffer positions";
  return nullptr;
}

}  // namespace npukit::cpu
