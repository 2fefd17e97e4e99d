/* Contest-style device kernel (plain C): gated exponential
 *   y = x > 0 ? exp(-x) * 2^k : 0   (k = the int32 shift of 1 by `shift`)
 * through okk_bdc_exp, okk_bdc_greater_C_select_value, okk_bdc_32bit_*shift*,
 * okk_bdc_fixed_point_* and okk_bdc_mul; and a table holding the address of
 * every function okk.h declares, so that linking this file proves each one is
 * defined by npukit. */
#include "okk.h"

typedef struct {
  unsigned long long x_addr, y_addr, count_addr;
  int c, w, shift;
} __attribute__((packed)) gated_exp_param_t;

typedef void (*okk_any_fn)(void);

static const okk_any_fn every_okk_function[] = {
    (okk_any_fn)okk_128_byte_aligned_stride_for_16bit,
    (okk_any_fn)okk_128_byte_aligned_stride_for_32bit,
    (okk_any_fn)okk_128_byte_aligned_stride_for_8bit,
    (okk_any_fn)okk_assertion_failed,
    (okk_any_fn)okk_bdc_32bit_C_arithmetic_shift,
    (okk_any_fn)okk_bdc_32bit_C_logical_shift,
    (okk_any_fn)okk_bdc_32bit_and,
    (okk_any_fn)okk_bdc_32bit_and_C,
    (okk_any_fn)okk_bdc_32bit_arithmetic_shift,
    (okk_any_fn)okk_bdc_32bit_arithmetic_shift_C,
    (okk_any_fn)okk_bdc_32bit_cpy,
    (okk_any_fn)okk_bdc_32bit_logical_shift,
    (okk_any_fn)okk_bdc_32bit_logical_shift_C,
    (okk_any_fn)okk_bdc_32bit_or,
    (okk_any_fn)okk_bdc_32bit_or_C,
    (okk_any_fn)okk_bdc_32bit_set_C,
    (okk_any_fn)okk_bdc_32bit_xor,
    (okk_any_fn)okk_bdc_32bit_xor_C,
    (okk_any_fn)okk_bdc_4N_int8_to_fp32,
    (okk_any_fn)okk_bdc_C_div,
    (okk_any_fn)okk_bdc_C_greater_select_value,
    (okk_any_fn)okk_bdc_C_sub,
    (okk_any_fn)okk_bdc_add,
    (okk_any_fn)okk_bdc_add_C,
    (okk_any_fn)okk_bdc_avg_pool2d,
    (okk_any_fn)okk_bdc_bias,
    (okk_any_fn)okk_bdc_conv2d,
    (okk_any_fn)okk_bdc_depthwise2d,
    (okk_any_fn)okk_bdc_div,
    (okk_any_fn)okk_bdc_div_C,
    (okk_any_fn)okk_bdc_equal_C_select_value,
    (okk_any_fn)okk_bdc_equal_select,
    (okk_any_fn)okk_bdc_equal_select_value,
    (okk_any_fn)okk_bdc_exp,
    (okk_any_fn)okk_bdc_exp_tunable,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_C_arithmetic_shift,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_C_logical_shift,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_arithmetic_shift,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_arithmetic_shift_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_logical_shift,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_logical_shift_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_mul_8bit,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_split_high_8bit,
    (okk_any_fn)okk_bdc_fixed_point_packed_16bit_split_low_8bit,
    (okk_any_fn)okk_bdc_fixed_point_packed_C_sub,
    (okk_any_fn)okk_bdc_fixed_point_packed_add,
    (okk_any_fn)okk_bdc_fixed_point_packed_add_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_mac,
    (okk_any_fn)okk_bdc_fixed_point_packed_mac_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_max,
    (okk_any_fn)okk_bdc_fixed_point_packed_max_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_min,
    (okk_any_fn)okk_bdc_fixed_point_packed_min_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_mul,
    (okk_any_fn)okk_bdc_fixed_point_packed_mul_C,
    (okk_any_fn)okk_bdc_fixed_point_packed_s16_mul_u8_to_s16,
    (okk_any_fn)okk_bdc_fixed_point_packed_sub,
    (okk_any_fn)okk_bdc_fixed_point_packed_sub_C,
    (okk_any_fn)okk_bdc_fp32_to_int32,
    (okk_any_fn)okk_bdc_greater_C_select_value,
    (okk_any_fn)okk_bdc_greater_select,
    (okk_any_fn)okk_bdc_greater_select_value,
    (okk_any_fn)okk_bdc_int8_to_fp32,
    (okk_any_fn)okk_bdc_lookup_exp,
    (okk_any_fn)okk_bdc_lookup_int32_to_fp32,
    (okk_any_fn)okk_bdc_mac,
    (okk_any_fn)okk_bdc_mac_C,
    (okk_any_fn)okk_bdc_matmul,
    (okk_any_fn)okk_bdc_max,
    (okk_any_fn)okk_bdc_max_C,
    (okk_any_fn)okk_bdc_max_pool2d,
    (okk_any_fn)okk_bdc_min,
    (okk_any_fn)okk_bdc_min_C,
    (okk_any_fn)okk_bdc_mul,
    (okk_any_fn)okk_bdc_mul_C,
    (okk_any_fn)okk_bdc_neg,
    (okk_any_fn)okk_bdc_reciprocal,
    (okk_any_fn)okk_bdc_relu,
    (okk_any_fn)okk_bdc_rsqrt,
    (okk_any_fn)okk_bdc_scale,
    (okk_any_fn)okk_bdc_scale_bias,
    (okk_any_fn)okk_bdc_scale_bias_ra,
    (okk_any_fn)okk_bdc_scale_ra,
    (okk_any_fn)okk_bdc_sigmoid,
    (okk_any_fn)okk_bdc_sigmoid_tunable,
    (okk_any_fn)okk_bdc_sqrt,
    (okk_any_fn)okk_bdc_sub,
    (okk_any_fn)okk_bdc_sub_C,
    (okk_any_fn)okk_bdc_tanh,
    (okk_any_fn)okk_bdc_tanh_tunable,
    (okk_any_fn)okk_bdc_taylor_exp,
    (okk_any_fn)okk_channle_num_per_npu,
    (okk_any_fn)okk_compact_stride,
    (okk_any_fn)okk_continuous_stride,
    (okk_any_fn)okk_disable_check_id_node,
    (okk_any_fn)okk_dtcm_addr,
    (okk_any_fn)okk_dtcm_size,
    (okk_any_fn)okk_dtcm_start_addr,
    (okk_any_fn)okk_dump_registered_kernel_funcs,
    (okk_any_fn)okk_enable_check_id_node,
    (okk_any_fn)okk_eu_num,
    (okk_any_fn)okk_gdma_16bit_cpy_L2L,
    (okk_any_fn)okk_gdma_16bit_cpy_L2S,
    (okk_any_fn)okk_gdma_16bit_cpy_S2L,
    (okk_any_fn)okk_gdma_16bit_cpy_S2S,
    (okk_any_fn)okk_gdma_16bit_set_C_local,
    (okk_any_fn)okk_gdma_16bit_set_C_system,
    (okk_any_fn)okk_gdma_32bit_cpy_L2L,
    (okk_any_fn)okk_gdma_32bit_cpy_L2S,
    (okk_any_fn)okk_gdma_32bit_cpy_S2L,
    (okk_any_fn)okk_gdma_32bit_cpy_S2S,
    (okk_any_fn)okk_gdma_32bit_matrix_L2S,
    (okk_any_fn)okk_gdma_32bit_matrix_S2L,
    (okk_any_fn)okk_gdma_32bit_set_C_local,
    (okk_any_fn)okk_gdma_32bit_set_C_system,
    (okk_any_fn)okk_gdma_8bit_cpy_L2L,
    (okk_any_fn)okk_gdma_8bit_cpy_L2S,
    (okk_any_fn)okk_gdma_8bit_cpy_S2L,
    (okk_any_fn)okk_gdma_8bit_cpy_S2S,
    (okk_any_fn)okk_gdma_8bit_set_C_local,
    (okk_any_fn)okk_gdma_8bit_set_C_system,
    (okk_any_fn)okk_get_id_node,
    (okk_any_fn)okk_global_mem_addr,
    (okk_any_fn)okk_global_mem_start_addr,
    (okk_any_fn)okk_initialize,
    (okk_any_fn)okk_is_parallel_state,
    (okk_any_fn)okk_l2_sram_addr,
    (okk_any_fn)okk_l2_sram_size,
    (okk_any_fn)okk_l2_sram_start_addr,
    (okk_any_fn)okk_local_mem_addr,
    (okk_any_fn)okk_local_mem_bank_per_npu,
    (okk_any_fn)okk_local_mem_size_per_npu,
    (okk_any_fn)okk_local_mem_start_addr,
    (okk_any_fn)okk_lookup_table_size,
    (okk_any_fn)okk_lookup_table_start_addr,
    (okk_any_fn)okk_npu_num,
    (okk_any_fn)okk_parallel_end,
    (okk_any_fn)okk_parallel_start,
    (okk_any_fn)okk_poll,
    (okk_any_fn)okk_register_kernel_func,
    (okk_any_fn)okk_set_id_node,
    (okk_any_fn)okk_start_npu_index};

void gated_exp_contest(const void* args) {
  okk_initialize();
  const gated_exp_param_t* p = (const gated_exp_param_t*)args;
  const dim4 shape = {1, p->c, 1, p->w};
  dim4 stride;
  okk_128_byte_aligned_stride_for_32bit(&stride, 0, &shape);
  const unsigned bytes = ALIGN(stride.n * 4, 128);
  const local_addr_t x = 0, neg = x + bytes, e = neg + bytes, work = e + bytes, mask = work + bytes,
                     k = mask + bytes;
  OKKERNEL_ASSERT(k + bytes <= okk_local_mem_size_per_npu());
  okk_gdma_32bit_cpy_S2L(x, p->x_addr, &shape, NULL, NULL);
  okk_bdc_neg(neg, x, &shape, NULL, NULL);
  okk_bdc_exp(e, neg, work, &shape);
  x32 one;
  one.fp32 = 1.0f;
  okk_bdc_greater_C_select_value(mask, x, 0.0f, one, &shape, NULL, NULL);
  okk_bdc_mul(e, e, mask, &shape, NULL, NULL, NULL);
  /* 2^shift as fp32: the int32 1 shifted left, converted by the lookup cast
   * (shift < 7 keeps it in [-128, 127]); then multiply. */
  x32 c1;
  c1.s32 = 1;
  okk_bdc_32bit_set_C(k, c1, &shape, NULL);
  okk_bdc_32bit_arithmetic_shift_C(k, k, p->shift, &shape, NULL, NULL);
  okk_bdc_lookup_int32_to_fp32(k, k, &shape);
  okk_bdc_mul(e, e, k, &shape, NULL, NULL, NULL);
  okk_gdma_32bit_cpy_L2S(p->y_addr, e, &shape, NULL, NULL);
  /* Count the defined functions into device memory. */
  int defined = 0;
  for (unsigned i = 0; i < sizeof every_okk_function / sizeof every_okk_function[0]; ++i)
    defined += every_okk_function[i] != NULL;
  x32 n;
  n.s32 = defined;
  const dim4 one_shape = {1, 1, 1, 1};
  okk_gdma_32bit_set_C_system(p->count_addr, n, &one_shape, NULL);
}

OKKERNEL_FUNC_REGISTER(gated_exp_contest);
