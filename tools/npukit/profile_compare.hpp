// Run one quantized operator configuration under several semantics profiles
// and report which outputs differ, by how much and where (`npukit compare`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/ops/quantized.hpp"
#include "npukit/profile.hpp"
#include "npukit/tensor.hpp"

namespace npukit {

struct CompareConfig {
  // qlinear_average_pool, qlinear_global_average_pool, qlinear_add,
  // qlinear_conv (w: out_channels x C x kernel, window = the conv's geometry)
  // or qlinear_matmul (x (N, C, H, W) times b (W, out_channels)).
  std::string op = "qlinear_average_pool";
  DType dtype = DType::u8;    // s8 or u8
  Shape shape{1, 8, 16, 16};  // x (and b of qlinear_add), (N, C, H, W)
  Window2d window;            // pooling or convolution geometry (ONNX attributes)
  // qlinear_conv / qlinear_matmul: the weights are uniform random codes of
  // w_dtype (s8, or u8 with u8 x), zero point 0, scale w_scale.
  int64_t out_channels = 8;
  DType w_dtype = DType::s8;
  float w_scale = 0.01f;
  bool count_include_pad = true;
  float x_scale = 0.05f, y_scale = 0.05f, b_scale = 0.05f;
  int32_t x_zero_point = 0, y_zero_point = 0, b_zero_point = 0;
  uint64_t seed = 1;  // the input codes are uniform over the dtype's range
};

struct ProfileRun {
  Profile profile;
  std::string error;  // non-empty: the profile rejected the configuration (why)
  Tensor y;
};

struct ProfileDiff {
  Profile profile;           // compared with the first profile that ran
  int64_t differing = 0;     // elements whose codes differ
  int64_t max_abs_diff = 0;  // largest |code difference|
  std::vector<int64_t>
      histogram;      // histogram[d] = elements with |difference| = d (d <= 8; 9+ last)
  Shape first_index;  // (n, c, h, w) of the first difference
  int first_reference = 0, first_value = 0;
};

struct CompareReport {
  CompareConfig config;
  Tensor x;
  std::vector<ProfileRun> runs;
  std::vector<ProfileDiff> diffs;  // one per successful run after the reference
};

const std::vector<std::string>& compare_ops();
CompareReport compare_profiles(const CompareConfig& config, const std::vector<Profile>& profiles);
std::string format_compare_report(const CompareReport& report);

}  // namespace npukit
