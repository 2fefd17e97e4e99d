// Built-in fp32 cases. Every expected value is worked out by hand in the
// comment beside it, from the definitions in docs/semantics.md.
#include <cmath>
#include <limits>

#include "npukit/npukit.hpp"
#include "selftest.hpp"

namespace npukit::cli {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string compare(const Tensor& got, const std::vector<float>& want) {
  const std::vector<float> g = got.to_vector<float>();
  if (g.size() != want.size()) return "wrong size";
  for (size_t i = 0; i < g.size(); ++i) {
    const bool same = (std::isnan(g[i]) && std::isnan(want[i])) || g[i] == want[i];
    if (!same)
      return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " +
             std::to_string(want[i]);
  }
  return "";
}

Tensor one_to_nine(float sign = 1.0f) {
  std::vector<float> v(9);
  for (int i = 0; i < 9; ++i) v[i] = sign * static_cast<float>(i + 1);
  return Tensor::from<float>({1, 1, 3, 3}, v);
}

std::string pool_case(Profile prof, PoolMode mode, bool cip, Window2d win, const Tensor& x,
                      const std::vector<float>& want) {
  Pool2dParams p;
  p.mode = mode;
  p.window = win;
  p.count_include_pad = cip;
  apply_profile(p, prof);
  Tensor y(DType::f32, pool2d_output_shape(x.shape(), p));
  pool2d(x, y, p);
  return compare(y, want);
}

Window2d k2s2p1() {
  Window2d w;
  w.kernel_h = w.kernel_w = 2;
  w.stride_h = w.stride_w = 2;
  w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = 1;
  return w;
}

Window2d k2s2ceil() {
  Window2d w;
  w.kernel_h = w.kernel_w = 2;
  w.stride_h = w.stride_w = 2;
  w.ceil_mode = true;
  return w;
}

// The divisor and padding rules of each profile.
void add_pool_profile_cases(std::vector<SelftestCase>& out) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], k2 s2 pad 1: windows hold {1}, {2,3}, {4,7}, {5,6,8,9}.
  for (Profile prof : {Profile::onnxruntime, Profile::pytorch, Profile::bm1684}) {
    const std::string name = profile_name(prof);
    out.push_back(
        {"pool2d.avg", name, "count_include_pad=1, k2 s2 pad1 (sums 1,5,11,28 over 4)", [prof] {
           return pool_case(prof, PoolMode::avg, true, k2s2p1(), one_to_nine(),
                            {0.25f, 1.25f, 2.75f, 7.0f});
         }});
    // -x: the padded taps must never win; windows' maxima -1, -2, -4, -5.
    out.push_back({"pool2d.max", name, "padding never wins (k2 s2 pad1 on -x)", [prof] {
                     return pool_case(prof, PoolMode::max, true, k2s2p1(), one_to_nine(-1.0f),
                                      {-1.0f, -2.0f, -4.0f, -5.0f});
                   }});
  }
  for (Profile prof : {Profile::onnxruntime, Profile::pytorch}) {
    out.push_back({"pool2d.avg", profile_name(prof),
                   "count_include_pad=0 divides by valid taps (1, 2, 2, 4)", [prof] {
                     return pool_case(prof, PoolMode::avg, false, k2s2p1(), one_to_nine(),
                                      {1.0f, 2.5f, 5.5f, 7.0f});
                   }});
  }
}

// Which loop (and so which summation order and divisor) ONNX Runtime runs.
void add_avg_pool_loop_cases(std::vector<SelftestCase>& out) {
  // ceil_mode, k2 s2, 3x3: the last window holds only 9. ONNX Runtime 1.30 runs
  // ceil_mode with count_include_pad in its own loop, which divides by the window
  // cut at the padded input's end (here the input: 1), like PyTorch.
  out.push_back({"pool2d.avg", "onnxruntime", "ceil_mode last window cut at the padded end", [] {
                   return pool_case(Profile::onnxruntime, PoolMode::avg, true, k2s2ceil(),
                                    one_to_nine(), {3.0f, 4.5f, 7.5f, 9.0f});
                 }});
  // Without ceil_mode MLAS sums columns first: [[1e8, 1, 7], [-1e8, 1, 7]], k2:
  // (1e8 - 1e8) + (1 + 1) = 2 -> 0.5 (row-major would give 0.25).
  out.push_back(
      {"pool2d.avg", "onnxruntime", "MLAS sums window columns first", [] {
         Window2d w;
         w.kernel_h = w.kernel_w = 2;
         const Tensor x = Tensor::from<float>({1, 1, 2, 3}, {1e8f, 1.0f, 7.0f, -1e8f, 1.0f, 7.0f});
         return pool_case(Profile::onnxruntime, PoolMode::avg, false, w, x, {0.5f, 4.0f});
       }});
  out.push_back({"pool2d.avg", "pytorch", "ceil_mode last window clipped to the input", [] {
                   return pool_case(Profile::pytorch, PoolMode::avg, true, k2s2ceil(),
                                    one_to_nine(), {3.0f, 4.5f, 7.5f, 9.0f});
                 }});
}

// NaN rules, dilation, zero insertion and the global pools.
void add_max_sum_global_cases(std::vector<SelftestCase>& out) {
  // NaN at (0,0): PyTorch propagates it, OKKernel's strict compare ignores it.
  Tensor xn = one_to_nine();
  xn.data<float>()[0] = kNaN;
  out.push_back({"pool2d.max", "pytorch", "NaN propagates", [xn] {
                   Window2d w;
                   w.kernel_h = w.kernel_w = 3;
                   return pool_case(Profile::pytorch, PoolMode::max, true, w, xn, {kNaN});
                 }});
  out.push_back({"pool2d.max", "bm1684", "NaN never wins (strict >)", [xn] {
                   Window2d w;
                   w.kernel_h = w.kernel_w = 3;
                   return pool_case(Profile::bm1684, PoolMode::max, true, w, xn, {9.0f});
                 }});
  // Dilation 2, k2 on 3x3: taps 1, 3, 7, 9.
  out.push_back({"pool2d.max", "-", "dilation 2 reads the corners", [] {
                   Window2d w;
                   w.kernel_h = w.kernel_w = 2;
                   w.dilation_h = w.dilation_w = 2;
                   return pool_case(Profile::pytorch, PoolMode::max, true, w, one_to_nine(),
                                    {9.0f});
                 }});
  // ins 1: [[1,2],[3,4]] expands to [[1,0,2],[0,0,0],[3,0,4]]; k3 sum = 10, coeff 0.5.
  out.push_back({"pool2d.sum", "-", "zero insertion and coeff", [] {
                   Pool2dParams p;
                   p.mode = PoolMode::sum;
                   p.coeff = 0.5f;
                   p.window.kernel_h = p.window.kernel_w = 3;
                   p.window.ins_h = p.window.ins_w = 1;
                   Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
                   Tensor y(DType::f32, pool2d_output_shape(x.shape(), p));
                   pool2d(x, y, p);
                   return compare(y, {5.0f});
                 }});
  out.push_back({"global_pool2d", "-", "avg and max of 1..9", [] {
                   Tensor x = one_to_nine();
                   Tensor ya(DType::f32, {1, 1, 1, 1}), ym(DType::f32, {1, 1, 1, 1});
                   global_pool2d(x, ya, PoolMode::avg);
                   global_pool2d(x, ym, PoolMode::max);
                   std::string r = compare(ya, {5.0f});
                   return r.empty() ? compare(ym, {9.0f}) : r;
                 }});
}

void add_pool_cases(std::vector<SelftestCase>& out) {
  add_pool_profile_cases(out);
  add_avg_pool_loop_cases(out);
  add_max_sum_global_cases(out);
}

// x: two channels, both 1..9; w0 = [[1,0],[0,-1]] gives -4 everywhere; w1 = 0.5
// everywhere gives half the window sums 12, 16, 24, 28.
Tensor conv_x() {
  std::vector<float> v(18);
  for (int i = 0; i < 18; ++i) v[i] = static_cast<float>(i % 9 + 1);
  return Tensor::from<float>({1, 2, 3, 3}, v);
}

void add_conv_cases(std::vector<SelftestCase>& out) {
  out.push_back({"conv2d", "-", "bias and result_add (-4 + half sums + 10 + 1)", [] {
                   Tensor x = conv_x();
                   Tensor w = Tensor::from<float>({1, 2, 2, 2}, {1, 0, 0, -1, .5, .5, .5, .5});
                   Tensor b = Tensor::from<float>({1}, {10});
                   Conv2dParams p;
                   p.window.kernel_h = p.window.kernel_w = 2;
                   p.has_bias = p.result_add = true;
                   Tensor y = Tensor::from<float>({1, 1, 2, 2}, {1, 1, 1, 1});
                   conv2d(x, w, b, y, p);
                   return compare(y, {13, 15, 19, 21});
                 }});
  out.push_back({"conv2d", "-", "groups = channels", [] {
                   Tensor x = conv_x();
                   Tensor w = Tensor::from<float>({2, 1, 2, 2}, {1, 0, 0, -1, .5, .5, .5, .5});
                   Conv2dParams p;
                   p.window.kernel_h = p.window.kernel_w = 2;
                   p.groups = 2;
                   Tensor y(DType::f32, {1, 2, 2, 2});
                   conv2d(x, w, Tensor(), y, p);
                   return compare(y, {-4, -4, -4, -4, 6, 8, 12, 14});
                 }});
  out.push_back({"depthwise2d", "-", "channel multiplier 2", [] {
                   Tensor x = one_to_nine();
                   Tensor w = Tensor::from<float>({2, 1, 2, 2}, {1, 0, 0, -1, .5, .5, .5, .5});
                   Depthwise2dParams p;
                   p.window.kernel_h = p.window.kernel_w = 2;
                   p.multiplier = 2;
                   Tensor y(DType::f32, {1, 2, 2, 2});
                   depthwise2d(x, w, Tensor(), y, p);
                   return compare(y, {-4, -4, -4, -4, 6, 8, 12, 14});
                 }});
}

void add_matmul_elementwise_cases(std::vector<SelftestCase>& out) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; + [1,-1]; + old 1.
  out.push_back({"matmul", "-", "bias and result_add", [] {
                   Tensor a = Tensor::from<float>({2, 2}, {1, 2, 3, 4});
                   Tensor b = Tensor::from<float>({2, 2}, {5, 6, 7, 8});
                   Tensor bias = Tensor::from<float>({2}, {1, -1});
                   Tensor y = Tensor::from<float>({2, 2}, {1, 1, 1, 1});
                   matmul(a, b, bias, y, {true, true});
                   return compare(y, {21, 22, 45, 50});
                 }});
  // torch.relu is max(x, 0): NaN and -0 pass through (torch 1.13: relu(-0.0) is -0.0).
  out.push_back({"relu", "pytorch", "NaN propagates, -0 stays -0", [] {
                   Tensor x = Tensor::from<float>({5}, {-1, 0, 2, kNaN, -0.0f});
                   Tensor y(DType::f32, {5});
                   relu(x, y);
                   std::string r = compare(y, {0, 0, 2, kNaN, 0});
                   return r.empty() && !std::signbit(y.data<float>()[4]) ? "-0 became +0" : r;
                 }});
  out.push_back({"relu", "bm1684", "NaN gives +0", [] {
                   Tensor x = Tensor::from<float>({5}, {-1, 0, 2, kNaN, -0.0f});
                   Tensor y(DType::f32, {5});
                   ElementwiseParams p;
                   p.relu_nan = ReluNaN::zero;
                   relu(x, y, p);
                   return compare(y, {0, 0, 2, 0, 0});
                 }});
  // x = [[1,2],[3,4]] over two channels, s = [2,-1], b = [1,10].
  out.push_back({"bias/scale/scale_bias", "-", "per-channel, result_add", [] {
                   Tensor x = Tensor::from<float>({1, 2, 1, 2}, {1, 2, 3, 4});
                   Tensor s = Tensor::from<float>({2}, {2, -1});
                   Tensor b = Tensor::from<float>({2}, {1, 10});
                   Tensor y(DType::f32, {1, 2, 1, 2});
                   bias(x, b, y);
                   std::string r = compare(y, {2, 3, 13, 14});
                   if (!r.empty()) return "bias: " + r;
                   scale(x, s, y);
                   r = compare(y, {2, 4, -3, -4});
                   if (!r.empty()) return "scale: " + r;
                   scale_bias(x, s, b, y, {true});
                   r = compare(y, {5, 9, 4, 2});  // old y (scale) + x*s + b
                   return r.empty() ? r : "scale_bias: " + r;
                 }});
}

}  // namespace

std::vector<SelftestCase> fp32_selftest_cases() {
  std::vector<SelftestCase> out;
  add_pool_cases(out);
  add_conv_cases(out);
  add_matmul_elementwise_cases(out);
  return out;
}

}  // namespace npukit::cli
