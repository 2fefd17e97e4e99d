// One test per documented hardware rule of the okk.h face (seed 004 remarks,
// docs/npu-simulator.md "The machine" and "Hardware rules checked on every call"): the
// violating call is made in exception mode and the message must name the
// kernel, the function, the parameter, the offending value and the rule.
// Death tests show the default behaviour: the message on stderr and exit 255.
// Each table row is its own test case (NpuRules/Rule.Violated/<row name>).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "npukit/compat/bm_atomic.h"
#include "npukit/compat/okk.h"
#include "npukit/npu/launch.hpp"
#include "npukit/npu/machine.hpp"
#include "npukit/npu/rules.hpp"

namespace npukit::npu {
namespace test_npu_rules {
namespace {

constexpr uint32_t S = 512 * 1024;  // bytes of local memory per NPU (BM1684)

// Writes 1.0f over a local tensor (aligned layout unless a stride is given),
// so that later reads are of written memory.
void fill(local_addr_t addr, dim4 shape, const dim4* stride = nullptr) {
  x32 one;
  one.fp32 = 1.0f;
  okk_gdma_32bit_set_C_local(addr, one, &shape, stride);
}
// A compact per-channel vector (1, c, 1, 1) at addr, written.
void fill_vector(local_addr_t addr, int c) {
  const dim4 shape{1, c, 1, 1};
  dim4 st;
  okk_compact_stride(&st, okk_start_npu_index(addr), &shape);
  fill(addr, shape, &st);
}
// A matrix (rows x cols, cpc columns per channel) at addr, written.
void fill_matrix(local_addr_t addr, int rows, int cols, int cpc) {
  fill(addr, dim4{rows, (cols + cpc - 1) / cpc, 1, cpc});
}

const dim4 k4x4{1, 2, 4, 4};

void conv(local_addr_t out, local_addr_t in, local_addr_t w, local_addr_t b, dim4 shape, int oc,
          int k, bool bias, const Padding* pad = nullptr, const dim2* st = nullptr,
          const dim2* dil = nullptr, bool result_add = false) {
  okk_bdc_conv2d(out, in, w, b, &shape, oc, k, k, nullptr, nullptr, bias, result_add, pad, st, dil);
}
void depthwise(local_addr_t out, local_addr_t in, local_addr_t w, local_addr_t b, dim4 shape, int k,
               bool bias, const Padding* pad = nullptr, const dim2* st = nullptr,
               const dim2* dil = nullptr) {
  okk_bdc_depthwise2d(out, in, w, b, &shape, k, k, bias, pad, st, dil);
}
// Valid operands for conv2d / depthwise (1, 2, 4, 4) with 3x3 kernels and
// matmul 2x8 * 8x8: input at 0, weights at 16384, bias at 32768.
void conv_operands() {
  fill(0, k4x4);
  const dim4 w2ic{1, 2, 1, 2 * 9};  // (ceil(2/2), OC=2, 3, 3) fp32 pairs, compact
  fill(16384, w2ic);
  fill_vector(32768, 2);
}
void depthwise_operands() {
  fill(0, k4x4);
  const dim4 w{1, 2, 3, 3};
  dim4 st;
  okk_compact_stride(&st, 0, &w);
  fill(16384, w, &st);
  fill_vector(32768, 2);
}
void matmul_operands() {
  fill_matrix(0, 2, 8, 8);      // left
  fill_matrix(16384, 8, 8, 8);  // right
  fill_matrix(32768, 1, 8, 8);  // bias
}

struct RuleCase {
  const char* name;  // test name: the rule and where it is shown
  std::function<void()> violate;
  std::vector<std::string> pieces;  // function, parameter, value, rule text
};

std::ostream& operator<<(std::ostream& os, const RuleCase& c) {
  return os << c.name;
}

const std::vector<RuleCase>& cases() {
  static const std::vector<RuleCase> all = {
      // ---- address divisibility ----
      {"relu_dst_addr_divisible_by_4",
       [] {
         fill(0, k4x4);
         okk_bdc_relu(4098, 0, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'dst_addr' = 4098 (0x1002)", "divisible by 4"}},
      {"relu_src_addr_divisible_by_4",
       [] { okk_bdc_relu(0, 4097, &k4x4, nullptr, nullptr); },
       {"okk_bdc_relu", "'src_addr' = 4097", "divisible by 4"}},
      {"bias_bias_addr_divisible_by_4",
       [] {
         fill(0, k4x4);
         okk_bdc_bias(8192, 0, 16386, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_bias", "'bias_addr' = 16386", "divisible by 4"}},
      {"scale_scale_addr_divisible_by_4",
       [] {
         fill(0, k4x4);
         okk_bdc_scale(8192, 0, 16387, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_scale", "'scale_addr' = 16387", "divisible by 4"}},
      {"conv2d_output_addr_divisible_by_128",
       [] {
         conv_operands();
         conv(65536 + 64, 0, 16384, 32768, k4x4, 2, 3, true);
       },
       {"okk_bdc_conv2d", "'output_addr' = 65600 (0x10040)", "divisible by 128"}},
      {"conv2d_input_addr_divisible_by_4",
       [] { conv(65536, 2, 16384, 32768, k4x4, 2, 3, true); },
       {"okk_bdc_conv2d", "'input_addr' = 2", "divisible by 4"}},
      {"conv2d_weight_addr_divisible_by_4",
       [] { conv(65536, 0, 16385, 32768, k4x4, 2, 3, true); },
       {"okk_bdc_conv2d", "'weight_addr' = 16385", "divisible by 4"}},
      {"conv2d_bias_addr_divisible_by_4",
       [] {
         conv_operands();
         conv(65536, 0, 16384, 32769, k4x4, 2, 3, true);
       },
       {"okk_bdc_conv2d", "'bias_addr' = 32769", "divisible by 4"}},
      {"depthwise_input_addr_divisible_by_128",
       [] { depthwise(65536, 64, 16384, 32768, k4x4, 3, true); },
       {"okk_bdc_depthwise2d", "'input_addr' = 64", "divisible by 128"}},
      {"depthwise_output_addr_divisible_by_128",
       [] { depthwise(65540, 0, 16384, 32768, k4x4, 3, true); },
       {"okk_bdc_depthwise2d", "'output_addr' = 65540", "divisible by 128"}},
      {"depthwise_weight_addr_divisible_by_4",
       [] { depthwise(65536, 0, 16386, 32768, k4x4, 3, true); },
       {"okk_bdc_depthwise2d", "'weight_addr' = 16386", "divisible by 4"}},
      {"avg_pool_input_addr_divisible_by_128",
       [] { okk_bdc_avg_pool2d(65536, 4, &k4x4, 2, 2, nullptr, nullptr); },
       {"okk_bdc_avg_pool2d", "'input_addr' = 4", "divisible by 128"}},
      {"max_pool_output_addr_divisible_by_128",
       [] { okk_bdc_max_pool2d(65536 + 4, 0, &k4x4, 2, 2, nullptr, nullptr); },
       {"okk_bdc_max_pool2d", "'output_addr' = 65540", "divisible by 128"}},
      {"matmul_left_addr_divisible_by_128",
       [] { okk_bdc_matmul(65536, 4, 16384, 0, 2, 8, 8, 8, 8, false, false); },
       {"okk_bdc_matmul", "'left_addr' = 4", "divisible by 128"}},
      {"matmul_right_addr_divisible_by_128",
       [] { okk_bdc_matmul(65536, 0, 16384 + 8, 0, 2, 8, 8, 8, 8, false, false); },
       {"okk_bdc_matmul", "'right_addr' = 16392", "divisible by 128"}},
      {"matmul_output_addr_divisible_by_128",
       [] { okk_bdc_matmul(65536 + 12, 0, 16384, 0, 2, 8, 8, 8, 8, false, false); },
       {"okk_bdc_matmul", "'output_addr' = 65548", "divisible by 128"}},
      {"matmul_bias_addr_divisible_by_128",
       [] {
         matmul_operands();
         okk_bdc_matmul(65536, 0, 16384, 32768 + 4, 2, 8, 8, 8, 8, true, false);
       },
       {"okk_bdc_matmul", "'bias_addr' = 32772", "divisible by 128"}},
      {"gdma_local_addr_divisible_by_element_size",
       [] {
         const dim4 s{1, 1, 1, 4};
         x32 v;
         v.u32 = 0;
         okk_gdma_32bit_set_C_local(2, v, &s, nullptr);
       },
       {"okk_gdma_32bit_set_C_local", "'dst_addr' = 2", "divisible by 4"}},
      // ---- tensors that must start on the same NPU ----
      {"relu_src_same_npu_as_dst",
       [] {
         fill(S, k4x4);
         okk_bdc_relu(4096, S, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'src_addr' = 524288 (starts on NPU 1)", "same NPU as dst_addr (NPU 0)"}},
      {"bias_bias_same_npu_as_dst",
       [] {
         fill(0, k4x4);
         okk_bdc_bias(8192, 0, 2 * S + 16384, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_bias", "'bias_addr'", "starts on NPU 2", "same NPU as dst_addr (NPU 0)"}},
      {"scale_bias_scale_same_npu_as_dst",
       [] {
         fill(0, k4x4);
         okk_bdc_scale_bias(8192, 0, 3 * S + 16384, 16384, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_scale_bias", "'scale_addr'", "starts on NPU 3", "same NPU as dst_addr"}},
      {"conv2d_weight_same_npu_as_output",
       [] { conv(65536, 0, 5 * S + 16384, 32768, k4x4, 2, 3, true); },
       {"okk_bdc_conv2d", "'weight_addr'", "starts on NPU 5", "same NPU as output_addr (NPU 0)"}},
      {"conv2d_bias_same_npu_as_output",
       [] {
         conv_operands();
         fill_vector(7 * S + 32768, 2);
         conv(65536, 0, 16384, 7 * S + 32768, k4x4, 2, 3, true);
       },
       {"okk_bdc_conv2d", "'bias_addr'", "starts on NPU 7", "same NPU as output_addr"}},
      {"depthwise_input_same_npu_as_output",
       [] { depthwise(65536, 9 * S, 16384, 32768, k4x4, 3, true); },
       {"okk_bdc_depthwise2d", "'input_addr'", "starts on NPU 9", "same NPU as output_addr"}},
      {"depthwise_weight_same_npu_as_output",
       [] { depthwise(65536, 0, 9 * S + 16384, 32768, k4x4, 3, true); },
       {"okk_bdc_depthwise2d", "'weight_addr'", "starts on NPU 9", "same NPU as output_addr"}},
      {"depthwise_bias_same_npu_as_output",
       [] {
         depthwise_operands();
         fill_vector(9 * S + 32768, 2);
         depthwise(65536, 0, 16384, 9 * S + 32768, k4x4, 3, true);
       },
       {"okk_bdc_depthwise2d", "'bias_addr'", "starts on NPU 9", "same NPU as output_addr"}},
      {"avg_pool_input_same_npu_as_output",
       [] { okk_bdc_avg_pool2d(65536, 4 * S, &k4x4, 2, 2, nullptr, nullptr); },
       {"okk_bdc_avg_pool2d", "'input_addr'", "starts on NPU 4", "same NPU as output_addr"}},
      {"matmul_right_same_npu_as_output",
       [] { okk_bdc_matmul(65536, 0, 6 * S + 16384, 0, 2, 8, 8, 8, 8, false, false); },
       {"okk_bdc_matmul", "'right_addr'", "starts on NPU 6", "same NPU as output_addr"}},
      {"matmul_bias_same_npu_as_output",
       [] {
         matmul_operands();
         okk_bdc_matmul(65536, 0, 16384, 6 * S + 32768, 2, 8, 8, 8, 8, true, false);
       },
       {"okk_bdc_matmul", "'bias_addr'", "starts on NPU 6", "same NPU as output_addr"}},
      {"binary_src1_same_npu_as_dst",
       [] {
         fill(0, k4x4);
         fill(S + 8192, k4x4);
         okk_bdc_add(16384, 0, S + 8192, &k4x4, nullptr, nullptr, nullptr);
       },
       {"okk_bdc_add", "'src1_addr'", "starts on NPU 1", "same NPU as dst_addr"}},
      // ---- shape ranges ----
      {"shape_n_at_most_65535",
       [] {
         const dim4 s{65536, 1, 1, 1};
         okk_bdc_relu(0, 0, &s, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'shape->n' = 65536", "[1, 65535]"}},
      {"shape_c_at_most_4095",
       [] {
         const dim4 s{1, 4096, 1, 1};
         okk_bdc_relu(0, 0, &s, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'shape->c' = 4096", "[1, 4095]"}},
      {"shape_h_at_least_1",
       [] {
         const dim4 s{1, 1, 0, 1};
         okk_bdc_scale(0, 0, 4096, &s, nullptr, nullptr);
       },
       {"okk_bdc_scale", "'shape->h' = 0", "[1, 65535]"}},
      {"shape_w_at_most_65535",
       [] {
         const dim4 s{1, 1, 1, 65536};
         okk_bdc_add(0, 0, 0, &s, nullptr, nullptr, nullptr);
       },
       {"okk_bdc_add", "'shape->w' = 65536", "[1, 65535]"}},
      {"nn_input_h_at_most_2047",
       [] {
         const dim4 s{1, 1, 2048, 1};
         okk_bdc_max_pool2d(0, 4096, &s, 1, 1, nullptr, nullptr);
       },
       {"okk_bdc_max_pool2d", "'input_shape->h' = 2048", "[1, 2047]"}},
      {"nn_input_w_at_least_1",
       [] {
         conv(65536, 0, 16384, 0, dim4{1, 2, 4, 0}, 2, 1, false);
       },
       {"okk_bdc_conv2d", "'input_shape->w' = 0", "[1, 2047]"}},
      {"nn_input_c_at_most_4095",
       [] {
         depthwise(65536, 0, 16384, 0, dim4{1, 4096, 1, 1}, 1, false);
       },
       {"okk_bdc_depthwise2d", "'input_shape->c' = 4096", "[1, 4095]"}},
      {"nn_input_n_at_least_1",
       [] {
         const dim4 s{0, 1, 4, 4};
         okk_bdc_avg_pool2d(65536, 0, &s, 2, 2, nullptr, nullptr);
       },
       {"okk_bdc_avg_pool2d", "'input_shape->n' = 0", "[1, 65535]"}},
      {"pool_input_c_at_most_4095",
       [] {
         const dim4 s{1, 4096, 2, 2};
         fill(0, s);
         okk_bdc_avg_pool2d(65536, 0, &s, 2, 2, nullptr, nullptr);
       },
       {"okk_bdc_avg_pool2d", "'input_shape->c' = 4096", "[1, 4095]"}},
      // fp32 arithmetic: the vendor's C-model asserts on more than 4095
      // channels when every stride is NULL and computes them all when any
      // one is given (probed with mul_C, add, add_C; the kit's own avg_pool
      // demo relies on it for 5120 channels).
      {"arith_c_at_most_4095_between_default_layouts",
       [] {
         const dim4 s{1, 4096, 1, 1};
         fill(0, s);
         okk_bdc_mul_C(65536, 0, 3.0f, &s, nullptr, nullptr);
       },
       {"okk_bdc_mul_C", "'shape->c' = 4096", "[1, 4095]"}},
      {"arith_c_at_most_4095_with_a_stride",
       [] {
         const dim4 s{1, 4096, 1, 1};
         dim4 st;
         okk_128_byte_aligned_stride_for_32bit(&st, 0, &s);
         fill(0, s);
         okk_bdc_mul_C(65536, 0, 3.0f, &s, &st, nullptr);
       },
       {"okk_bdc_mul_C", "'shape->c' = 4096", "[1, 4095]"}},
      {"gdma_c_at_most_65535_between_default_layouts",
       [] {
         const uint64_t g = machine().allocate(65536 * 4);
         const dim4 s{1, 65536, 1, 1};
         okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
       },
       {"okk_gdma_32bit_cpy_S2L", "'shape->c' = 65536", "[1, 65535]"}},
      {"gdma_c_at_most_65535_with_a_stride",
       [] {
         const uint64_t g = machine().allocate(65536 * 4);
         const dim4 s{1, 65536, 1, 1}, sys{65536, 1, 1, 1};
         okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, &sys);
       },
       {"okk_gdma_32bit_cpy_S2L", "'shape->c' = 65536", "[1, 65535]"}},
      {"matrix_cols_per_channel_at_most_cols",
       [] {
         const uint64_t g = machine().allocate(6 * 4);
         okk_gdma_32bit_matrix_S2L(0, g, 2, 3, 8, 3);
       },
       {"okk_gdma_32bit_matrix_S2L", "'cols_per_channel' = 8", "[1, 3]"}},
      {"conv2d_output_c_at_most_4095",
       [] { conv(65536, 0, 16384, 0, k4x4, 4096, 1, false); },
       {"okk_bdc_conv2d", "'output_c' = 4096", "[1, 4095]"}},
      {"matmul_left_rows_at_most_65535",
       [] { okk_bdc_matmul(65536, 0, 16384, 0, 65536, 8, 8, 8, 8, false, false); },
       {"okk_bdc_matmul", "'left_rows' = 65536", "[1, 65535]"}},
      {"matmul_left_cols_per_channel_at_most_128",
       [] { okk_bdc_matmul(65536, 0, 16384, 0, 2, 300, 8, 129, 8, false, false); },
       {"okk_bdc_matmul", "'left_cols_per_channel' = 129", "[1, 128]"}},
      {"matmul_right_cols_per_channel_at_most_right_cols",
       [] { okk_bdc_matmul(65536, 0, 16384, 0, 2, 8, 8, 8, 9, false, false); },
       {"okk_bdc_matmul", "'right_cols_per_channel' = 9", "[1, 8]"}},
      {"matmul_left_channels_at_most_4095",
       [] { okk_bdc_matmul(65536, 0, 16384, 0, 1, 4096, 8, 1, 8, false, false); },
       {"okk_bdc_matmul", "'ceil(left_cols / left_cols_per_channel)' = 4096", "[1, 4095]"}},
      {"matmul_right_channels_at_most_4095",
       [] { okk_bdc_matmul(65536, 0, 16384, 0, 1, 8, 8191, 8, 2, false, false); },
       {"okk_bdc_matmul", "'ceil(right_cols / right_cols_per_channel)' = 4096", "[1, 4095]"}},
      // ---- pad / stride / dilation ranges ----
      {"conv2d_padding_left_at_most_15",
       [] {
         const Padding pad{0, 0, 16, 0};
         conv(65536, 0, 16384, 0, k4x4, 2, 3, false, &pad);
       },
       {"okk_bdc_conv2d", "'padding->left' = 16", "[0, 15]"}},
      {"conv2d_padding_bottom_not_negative",
       [] {
         const Padding pad{0, -1, 0, 0};
         conv(65536, 0, 16384, 0, k4x4, 2, 3, false, &pad);
       },
       {"okk_bdc_conv2d", "'padding->bottom' = -1", "[0, 15]"}},
      {"conv2d_stride_w_at_most_15",
       [] {
         const dim2 st{1, 16};
         conv(65536, 0, 16384, 0, k4x4, 2, 3, false, nullptr, &st);
       },
       {"okk_bdc_conv2d", "'stride->w' = 16", "[1, 15]"}},
      {"conv2d_dilation_h_at_least_1",
       [] {
         const dim2 dil{0, 1};
         conv(65536, 0, 16384, 0, k4x4, 2, 3, false, nullptr, nullptr, &dil);
       },
       {"okk_bdc_conv2d", "'dilation->h' = 0", "[1, 15]"}},
      {"conv2d_dilation_w_at_most_15",
       [] {
         const dim2 dil{1, 16};
         conv(65536, 0, 16384, 0, dim4{1, 2, 4, 2000}, 2, 3, false, nullptr, nullptr, &dil);
       },
       {"okk_bdc_conv2d", "'dilation->w' = 16", "[1, 15]"}},
      {"depthwise_padding_right_at_most_15",
       [] {
         const Padding pad{0, 0, 0, 16};
         depthwise(65536, 0, 16384, 0, k4x4, 3, false, &pad);
       },
       {"okk_bdc_depthwise2d", "'padding->right' = 16", "[0, 15]"}},
      {"depthwise_stride_h_at_most_15",
       [] {
         const dim2 st{16, 1};
         depthwise(65536, 0, 16384, 0, k4x4, 3, false, nullptr, &st);
       },
       {"okk_bdc_depthwise2d", "'stride->h' = 16", "[1, 15]"}},
      {"depthwise_dilation_w_at_most_15",
       [] {
         const dim2 dil{1, 16};
         depthwise(65536, 0, 16384, 0, k4x4, 1, false, nullptr, nullptr, &dil);
       },
       {"okk_bdc_depthwise2d", "'dilation->w' = 16", "[1, 15]"}},
      {"avg_pool_padding_top_at_most_15",
       [] {
         const Padding pad{16, 0, 0, 0};
         okk_bdc_avg_pool2d(65536, 0, &k4x4, 2, 2, &pad, nullptr);
       },
       {"okk_bdc_avg_pool2d", "'padding->top' = 16", "[0, 15]"}},
      {"max_pool_stride_w_at_least_1",
       [] {
         const dim2 st{1, 0};
         okk_bdc_max_pool2d(65536, 0, &k4x4, 2, 2, nullptr, &st);
       },
       {"okk_bdc_max_pool2d", "'stride->w' = 0", "[1, 15]"}},
      // ---- output size limits ----
      {"padded_input_h_at_most_2047",
       [] {
         const Padding pad{5, 5, 0, 0};
         const dim4 s{1, 1, 2040, 4};
         okk_bdc_avg_pool2d(0, 0, &s, 1, 1, &pad, nullptr);
       },
       {"okk_bdc_avg_pool2d", "'input_shape->h + padding->top + padding->bottom' = 2050",
        "[1, 2047]"}},
      {"padded_input_w_at_most_2047",
       [] {
         const Padding pad{0, 0, 15, 1};
         conv(65536, 0, 16384, 0, dim4{1, 2, 1, 2032}, 2, 1, false, &pad);
       },
       {"okk_bdc_conv2d", "'input_shape->w + padding->left + padding->right' = 2048", "[1, 2047]"}},
      {"kernel_h_extent_within_padded_input",
       [] { okk_bdc_max_pool2d(65536, 0, &k4x4, 5, 1, nullptr, nullptr); },
       {"okk_bdc_max_pool2d", "'kernel_h' = 5 (extent 5)", "padded input height 4"}},
      {"dilated_kernel_w_extent_within_padded_input",
       [] {
         const dim2 dil{1, 2};
         depthwise(65536, 0, 16384, 0, k4x4, 3, false, nullptr, nullptr, &dil);
       },
       {"okk_bdc_depthwise2d", "'kernel_w' = 3 (extent 5)", "padded input width 4"}},
      // ---- local-memory bounds ----
      {"local_tensor_ends_inside_npu_memory",
       [] {
         const dim4 s{1, 1, 1, 64};
         okk_bdc_relu(S - 128, S - 128, &s, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'dst_addr'", "ends at byte 524416", "inside the 524288 bytes"}},
      {"local_address_below_npus_times_size",
       [] {
         const dim4 s{1, 1, 1, 1};
         okk_bdc_relu(64 * S, 64 * S, &s, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'dst_addr' = 33554432", "a local address below 33554432"}},
      {"aligned_output_slots_inside_npu_memory",
       [] {
         // 130 output channels from NPU 0 need 3 slots of 64 KiB: 196608 bytes
         // from R = 393216 end past 512 KiB.
         conv_operands();
         const dim4 big{1, 2, 128, 128};
         fill(65536, big);
         okk_bdc_conv2d(393216, 65536, 16384, 0, &big, 130, 1, 1, nullptr, nullptr, false, false,
                        nullptr, nullptr, nullptr);
       },
       {"okk_bdc_conv2d", "'output_addr' = 393216", "ends at byte 589824"}},
      {"gdma_local_destination_inside_npu_memory",
       [] {
         const uint64_t g = machine().allocate(4096);
         const dim4 s{1, 1, 1, 1024};
         okk_gdma_32bit_cpy_S2L(S - 1024, g, &s, nullptr, nullptr);
       },
       {"okk_gdma_32bit_cpy_S2L", "'dst_addr'", "ends at byte 527360"}},
      {"system_tensor_inside_one_allocation",
       [] {
         const uint64_t g = machine().allocate(12);
         const dim4 s{1, 1, 1, 4};
         fill(0, s);
         okk_gdma_32bit_cpy_L2S(g, 0, &s, nullptr, nullptr);
       },
       {"okk_gdma_32bit_cpy_L2S", "'dst_addr'", "spanning 16 bytes",
        "allocation 0x100000000 (12 of its 12 bytes) + free space (4 bytes)",
        "inside one device memory allocation"}},
      {"system_tensor_inside_device_memory",
       [] {
         machine().allocate(12);
         const dim4 s{1, 1, 1, 4};
         fill(0, s);
         const uint64_t end = okk_global_mem_start_addr() + (4ull << 30);
         okk_gdma_32bit_cpy_L2S(end - 8, 0, &s, nullptr, nullptr);
       },
       {"okk_gdma_32bit_cpy_L2S", "'dst_addr' = 8589934584", "spanning 16 bytes",
        "inside device memory [4294967296, 8589934592), L2 SRAM or DTCM"}},
      // ---- reads of never-written local memory ----
      {"never_written_nn_input",
       [] {
         // Columns 0-2 of every row written in the layout of (1, 2, 4, 4): column 3 is not.
         const dim4 st{32, 32, 4, 1};
         fill(0, dim4{1, 2, 4, 3}, &st);
         okk_bdc_relu(65536, 0, &k4x4, nullptr, nullptr);
       },
       {"okk_bdc_relu", "'src_addr'", "element (0, 0, 0, 3) of local memory was never written"}},
      {"never_written_conv_weights",
       [] {
         fill(0, k4x4);
         conv(65536, 0, 16384, 0, k4x4, 2, 3, false);
       },
       {"okk_bdc_conv2d", "'weight_addr'", "element (0, 0, 0, 0) was never written"}},
      {"never_written_matmul_right_matrix",
       [] {
         fill_matrix(0, 2, 8, 8);
         okk_bdc_matmul(65536, 0, 16384, 0, 2, 8, 8, 8, 8, false, false);
       },
       {"okk_bdc_matmul", "'right_addr'", "matrix element (0, 0) was never written"}},
      {"never_written_old_output_of_result_add",
       [] {
         conv_operands();
         conv(65536, 0, 16384, 0, k4x4, 2, 3, false, nullptr, nullptr, nullptr, true);
       },
       {"okk_bdc_conv2d", "'output_addr'", "never written"}},
      {"never_written_gdma_source",
       [] {
         const uint64_t g = machine().allocate(64);
         const dim4 s{1, 1, 1, 16};
         okk_gdma_32bit_cpy_L2S(g, 4096, &s, nullptr, nullptr);
       },
       {"okk_gdma_32bit_cpy_L2S", "'src_addr' = 4096", "never written"}},
      // ---- forbidden overlap (npukit: the unit writes while it reads) ----
      {"pool_output_overlaps_input",
       [] {
         fill(0, k4x4);
         okk_bdc_max_pool2d(0, 0, &k4x4, 2, 2, nullptr, nullptr);
       },
       {"okk_bdc_max_pool2d", "'output_addr' = 0 (overlaps input_addr at 0)",
        "does not overlap input_addr"}},
      {"conv2d_output_overlaps_weights",
       [] {
         conv_operands();
         conv(16384, 0, 16384, 0, k4x4, 2, 3, false);
       },
       {"okk_bdc_conv2d", "'output_addr' = 16384 (overlaps weight_addr", "does not overlap"}},
      {"conv2d_output_overlaps_bias",
       [] {
         conv_operands();
         conv(32768, 0, 16384, 32768, k4x4, 2, 3, true);
       },
       {"okk_bdc_conv2d", "'output_addr' = 32768 (overlaps bias_addr", "does not overlap"}},
      {"depthwise_output_overlaps_weights",
       [] {
         depthwise_operands();
         depthwise(16384, 0, 16384 + 8, 0, k4x4, 3, false);
       },
       {"okk_bdc_depthwise2d", "(overlaps weight_addr at 16392)", "does not overlap weight_addr"}},
      {"depthwise_output_overlaps_bias",
       [] {
         depthwise_operands();
         depthwise(32768, 0, 16384, 32768, k4x4, 3, true);
       },
       {"okk_bdc_depthwise2d", "(overlaps bias_addr at 32768)", "does not overlap bias_addr"}},
      {"matmul_output_overlaps_left",
       [] {
         matmul_operands();
         okk_bdc_matmul(0, 0, 16384, 0, 2, 8, 8, 8, 8, false, false);
       },
       {"okk_bdc_matmul", "(overlaps left_addr at 0)", "does not overlap left_addr"}},
      {"matmul_output_overlaps_bias",
       [] {
         matmul_operands();
         okk_bdc_matmul(32768, 0, 16384, 32768, 2, 8, 8, 8, 8, true, false);
       },
       {"okk_bdc_matmul", "(overlaps bias_addr at 32768)", "does not overlap bias_addr"}},
      // ---- descriptors, parallel regions, assertions, helpers ----
      {"null_shape_descriptor",
       [] { okk_bdc_relu(0, 0, nullptr, nullptr, nullptr); },
       {"okk_bdc_relu", "'shape' = NULL", "a pointer to a descriptor"}},
      {"gdma_w_stride_is_one",
       [] {
         const uint64_t g = machine().allocate(256);
         const dim4 s{1, 1, 4, 4}, st{32, 32, 8, 2};
         okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, &st);
       },
       {"okk_gdma_32bit_cpy_S2L", "'src_stride' = w = 2", "w = 1"}},
      {"parallel_regions_do_not_nest",
       [] {
         okk_parallel_start();
         okk_parallel_start();
       },
       {"okk_parallel_start", "already in a parallel region", "do not nest"}},
      {"parallel_end_needs_a_start",
       [] { okk_parallel_end(); },
       {"okk_parallel_end", "not in a parallel region", "after okk_parallel_start"}},
      {"okkernel_assert",
       [] { OKKERNEL_ASSERT(2 + 2 == 5); },
       {"OKKERNEL_ASSERT", "2 + 2 == 5 is false", "a true assertion"}},
      {"stride_helper_start_npu_in_range",
       [] {
         dim4 st;
         const dim4 s{1, 1, 1, 1};
         okk_128_byte_aligned_stride_for_32bit(&st, 64, &s);
       },
       {"okk_128_byte_aligned_stride_for_32bit", "'start_idx' = 64", "[0, 63]"}},
      {"local_mem_addr_npu_index_in_range",
       [] { okk_local_mem_addr(64, 0); },
       {"okk_local_mem_addr", "'idx' = 64", "[0, 63]"}},
      {"atomic_pool_stride_at_most_15",
       [] {
         PoolParam p;
         std::memset(&p, 0, sizeof p);
         p.output_addr = 65536;
         p.input_shape[0] = p.input_shape[1] = 1;
         p.input_shape[2] = p.input_shape[3] = 4;
         p.kernel_h = p.kernel_w = 2;
         p.stride_h = 16;
         p.stride_w = 1;
         bm_atomic_avg_pool(&p);
       },
       {"bm_atomic_avg_pool", "'stride_h' = 16", "[1, 15]"}},
  };
  return all;
}

class RuleFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    select_machine(bm1684_config());
    set_violation_mode(ViolationMode::throw_error);
    // Strict: every rule, warnings included, throws (Rule.Violated); the
    // class tests below switch back to the lenient default.
    set_strict_rules(true);
    clear_warnings();
    begin_launch("rules_kernel");
  }
  void TearDown() override {
    end_launch();
    reset_strict_rules();
  }
};

class Rule : public RuleFixture, public ::testing::WithParamInterface<RuleCase> {};

TEST_P(Rule, Violated) {
  const RuleCase& c = GetParam();
  try {
    c.violate();
    ADD_FAILURE() << c.name << ": no violation reported";
  } catch (const RuleViolation& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kernel(), "rules_kernel");
    EXPECT_EQ(msg.rfind("kernel 'rules_kernel': ", 0), 0u) << msg;
    for (const std::string& p : c.pieces)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(NpuRules, Rule, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& i) {
                           return std::string(i.param.name);
                         });

// ---- rule classes (docs/npu-simulator.md, "Rule classes") -----------------
// Warnings: documented limits the vendor's simulator accepts (probed) and
// reads of never-written local memory. Every other case is an error.
const std::vector<std::string>& warning_rules() {
  static const std::vector<std::string> w = {
      "pool_input_c_at_most_4095",
      "gdma_c_at_most_65535_with_a_stride",
      "arith_c_at_most_4095_with_a_stride",
      "matrix_cols_per_channel_at_most_cols",
      "matmul_left_cols_per_channel_at_most_128",
      "matmul_right_cols_per_channel_at_most_right_cols",
      "conv2d_dilation_w_at_most_15",
      "never_written_nn_input",
      "never_written_conv_weights",
      "never_written_matmul_right_matrix",
      "never_written_old_output_of_result_add",
      "never_written_gdma_source",
      "system_tensor_inside_one_allocation",
  };
  return w;
}

bool has_all(const std::string& msg, const std::vector<std::string>& pieces) {
  for (const std::string& p : pieces)
    if (msg.find(p) == std::string::npos) return false;
  return true;
}

// Lenient mode (the default): an error rule still stops the call; a warning
// rule does not stop it, prints once per kernel, function and parameter, and
// the call goes on.
TEST_P(Rule, ClassMatchesTheVendorsSimulator) {
  const RuleCase& c = GetParam();
  set_strict_rules(false);
  const auto& w = warning_rules();
  const bool warn = std::find(w.begin(), w.end(), c.name) != w.end();
  std::string thrown;
  try {
    c.violate();
  } catch (const RuleViolation& e) {
    thrown = e.what();
  }
  if (!warn) {
    EXPECT_TRUE(has_all(thrown, c.pieces)) << c.name << ": error rule did not stop: " << thrown;
    return;
  }
  EXPECT_FALSE(has_all(thrown, c.pieces)) << c.name << ": warning rule stopped: " << thrown;
  const std::vector<std::string> printed = warnings_printed();
  EXPECT_TRUE(std::any_of(printed.begin(), printed.end(),
                          [&](const std::string& m) { return has_all(m, c.pieces); }))
      << c.name << ": no warning printed";
  // Once: the same call again prints nothing new.
  try {
    c.violate();
  } catch (const RuleViolation&) {
  }
  EXPECT_EQ(warnings_printed().size(), printed.size()) << c.name;
}

// Every warning rule names a case of the table (a renamed case cannot make
// the class test above pass vacuously).
TEST(NpuRuleClasses, WarningRulesNameCases) {
  for (const std::string& w : warning_rules())
    EXPECT_TRUE(std::any_of(cases().begin(), cases().end(), [&](const RuleCase& c) {
      return w == c.name;
    })) << w;
}

// A warning prints again for another kernel, and what the call computes is
// what the vendor's simulator computes: pooling 8192 channels and a copy of
// 131072 channels with a system stride.
TEST_F(RuleFixture, WarningsComputeAndPrintOncePerKernel) {
  set_strict_rules(false);
  const int C = 8192;
  const dim4 in{1, C, 2, 2}, out{1, C, 1, 1};
  std::vector<float> x(static_cast<size_t>(C) * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) * 0.5f;
  const uint64_t gx = machine().allocate(x.size() * 4), gy = machine().allocate(C * 4);
  std::memcpy(machine().global(gx, x.size() * 4), x.data(), x.size() * 4);
  okk_gdma_32bit_cpy_S2L(0, gx, &in, nullptr, nullptr);
  okk_bdc_avg_pool2d(262144, 0, &in, 2, 2, nullptr, nullptr);
  okk_gdma_32bit_cpy_L2S(gy, 262144, &out, nullptr, nullptr);
  const float* y = reinterpret_cast<const float*>(machine().global(gy, C * 4));
  int bad = 0;
  for (int c = 0; c < C; ++c) {
    // bm1684 avg pool: A[t%2] += x*0.25f, result A0 + A1 (exact here).
    const float* v = x.data() + 4 * c;
    const float want = (v[0] * 0.25f + v[2] * 0.25f) + (v[1] * 0.25f + v[3] * 0.25f);
    bad += y[c] != want;
  }
  EXPECT_EQ(bad, 0);
  ASSERT_EQ(warnings_printed().size(), 1u);
  okk_bdc_avg_pool2d(262144, 0, &in, 2, 2, nullptr, nullptr);
  EXPECT_EQ(warnings_printed().size(), 1u);
  end_launch();
  begin_launch("another_kernel");
  okk_bdc_avg_pool2d(262144, 0, &in, 2, 2, nullptr, nullptr);
  ASSERT_EQ(warnings_printed().size(), 2u);
  EXPECT_NE(warnings_printed()[1].find("kernel 'another_kernel'"), std::string::npos);

  // 131072 channels through a system stride, and back.
  const int C2 = 131072;
  const dim4 s2{1, C2, 1, 1}, sys{C2, 1, 1, 1};
  const uint64_t ga = machine().allocate(C2 * 4), gb = machine().allocate(C2 * 4);
  auto* a = reinterpret_cast<uint32_t*>(machine().global(ga, C2 * 4));
  for (int i = 0; i < C2; ++i) a[i] = 0x9E3779B9u * static_cast<uint32_t>(i);
  okk_gdma_32bit_cpy_S2L(0, ga, &s2, nullptr, &sys);
  okk_gdma_32bit_cpy_L2S(gb, 0, &s2, &sys, nullptr);
  EXPECT_EQ(std::memcmp(machine().global(gb, C2 * 4), a, C2 * 4), 0);
}

// 5120 channels through mul_C, add and add_C with a stride given compute every
// channel, as the vendor's C-model does (its probe: 0 of 30720 outputs wrong).
TEST_F(RuleFixture, WideArithmeticWithAStrideComputesEveryChannel) {
  set_strict_rules(false);
  const int C = 5120;
  const dim4 s{1, C, 2, 3};
  dim4 st;
  okk_128_byte_aligned_stride_for_32bit(&st, 0, &s);
  const size_t n = static_cast<size_t>(C) * 6;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) * 0.25f;
  const uint64_t gx = machine().allocate(n * 4), gy = machine().allocate(n * 4);
  std::memcpy(machine().global(gx, n * 4), x.data(), n * 4);
  okk_gdma_32bit_cpy_S2L(0, gx, &s, &st, nullptr);
  okk_bdc_mul_C(163840, 0, 3.0f, &s, &st, &st);
  okk_bdc_add(327680, 163840, 0, &s, nullptr, &st, nullptr);
  okk_bdc_add_C(327680, 327680, 0.5f, &s, nullptr, &st);
  okk_gdma_32bit_cpy_L2S(gy, 327680, &s, nullptr, &st);
  const float* y = reinterpret_cast<const float*>(machine().global(gy, n * 4));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += y[i] != x[i] * 3.0f + x[i] + 0.5f;
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(warnings_printed().size(), 3u);  // one per function
}

// A never-written read sees the vendor's initial local memory, 0xDEADBEEF words.
TEST_F(RuleFixture, NeverWrittenMemoryReadsAsDeadBeef) {
  set_strict_rules(false);
  const uint64_t g = machine().allocate(64);
  const dim4 s{1, 2, 1, 8};
  okk_gdma_32bit_cpy_L2S(g, 4096, &s, nullptr, nullptr);
  const auto* w = reinterpret_cast<const uint32_t*>(machine().global(g, 64));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(w[i], 0xDEADBEEFu) << i;
}

// exp's documented source range [-103, 88] is a warning: the call computes
// from the clamped value (200 -> 88, -500 -> -103), in range values as usual.
TEST_F(RuleFixture, SeriesValueRangeWarnsAndClamps) {
  set_strict_rules(false);
  const dim4 s{1, 1, 1, 4};
  const std::vector<float> x{200.0f, -500.0f, 1.5f, 88.0f}, clamped{88.0f, -103.0f, 1.5f, 88.0f};
  auto run_exp = [&](const std::vector<float>& v) {
    const uint64_t g = machine().allocate(16), o = machine().allocate(16);
    std::memcpy(machine().global(g, 16), v.data(), 16);
    okk_gdma_32bit_cpy_S2L(0, g, &s, nullptr, nullptr);
    okk_bdc_exp(4096, 0, 8192, &s);
    okk_gdma_32bit_cpy_L2S(o, 4096, &s, nullptr, nullptr);
    std::vector<uint32_t> bits(4);
    std::memcpy(bits.data(), machine().global(o, 16), 16);
    return bits;
  };
  const std::vector<uint32_t> got = run_exp(x);
  ASSERT_EQ(warnings_printed().size(), 1u);
  EXPECT_TRUE(has_all(warnings_printed()[0], {"okk_bdc_exp", "'src_addr'",
                                              "element (0, 0, 0, 0) = 200", "[-103.0, 88.0]"}))
      << warnings_printed()[0];
  EXPECT_EQ(got, run_exp(clamped));
}

// L2 SRAM sits at the vendor's address and the GDMA reaches it as system
// memory (published kernels stage data there with S2S, S2L and L2S copies).
TEST_F(RuleFixture, L2SramIsSystemMemoryToTheGdma) {
  EXPECT_EQ(okk_l2_sram_start_addr(), 0x100a2000u);
  EXPECT_EQ(okk_l2_sram_size(), 2482176u);
  const dim4 s{1, 3, 2, 5};
  std::vector<float> x(30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 7.25f;
  const uint64_t g = machine().allocate(120), o = machine().allocate(120);
  std::memcpy(machine().global(g, 120), x.data(), 120);
  const uint64_t l2 = okk_l2_sram_start_addr() + 4096;
  okk_gdma_32bit_cpy_S2S(l2, g, &s, nullptr, nullptr);
  okk_gdma_32bit_cpy_S2L(0, l2, &s, nullptr, nullptr);
  okk_gdma_32bit_cpy_L2S(o, 0, &s, nullptr, nullptr);
  EXPECT_EQ(std::memcmp(machine().global(o, 120), x.data(), 120), 0);
  // The last bytes of L2 SRAM are inside, one more is not.
  const dim4 one{1, 1, 1, 1};
  const uint64_t last = okk_l2_sram_start_addr() + okk_l2_sram_size() - 4;
  EXPECT_NO_THROW(okk_gdma_32bit_cpy_S2S(last, g, &one, nullptr, nullptr));
  EXPECT_THROW(okk_gdma_32bit_cpy_S2S(last + 4, g, &one, nullptr, nullptr), RuleViolation);
}

// The same operands, used legally, raise nothing: the rules are not stricter
// than documented (input and left matrix may start on any NPU, an output may
// reuse an offset on NPUs its operands do not use).
class RuleAccepts : public RuleFixture {};

TEST_F(RuleAccepts, DocumentedFreedomsAreAllowed) {
  conv_operands();
  // conv2d: the input starts on NPU 3 (only output, weight and bias must match).
  fill(3 * S, k4x4);
  EXPECT_NO_THROW(conv(65536, 3 * S, 16384, 32768, k4x4, 2, 3, true));
  // matmul: the left matrix starts on NPU 5.
  matmul_operands();
  fill_matrix(5 * S, 2, 8, 8);
  EXPECT_NO_THROW(okk_bdc_matmul(65536, 5 * S, 16384, 32768, 2, 8, 8, 8, 8, true, false));
  // conv2d output on NPUs 0-1 at offset 0, its input on NPUs 10-11 at offset 0.
  fill(10 * S + 0, k4x4);
  EXPECT_NO_THROW(conv(0, 10 * S, 16384, 32768, k4x4, 2, 3, true));
  // Element-wise functions may work in place.
  fill(131072, k4x4);
  EXPECT_NO_THROW(okk_bdc_relu(131072, 131072, &k4x4, nullptr, nullptr));
}

// ---- default mode: message on stderr, exit status 255 ----------------------

void in_exit_mode(const char* kernel, const std::function<void()>& f) {
  select_machine(bm1684_config());
  set_violation_mode(ViolationMode::exit_255);
  begin_launch(kernel);
  f();
  std::_Exit(0);  // not reached when the rule fires
}

TEST(NpuRulesDeath, SameNpuViolationExits255) {
  // Re-executed child: a forked one would inherit a dead OpenMP thread pool.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(in_exit_mode("k_same_npu",
                           [] {
                             fill(S, k4x4);
                             okk_bdc_relu(0, S, &k4x4, nullptr, nullptr);
                           }),
              ::testing::ExitedWithCode(255),
              "npukit NPU rule violated: kernel 'k_same_npu': okk_bdc_relu: parameter 'src_addr' "
              "= 524288 \\(starts on NPU 1\\) is not allowed \\(allowed: a tensor starting on the "
              "same NPU as dst_addr \\(NPU 0\\)\\)");
}

TEST(NpuRulesDeath, NeverWrittenReadWarnsOnceAndContinues) {
  // Re-executed child: a forked one would inherit a dead OpenMP thread pool.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(in_exit_mode("k_unwritten",
                           [] {
                             set_strict_rules(false);
                             okk_bdc_relu(65536, 0, &k4x4, nullptr, nullptr);
                             okk_bdc_relu(65536, 0, &k4x4, nullptr, nullptr);
                             if (warnings_printed().size() != 1) std::_Exit(3);
                           }),
              ::testing::ExitedWithCode(0),
              "npukit NPU rule warning: kernel 'k_unwritten': okk_bdc_relu: parameter 'src_addr' "
              "= 0: element \\(0, 0, 0, 0\\) of local memory was never written");
}

TEST(NpuRulesDeath, StrictNeverWrittenReadExits255) {
  // Re-executed child: a forked one would inherit a dead OpenMP thread pool.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(in_exit_mode("k_unwritten",
                           [] {
                             set_strict_rules(true);
                             okk_bdc_relu(65536, 0, &k4x4, nullptr, nullptr);
                           }),
              ::testing::ExitedWithCode(255),
              "npukit NPU rule violated: kernel 'k_unwritten': okk_bdc_relu: parameter 'src_addr' "
              "= 0: element \\(0, 0, 0, 0\\) of local memory was never written");
}

TEST(NpuRulesDeath, LegalCallDoesNotExit) {
  // Re-executed child: a forked one would inherit a dead OpenMP thread pool.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(in_exit_mode("k_legal",
                           [] {
                             fill(0, k4x4);
                             okk_bdc_relu(65536, 0, &k4x4, nullptr, nullptr);
                           }),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace test_npu_rules
}  // namespace npukit::npu
