#include "npukit/window.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/window_output.hpp"
#include "npukit/error.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

namespace {
// Geometry fields beyond int32 are nonsense and would overflow the int64 arithmetic below.
constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
// ceil(num / s) for s > 0 and any sign of num (ORT computes it as std::ceil of a float
// quotient; exact here for the |num| < 2^24 it can meet).
int64_t ceil_div(int64_t num, int64_t s) {
  const int64_t q = num / s;
  return q + (num % s > 0 ? 1 : 0);
}
std::string field(const char* base, char axis) {
  return std::string(base) + "_" + axis;
}
// Parameter names as literals: this runs on every pooling and convolution
// call, so nothing here builds a string unless a check fails.
const char* name_of(const char* h_name, const char* w_name, char axis) {
  return axis == 'h' ? h_name : w_name;
}
// Fields checked in order, the compares inline: check_range (out of line)
// runs only for the first field out of its range, to throw its message.
struct RangeCheck {
  const char* name;
  int64_t value, lo, hi;
};
template <size_t K>
void check_ranges(const char* fn, const RangeCheck (&fields)[K]) {
  for (const RangeCheck& f : fields)
    if (f.value < f.lo || f.value > f.hi) check_range(fn, f.name, f.value, f.lo, f.hi);
}
}  // namespace

AxisWindow axis_h(const Window2d& w, int64_t in_h) {
  return {in_h,      w.kernel_h,   w.stride_h,  w.dilation_h,     w.ins_h,
          w.pad_top, w.pad_bottom, w.ceil_mode, w.truncated_count};
}

AxisWindow axis_w(const Window2d& w, int64_t in_w) {
  return {in_w,       w.kernel_w,  w.stride_w,  w.dilation_w,     w.ins_w,
          w.pad_left, w.pad_right, w.ceil_mode, w.truncated_count};
}

int64_t axis_output_size(const AxisWindow& a, const char* fn, char axis) {
  const bool is_h = axis == 'h';
  const int64_t pad_min = a.truncated_count ? -kMax : 0;
  const RangeCheck fields[] = {{is_h ? "x.H" : "x.W", a.in, 1, kMax},
                               {name_of("kernel_h", "kernel_w", axis), a.kernel, 1, kMax},
                               {name_of("stride_h", "stride_w", axis), a.stride, 1, kMax},
                               {name_of("dilation_h", "dilation_w", axis), a.dilation, 1, kMax},
                               {name_of("ins_h", "ins_w", axis), a.ins, 0, kMax},
                               {is_h ? "pad_top" : "pad_left", a.pad_begin, pad_min, kMax},
                               {is_h ? "pad_bottom" : "pad_right", a.pad_end, pad_min, kMax}};
  check_ranges(fn, fields);
  const int64_t span = a.inserted_size() + a.pad_begin + a.pad_end;
  const int64_t k_eff = a.effective_kernel();
  const int64_t num = span - k_eff;
  if (a.truncated_count) {
    // ONNX Runtime: C division (toward zero) or float ceil, then the same drop rule.
    int64_t out = (a.ceil_mode ? ceil_div(num, a.stride) : num / a.stride) + 1;
    if (a.ceil_mode && (out - 1) * a.stride >= a.inserted_size() + a.pad_begin) --out;
    if (out < 1)
      fail(fn, field("kernel", axis).c_str(),
           std::to_string(a.kernel) + " (effective extent " + std::to_string(k_eff) + ", stride " +
               std::to_string(a.stride) + ", pads " + std::to_string(a.pad_begin) + "/" +
               std::to_string(a.pad_end) + ": " + std::to_string(out) + " outputs)",
           "a window count of at least 1 along " + std::string(1, axis) +
               " (ONNX Runtime returns an empty tensor for 0 and rejects a negative count)");
    return out;
  }
  if (k_eff > span)
    fail(fn, field("kernel", axis).c_str(),
         std::to_string(a.kernel) + " (effective extent " + std::to_string(k_eff) +
             " with dilation " + std::to_string(a.dilation) + ")",
         "an extent no larger than the padded input along " + std::string(1, axis) + ", " +
             std::to_string(span));
  int64_t out = (a.ceil_mode ? (num + a.stride - 1) / a.stride : num / a.stride) + 1;
  // A last window that would start in the end padding is dropped (ONNX, PyTorch).
  if (a.ceil_mode && (out - 1) * a.stride >= a.inserted_size() + a.pad_begin) --out;
  return out;
}

AutoPad auto_pad_from_name(const std::string& name, const char* function) {
  if (name == "NOTSET" || name.empty()) return AutoPad::notset;
  if (name == "VALID") return AutoPad::valid;
  if (name == "SAME_UPPER") return AutoPad::same_upper;
  if (name == "SAME_LOWER") return AutoPad::same_lower;
  fail(function, "auto_pad", "'" + name + "'", "NOTSET, VALID, SAME_UPPER or SAME_LOWER");
}

namespace {
void same_pads(int64_t in, int64_t k, int64_t s, int64_t d, bool upper, int64_t& begin,
               int64_t& end) {
  // Out-of-range fields keep the pads; axis_output_size then names the bad field
  // (instead of a division by a zero stride here).
  for (int64_t v : {in, k, s, d})
    if (v < 1 || v > kMax) return;
  const int64_t out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
  begin = upper ? total / 2 : total - total / 2;
  end = total - begin;
}
}  // namespace

void resolve_auto_pad(Window2d& w, AutoPad mode, int64_t in_h, int64_t in_w) {
  if (mode == AutoPad::notset) return;
  if (mode == AutoPad::valid) {
    w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 0;
    return;
  }
  const bool upper = mode == AutoPad::same_upper;
  same_pads(in_h, w.kernel_h, w.stride_h, w.dilation_h, upper, w.pad_top, w.pad_bottom);
  same_pads(in_w, w.kernel_w, w.stride_w, w.dilation_w, upper, w.pad_left, w.pad_right);
}

void resolve_pool_auto_pad(Window2d& w, AutoPad mode, int64_t in_h, int64_t in_w, PoolGeometry g) {
  if (g == PoolGeometry::onnx) {
    resolve_auto_pad(w, mode, in_h, in_w);
    return;
  }
  w.truncated_count = true;
  // Only ORT's own SAME arithmetic makes pads negative; given pads stay >= 0.
  constexpr const char* fn = "npukit::resolve_pool_auto_pad";
  check_range(fn, "pad_top", w.pad_top, 0, kMax);
  check_range(fn, "pad_bottom", w.pad_bottom, 0, kMax);
  check_range(fn, "pad_left", w.pad_left, 0, kMax);
  check_range(fn, "pad_right", w.pad_right, 0, kMax);
  if (mode != AutoPad::same_upper && mode != AutoPad::same_lower) {
    resolve_auto_pad(w, mode, in_h, in_w);
    return;
  }
  const bool upper = mode == AutoPad::same_upper;
  auto axis = [upper](int64_t in, int64_t k, int64_t s, int64_t& begin, int64_t& end) {
    for (int64_t v : {in, k, s})
      if (v < 1 || v > kMax) return;  // axis_output_size names the bad field
    const int64_t total = ((in + s - 1) / s - 1) * s + k - in;  // undilated kernel, may be < 0
    begin = upper ? total / 2 : (total + 1) / 2;                // C division (toward zero)
    end = total - begin;
  };
  axis(in_h, w.kernel_h, w.stride_h, w.pad_top, w.pad_bottom);
  axis(in_w, w.kernel_w, w.stride_w, w.pad_left, w.pad_right);
}

std::vector<int64_t> window_output_shape(const std::vector<int64_t>& x, const Window2d& w,
                                         const char* fn) {
  if (x.size() != 4) fail(fn, "x", "shape " + shape_text(x), "a 4-D (N, C, H, W) tensor");
  const WindowOutputDims d = window_output_dims(x.data(), w, fn);
  return {d.n, d.c, d.oh, d.ow};
}

void expect_window_output(const TensorView& x, const TensorView& y, const Window2d& w,
                          const char* fn) {
  x.expect_rank(4, fn, "x");
  const WindowOutputDims d = window_output_dims(x.shape().data(), w, fn);
  if (y.rank() != 4 || y.dim(0) != d.n || y.dim(1) != d.c || y.dim(2) != d.oh || y.dim(3) != d.ow)
    y.expect_shape({d.n, d.c, d.oh, d.ow}, fn, "y");  // throws the usual message
}

namespace {
// A window that is exactly the (N, C, H, W) input's plane, every field in
// range: the checks below would all pass and give one output per plane. Global
// pools take this path (~30 instructions instead of ~450 per call).
bool whole_plane_in_range(const int64_t* x, const Window2d& w) {
  constexpr int64_t kMaxTaps = int64_t{1} << 26;  // as below
  const int64_t H = x[2], W = x[3];
  const bool sizes = x[0] >= 1 && x[0] <= kMax && x[1] >= 1 && x[1] <= kMax && H >= 1 &&
                     H <= kMax && W >= 1 && W <= kMax && H <= kMaxTaps / W;
  const bool window = w.kernel_h == H && w.kernel_w == W && w.stride_h >= 1 && w.stride_h <= kMax &&
                      w.stride_w >= 1 && w.stride_w <= kMax && w.dilation_h == 1 &&
                      w.dilation_w == 1 && w.ins_h == 0 && w.ins_w == 0;
  return sizes && window && w.pad_top == 0 && w.pad_bottom == 0 && w.pad_left == 0 &&
         w.pad_right == 0;
}
}  // namespace

WindowOutputDims window_output_dims(const int64_t* x, const Window2d& w, const char* fn) {
  if (whole_plane_in_range(x, w)) return {x[0], x[1], 1, 1};
  const RangeCheck batch[] = {{"x.N", x[0], 1, INT32_MAX}, {"x.C", x[1], 1, INT32_MAX}};
  check_ranges(fn, batch);
  const int64_t oh = axis_output_size(axis_h(w, x[2]), fn, 'h');
  const int64_t ow = axis_output_size(axis_w(w, x[3]), fn, 'w');
  // Bounded work from small inputs: every output visits KH x KW taps, and the
  // per-axis tap tables hold OH x KH and OW x KW entries. 8192 x 8192 windows
  // (a global pool of a 64 Mpixel image) stay allowed.
  constexpr int64_t kMaxTaps = int64_t{1} << 26;
  if (w.kernel_h > kMaxTaps / std::max<int64_t>(w.kernel_w, 1))
    fail(fn, "kernel_shape",
         std::to_string(w.kernel_h) + " x " + std::to_string(w.kernel_w) + " taps per window",
         "at most 2^26 (67108864) taps per window");
  if (oh > kMaxTaps / std::max<int64_t>(w.kernel_h, 1))
    fail(fn, "kernel_h",
         std::to_string(w.kernel_h) + " over " + std::to_string(oh) + " output rows",
         "output rows x kernel_h at most 2^26 (the tap table of the axis)");
  if (ow > kMaxTaps / std::max<int64_t>(w.kernel_w, 1))
    fail(fn, "kernel_w",
         std::to_string(w.kernel_w) + " over " + std::to_string(ow) + " output columns",
         "output columns x kernel_w at most 2^26 (the tap table of the axis)");
  return {x[0], x[1], oh, ow};
}

AxisTaps axis_taps(const AxisWindow& a, int64_t out) {
  AxisTaps t;
  t.out = out;
  t.kernel = a.kernel;
  t.kind.resize(static_cast<size_t>(out * a.kernel));
  t.index.resize(t.kind.size(), -1);
  const int64_t n = a.inserted_size();
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < a.kernel; ++k) {
      const int64_t p = o * a.stride - a.pad_begin + k * a.dilation;
      const size_t i = static_cast<size_t>(o * a.kernel + k);
      if (p < 0 || p >= n) {
        // Padding spans [-pad_begin, 0) and [n, n + pad_end); anything else (a ceil_mode or
        // truncated-count window past the end) is outside. Negative pads have no padding.
        t.kind[i] = p >= -a.pad_begin && p < n + a.pad_end ? Tap::padding : Tap::outside;
      } else if (p % (a.ins + 1) != 0) {
        t.kind[i] = Tap::inserted_zero;
      } else {
        t.kind[i] = Tap::input;
        t.index[i] = p / (a.ins + 1);
      }
    }
  }
  return t;
}

void check_pool_pads(const char* function, const Window2d& w) {
  check_range(function, "kernel_h", w.kernel_h, 1, INT32_MAX);
  check_range(function, "kernel_w", w.kernel_w, 1, INT32_MAX);
  const std::string h = "below kernel_h = " + std::to_string(w.kernel_h) +
                        " (ONNX Runtime: pad should be smaller than kernel)";
  const std::string wd = "below kernel_w = " + std::to_string(w.kernel_w) +
                         " (ONNX Runtime: pad should be smaller than kernel)";
  check(w.pad_top < w.kernel_h, function, "pad_top", std::to_string(w.pad_top), h);
  check(w.pad_bottom < w.kernel_h, function, "pad_bottom", std::to_string(w.pad_bottom), h);
  check(w.pad_left < w.kernel_w, function, "pad_left", std::to_string(w.pad_left), wd);
  check(w.pad_right < w.kernel_w, function, "pad_right", std::to_string(w.pad_right), wd);
}

}  // namespace npukit
