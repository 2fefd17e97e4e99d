// `npukit compare`: the same inputs through several profiles, then element by
// element differences against the first profile that accepted the case.
#include "profile_compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <random>

#include "npukit/error.hpp"
#include "npukit/ops/matmul.hpp"
#include "npukit/ops/profile_support.hpp"

namespace npukit {

namespace {

constexpr const char* kFn = "npukit::compare_profiles";

Tensor random_codes(DType t, const Shape& shape, uint64_t seed) {
  Tensor x(t, shape);
  std::mt19937_64 gen(seed);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto r = static_cast<uint8_t>(gen() >> 56);
    if (t == DType::s8)
      x.data<int8_t>()[i] = static_cast<int8_t>(r);
    else
      x.data<uint8_t>()[i] = r;
  }
  return x;
}

int code(const Tensor& t, int64_t i) {
  return t.dtype() == DType::s8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

Tensor run_one(const CompareConfig& c, Profile prof, const Tensor& x, const Tensor& b,
               const Tensor& w) {
  if (c.op == "qlinear_conv") {
    QLinearConvParams p;
    p.window = c.window;
    p.window.kernel_h = w.shape()[2];
    p.window.kernel_w = w.shape()[3];
    p.x_scale = c.x_scale;
    p.x_zero_point = c.x_zero_point;
    p.w.scale = {c.w_scale};
    p.y_scale = c.y_scale;
    p.y_zero_point = c.y_zero_point;
    apply_profile(p, prof);
    Tensor y(c.dtype, qlinear_conv_output_shape(c.shape, w.shape(), p));
    qlinear_conv(x, w, TensorView(), y, p);
    return y;
  }
  if (c.op == "qlinear_matmul") {
    QLinearMatMulParams p;
    p.a_scale = c.x_scale;
    p.a_zero_point = c.x_zero_point;
    p.b.scale = {c.w_scale};
    p.y_scale = c.y_scale;
    p.y_zero_point = c.y_zero_point;
    apply_profile(p, prof);
    Tensor y(c.dtype, matmul_broadcast_shape(c.shape, w.shape()));
    qlinear_matmul(x, w, y, p);
    return y;
  }
  if (c.op == "qlinear_add") {
    QLinearAddParams p;
    p.a_scale = c.x_scale;
    p.a_zero_point = c.x_zero_point;
    p.b_scale = c.b_scale;
    p.b_zero_point = c.b_zero_point;
    p.c_scale = c.y_scale;
    p.c_zero_point = c.y_zero_point;
    apply_profile(p, prof);
    Tensor y(c.dtype, c.shape);
    qlinear_add(x, b, y, p);
    return y;
  }
  QLinearAvgPoolParams p;
  p.window = c.window;
  p.count_include_pad = c.count_include_pad;
  p.x_scale = c.x_scale;
  p.y_scale = c.y_scale;
  p.x_zero_point = c.x_zero_point;
  p.y_zero_point = c.y_zero_point;
  apply_profile(p, prof);
  if (c.op == "qlinear_global_average_pool") {
    Tensor y(c.dtype, {c.shape[0], c.shape[1], 1, 1});
    qlinear_global_average_pool(x, y, p);
    return y;
  }
  Tensor y(c.dtype, qlinear_average_pool_output_shape(c.shape, p));
  qlinear_average_pool(x, y, p);
  return y;
}

// The profile table's family of a compared operator.
OpFamily family_of(const std::string& op) {
  if (op == "qlinear_conv") return OpFamily::qlinear_conv;
  if (op == "qlinear_matmul") return OpFamily::qlinear_matmul;
  if (op == "qlinear_add") return OpFamily::qlinear_add;
  return OpFamily::qlinear_average_pool;
}

Shape unflatten(int64_t i, const Shape& s) {
  Shape idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

}  // namespace

const std::vector<std::string>& compare_ops() {
  static const std::vector<std::string> ops = {"qlinear_average_pool",
                                               "qlinear_global_average_pool", "qlinear_add",
                                               "qlinear_conv", "qlinear_matmul"};
  return ops;
}

CompareReport compare_profiles(const CompareConfig& c, const std::vector<Profile>& profiles) {
  const auto& ops = compare_ops();
  if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) {
    std::string all;
    for (const auto& o : ops) all += (all.empty() ? "" : ", ") + o;
    fail(kFn, "op", "'" + c.op + "'", all);
  }
  check(c.dtype == DType::s8 || c.dtype == DType::u8, kFn, "dtype", dtype_name(c.dtype),
        "s8 or u8");
  check(!profiles.empty(), kFn, "profiles", "none", "at least one profile");
  check(c.shape.size() == 4, kFn, "shape", shape_text(c.shape), "4 values N,C,H,W");
  for (int64_t d : c.shape) check_range(kFn, "shape", d, 1, 1 << 20);
  CompareReport r;
  r.config = c;
  r.x = random_codes(c.dtype, c.shape, c.seed);
  const Tensor b = random_codes(c.dtype, c.shape, c.seed + 1);
  Tensor w;
  if (c.op == "qlinear_conv" || c.op == "qlinear_matmul") {
    check(c.w_dtype == DType::s8 || (c.w_dtype == DType::u8 && c.dtype == DType::u8), kFn,
          "w_dtype", dtype_name(c.w_dtype), "s8, or u8 with u8 x (ONNX Runtime's kernels)");
    check_range(kFn, "out_channels", c.out_channels, 1, 1 << 16);
    const Shape ws = c.op == "qlinear_conv"
                         ? Shape{c.out_channels, c.shape[1], c.window.kernel_h, c.window.kernel_w}
                         : Shape{c.shape[3], c.out_channels};
    w = random_codes(c.w_dtype, ws, c.seed + 2);
  }
  for (Profile prof : profiles) {
    ProfileRun run{prof, "", Tensor()};
    try {
      // The table says first whether the profile covers the operator (and why not).
      expect_supported(family_of(c.op), prof, kFn);
      run.y = run_one(c, prof, r.x, b, w);
    } catch (const Error& e) {
      run.error = e.what();
    }
    r.runs.push_back(std::move(run));
  }
  const ProfileRun* ref = nullptr;
  for (const ProfileRun& run : r.runs) {
    if (!run.error.empty()) continue;
    if (!ref) {
      ref = &run;
      continue;
    }
    ProfileDiff d;
    d.profile = run.profile;
    d.histogram.assign(10, 0);
    for (int64_t i = 0; i < run.y.numel(); ++i) {
      const int a = code(ref->y, i), v = code(run.y, i);
      const int64_t diff = std::abs(a - v);
      ++d.histogram[static_cast<size_t>(std::min<int64_t>(diff, 9))];
      if (diff == 0) continue;
      if (d.differing++ == 0) {
        d.first_index = unflatten(i, run.y.shape());
        d.first_reference = a;
        d.first_value = v;
      }
      d.max_abs_diff = std::max(d.max_abs_diff, diff);
    }
    r.diffs.push_back(std::move(d));
  }
  return r;
}

std::string format_compare_report(const CompareReport& r) {
  const CompareConfig& c = r.config;
  const Window2d& w = c.window;
  std::string s = fmt::format(
      "{} {} x{} kernel {}x{} strides {}x{} pads [{}, {}, {}, {}] ceil_mode {} "
      "count_include_pad {}\nx_scale {} x_zero_point {} y_scale {} y_zero_point {} seed {}\n\n",
      c.op, dtype_name(c.dtype), shape_text(c.shape), w.kernel_h, w.kernel_w, w.stride_h,
      w.stride_w, w.pad_top, w.pad_left, w.pad_bottom, w.pad_right, int{w.ceil_mode},
      int{c.count_include_pad}, c.x_scale, c.x_zero_point, c.y_scale, c.y_zero_point, c.seed);
  const ProfileRun* ref = nullptr;
  for (const ProfileRun& run : r.runs) {
    if (!run.error.empty()) {
      s += fmt::format("{:<12} rejected: {}\n", profile_name(run.profile), run.error);
    } else if (!ref) {
      ref = &run;
      s += fmt::format("{:<12} reference, output {} ({} elements)\n", profile_name(run.profile),
                       shape_text(run.y.shape()), run.y.numel());
    }
  }
  for (const ProfileDiff& d : r.diffs) {
    const int64_t n = ref->y.numel();
    s += fmt::format("{:<12} {} of {} elements differ from {} ({:.2f}%), max |diff| {}",
                     profile_name(d.profile), d.differing, n, profile_name(ref->profile),
                     100.0 * static_cast<double>(d.differing) / static_cast<double>(n),
                     d.max_abs_diff);
    if (d.differing) {
      s += fmt::format(", first at (n, c, h, w) = {}: {} vs {}\n             |diff| histogram:",
                       shape_text(d.first_index), d.first_reference, d.first_value);
      for (size_t k = 1; k < d.histogram.size(); ++k)
        if (d.histogram[k]) s += fmt::format(" {}{}: {}", k, k == 9 ? "+" : "", d.histogram[k]);
    }
    s += "\n";
  }
  return s;
}

}  // namespace npukit
