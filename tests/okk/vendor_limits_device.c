/* Kernels that use what Sophgo's C-model accepts beyond the documented
 * limits, the way Sophgo's own demos and published contest kernels do
 * (docs/npu-simulator.md, "Rule classes"). Under npukit each limit prints one
 * warning and the kernel runs to the end; NPUKIT_OKK_STRICT=1 stops it.
 *
 * - wide_pool: the N images of a pool are folded into the channels (N*C up to
 *   8192 > 4095) and pooled by one okk_bdc_avg_pool2d / okk_bdc_max_pool2d,
 *   as Sophgo's ok_device_avg_pool.c does; the input is loaded with a system
 *   stride.
 * - wide_copy: one GDMA copy of 131072 channels (> 65535) with a system
 *   stride, in and out.
 * - wide_matmul: matrices whose cols_per_channel is wider than their columns
 *   (one channel per row, padded), left matrix cols_per_channel 128 < cols.
 * - partial_tiles: row tiles of a fixed height T; the last tile holds fewer
 *   image rows, and the pool runs over all T rows, reading rows that were
 *   never written; only the rows of the image are stored.
 * - past_allocation: vectors of `n` floats loaded and stored in whole 64-float
 *   rows, so the last row reads past the input allocation (device memory is
 *   one flat range on the vendor's C-model: a warning) and stays inside the
 *   output's 4 KiB; only the first n results are checked.
 * - dtcm_sum: a vector stored to the DTCM by GDMA, summed by the kernel's own
 *   C code through okk_dtcm_addr (published softmax kernels do this), the sum
 *   broadcast with a set-constant and stored. */
#include "okk.h"

static int min_int(int a, int b) {
  return a < b ? a : b;
}

typedef struct {
  int N, C, H, W, k, is_max;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) wide_pool_param_t;

void wide_pool(const void* args) {
  okk_initialize();
  const wide_pool_param_t* p = (const wide_pool_param_t*)args;
  const int c = p->N * p->C, oh = p->H - p->k + 1, ow = p->W - p->k + 1;
  const dim4 in_shape = {1, c, p->H, p->W}, out_shape = {1, c, oh, ow};
  const dim4 sys_in = {c * p->H * p->W, p->H * p->W, p->W, 1};
  const dim4 sys_out = {c * oh * ow, oh * ow, ow, 1};
  dim4 in_stride;
  okk_128_byte_aligned_stride_for_32bit(&in_stride, 0, &in_shape);
  const local_addr_t in_addr = 0, out_addr = ALIGN(in_stride.n * 4, 128);
  okk_gdma_32bit_cpy_S2L(in_addr, p->input_addr, &in_shape, NULL, &sys_in);
  const Padding pad = {0, 0, 0, 0};
  const dim2 stride = {1, 1};
  if (p->is_max)
    okk_bdc_max_pool2d(out_addr, in_addr, &in_shape, p->k, p->k, &pad, &stride);
  else
    okk_bdc_avg_pool2d(out_addr, in_addr, &in_shape, p->k, p->k, &pad, &stride);
  okk_gdma_32bit_cpy_L2S(p->output_addr, out_addr, &out_shape, &sys_out, NULL);
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(wide_pool);

typedef struct {
  int C;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) wide_copy_param_t;

void wide_copy(const void* args) {
  okk_initialize();
  const wide_copy_param_t* p = (const wide_copy_param_t*)args;
  const dim4 shape = {1, p->C, 1, 1}, sys = {p->C, 1, 1, 1};
  okk_gdma_32bit_cpy_S2L(0, p->input_addr, &shape, NULL, &sys);
  okk_gdma_32bit_cpy_L2S(p->output_addr, 0, &shape, &sys, NULL);
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(wide_copy);

typedef struct {
  int M, K, N, left_cpc, right_cpc;
  unsigned long long output_addr, left_addr, right_addr;
} __attribute__((packed)) wide_matmul_param_t;

static unsigned matrix_bytes(int rows, int cols, int cpc) {
  const dim4 shape = {rows, DIV_UP(cols, cpc), 1, cpc};
  dim4 stride;
  okk_128_byte_aligned_stride_for_32bit(&stride, 0, &shape);
  return ALIGN(stride.n * rows * 4, 128);
}

void wide_matmul(const void* args) {
  okk_initialize();
  const wide_matmul_param_t* p = (const wide_matmul_param_t*)args;
  const local_addr_t left = 0, right = matrix_bytes(p->M, p->K, p->left_cpc);
  const local_addr_t out = right + matrix_bytes(p->K, p->N, p->right_cpc);
  okk_gdma_32bit_matrix_S2L(left, p->left_addr, p->M, p->K, p->left_cpc, p->K);
  okk_gdma_32bit_matrix_S2L(right, p->right_addr, p->K, p->N, p->right_cpc, p->N);
  okk_bdc_matmul(out, left, right, 0, p->M, p->K, p->N, p->left_cpc, p->right_cpc, false, false);
  okk_gdma_32bit_matrix_L2S(p->output_addr, out, p->M, p->N, p->right_cpc, p->N);
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(wide_matmul);

typedef struct {
  int C, H, W, k, tile_rows; /* output rows per tile */
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) partial_tiles_param_t;

void partial_tiles(const void* args) {
  okk_initialize();
  const partial_tiles_param_t* p = (const partial_tiles_param_t*)args;
  const int oh = p->H - p->k + 1, ow = p->W - p->k + 1, T = p->tile_rows;
  const dim4 tile_in = {1, p->C, T + p->k - 1, p->W};
  dim4 in_stride;
  okk_128_byte_aligned_stride_for_32bit(&in_stride, 0, &tile_in);
  /* High in local memory, where the other kernels of the test do not write. */
  const local_addr_t in_addr = 393216, out_addr = in_addr + ALIGN(in_stride.n * 4, 128);
  const dim4 sys_in = {p->C * p->H * p->W, p->H * p->W, p->W, 1};
  const dim4 sys_out = {p->C * oh * ow, oh * ow, ow, 1};
  const Padding pad = {0, 0, 0, 0};
  const dim2 stride = {1, 1};
  for (int r = 0; r < oh; r += T) {
    /* Rows of the image this tile holds; a short last tile leaves the rest
     * of the buffer as it was (never written in the first kernel run). */
    const int rows = min_int(T + p->k - 1, p->H - r), out_rows = min_int(T, oh - r);
    const dim4 load = {1, p->C, rows, p->W};
    okk_gdma_32bit_cpy_S2L(in_addr, p->input_addr + 4ull * r * p->W, &load, &in_stride, &sys_in);
    okk_bdc_max_pool2d(out_addr, in_addr, &tile_in, p->k, p->k, &pad, &stride);
    const dim4 store = {1, p->C, out_rows, ow};
    dim4 out_stride;
    const dim4 tile_out = {1, p->C, T, ow};
    okk_128_byte_aligned_stride_for_32bit(&out_stride, 0, &tile_out);
    okk_gdma_32bit_cpy_L2S(p->output_addr + 4ull * r * ow, out_addr, &store, &sys_out, &out_stride);
  }
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(partial_tiles);

typedef struct {
  int n;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) vector_param_t;

void past_allocation(const void* args) {
  okk_initialize();
  const vector_param_t* p = (const vector_param_t*)args;
  const int rows = (p->n + 63) / 64;
  const dim4 shape = {1, rows, 1, 64};
  okk_gdma_32bit_cpy_S2L(0, p->input_addr, &shape, NULL, NULL);
  okk_bdc_mul_C(65536, 0, 2.0f, &shape, NULL, NULL);
  okk_gdma_32bit_cpy_L2S(p->output_addr, 65536, &shape, NULL, NULL);
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(past_allocation);

void dtcm_sum(const void* args) {
  okk_initialize();
  const vector_param_t* p = (const vector_param_t*)args;
  const dim4 shape = {1, 1, 1, p->n};
  okk_gdma_32bit_cpy_S2L(131072, p->input_addr, &shape, NULL, NULL);
  const unsigned dtcm = okk_dtcm_start_addr();
  okk_gdma_32bit_cpy_L2S(dtcm, 131072, &shape, NULL, NULL);
  okk_poll();
  const float* v = (const float*)okk_dtcm_addr(dtcm);
  float sum = 0.0f;
  for (int i = 0; i < p->n; ++i) sum += v[i];
  x32 s;
  s.fp32 = sum;
  const dim4 out = {1, 1, 1, 1};
  okk_gdma_32bit_set_C_system(p->output_addr, s, &out, NULL);
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(dtcm_sum);
