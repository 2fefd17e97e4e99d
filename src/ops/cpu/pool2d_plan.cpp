#include "pool2d_plan.hpp"

#include <cstdlib>
#include <limits>

#include "last_plan.hpp"

namespace npukit::cpu {

namespace {

bool all_input(const AxisTaps& t, int64_t o) {
  for (int64_t k = 0; k < t.kernel; ++k)
    if (t.kind_at(o, k) != Tap::input) return false;
  return true;
}

AxisInterior find_interior(const AxisTaps& t) {
  AxisInterior r;
  int64_t lo = 0;
  while (lo < t.out && !all_input(t, lo)) ++lo;
  if (lo == t.out) return r;
  r.lo = lo;
  r.first = t.index_at(lo, 0);
  r.tap_step = t.kernel > 1 ? t.index_at(lo, 1) - r.first : 0;
  r.out_step = lo + 1 < t.out ? t.index_at(lo + 1, 0) - r.first : 0;
  int64_t hi = lo + 1;
  for (; hi < t.out && all_input(t, hi); ++hi) {
    bool linear = true;
    for (int64_t k = 0; k < t.kernel && linear; ++k)
      linear = t.index_at(hi, k) == r.first + (hi - lo) * r.out_step + k * r.tap_step;
    if (!linear) break;
  }
  // The first window alone fixes tap_step; check the rest of its taps.
  for (int64_t k = 0; k < t.kernel; ++k)
    if (t.index_at(lo, k) != r.first + k * r.tap_step) return AxisInterior{};
  r.hi = hi;
  return r;
}

}  // namespace

Pool2dPlan make_pool2d_plan(const Pool2dProblem& pr) {
  const Window2d& win = pr.p.window;
  Pool2dPlan plan;
  plan.h = axis_taps(axis_h(win, pr.x.dim(2)), pr.y.dim(2));
  plan.w = axis_taps(axis_w(win, pr.x.dim(3)), pr.y.dim(3));
  plan.w_interior = find_interior(plan.w);
  plan.h_interior = find_interior(plan.h);
  // NHWC reads channels in place. NCHW: column lanes for rows with a wide
  // interior, otherwise blocks of planes copied to channel-last scratch
  // (measured on Zen 5: column lanes win from ~16 interior outputs; packing
  // wins on 14x14 planes, and by ~10% over gathers on 7x7 global pools).
  const int64_t ow = pr.y.dim(3), inner = plan.w_interior.size();
  if (pr.x.stride(1) == 1)
    plan.lanes = Lanes::channel;
  else if (inner >= 16 && inner * 2 >= ow)
    plan.lanes = Lanes::column;
  else if (pr.x.dim(2) * pr.x.dim(3) * kChannelBlock *
               static_cast<int64_t>(dtype_size(pr.x.dtype())) >
           (int64_t{16} << 20))
    plan.lanes = Lanes::channel;  // huge planes with sparse windows: no 16 MB scratch
  else
    plan.lanes = Lanes::packed_channel;
  return plan;
}

Pool2dGeometry Pool2dGeometry::of(const Pool2dProblem& pr) {
  Pool2dGeometry g;
  g.window = pr.p.window;
  g.dtype = pr.x.dtype();
  for (int i = 0; i < 4; ++i) {
    g.x_dims[i] = pr.x.dim(i), g.x_strides[i] = pr.x.stride(i);
    g.y_dims[i] = pr.y.dim(i), g.y_strides[i] = pr.y.stride(i);
  }
  return g;
}

bool Pool2dGeometry::operator==(const Pool2dGeometry& o) const {
  const Window2d &a = window, &b = o.window;
  const bool same_window =
      a.kernel_h == b.kernel_h && a.kernel_w == b.kernel_w && a.stride_h == b.stride_h &&
      a.stride_w == b.stride_w && a.dilation_h == b.dilation_h && a.dilation_w == b.dilation_w &&
      a.ins_h == b.ins_h && a.ins_w == b.ins_w && a.pad_top == b.pad_top &&
      a.pad_bottom == b.pad_bottom && a.pad_left == b.pad_left && a.pad_right == b.pad_right &&
      a.ceil_mode == b.ceil_mode && a.truncated_count == b.truncated_count;
  if (!same_window || dtype != o.dtype) return false;
  for (int i = 0; i < 4; ++i)
    if (x_dims[i] != o.x_dims[i] || x_strides[i] != o.x_strides[i] || y_dims[i] != o.y_dims[i] ||
        y_strides[i] != o.y_strides[i])
      return false;
  return true;
}

std::shared_ptr<const Pool2dPlan> shared_pool2d_plan(const Pool2dProblem& pr) {
  thread_local LastPlan<Pool2dGeometry, Pool2dPlan> kept;
  return kept.get(Pool2dGeometry::of(pr), [&] { return make_pool2d_plan(pr); });
}

void axis_row(const AxisTaps& t, int64_t o, int64_t stride, std::vector<AxisTap>& out) {
  out.resize(static_cast<size_t>(t.kernel));
  for (int64_t k = 0; k < t.kernel; ++k) {
    const Tap kind = t.kind_at(o, k);
    out[static_cast<size_t>(k)] = {kind, kind == Tap::input ? t.index_at(o, k) * stride : 0};
  }
}

const char* pool2d_declines_gather(const Pool2dProblem& pr, int64_t lanes) {
  const int64_t limit = std::numeric_limits<int32_t>::max() / lanes;
  for (int i = 0; i < 4; ++i)
    if (std::abs(pr.x.stride(i)) * 4 >= limit || std::abs(pr.y.stride(i)) * 4 >= limit)
      return "a stride too large for 32-bit lane offsets";
  return nullptr;
}

}  // namespace npukit::cpu
