/* Contest-style device kernel: out (M x N) = left (M x K) * right (K x N) + bias.
 * The right matrix and bias stay in local memory (cols_per_channel = rcpc);
 * left rows are tiled, with ping-pong buffers overlapping load, multiply and
 * store in parallel regions. */
#include "okk.h"

typedef struct {
  int M, K, N, lcpc, rcpc, rows_per_tile, has_bias;
  unsigned long long output_addr, left_addr, right_addr, bias_addr;
} __attribute__((packed)) matmul_param_t;

static unsigned matrix_bytes(int rows, int cols, int cpc) {
  const dim4 shape = {rows, DIV_UP(cols, cpc), 1, cpc};
  dim4 stride;
  okk_128_byte_aligned_stride_for_32bit(&stride, 0, &shape);
  return ALIGN(rows * stride.n * 4, 128);
}

void matmul_tiled_contest(const void* args) {
  okk_initialize();
  const matmul_param_t* p = (const matmul_param_t*)args;
  const int T = p->rows_per_tile;
  const local_addr_t right = 0;
  const local_addr_t bias = right + matrix_bytes(p->K, p->N, p->rcpc);
  local_addr_t left[2], out[2];
  left[0] = bias + matrix_bytes(1, p->N, p->rcpc);
  left[1] = left[0] + matrix_bytes(T, p->K, p->lcpc);
  out[0] = left[1] + matrix_bytes(T, p->K, p->lcpc);
  out[1] = out[0] + matrix_bytes(T, p->N, p->rcpc);
  OKKERNEL_ASSERT(out[1] + matrix_bytes(T, p->N, p->rcpc) <= okk_local_mem_size_per_npu());
  okk_gdma_32bit_matrix_S2L(right, p->right_addr, p->K, p->N, p->rcpc, p->N);
  if (p->has_bias) okk_gdma_32bit_matrix_S2L(bias, p->bias_addr, 1, p->N, p->rcpc, p->N);
  const int tiles = DIV_UP(p->M, T);
  for (int i = 0; i < tiles + 2; ++i) {
    okk_parallel_start();
    if (i < tiles) {
      const int rows = p->M - i * T < T ? p->M - i * T : T;
      okk_gdma_32bit_matrix_S2L(left[i % 2], p->left_addr + 4ull * i * T * p->K, rows, p->K,
                                p->lcpc, p->K);
    }
    if (i >= 1 && i - 1 < tiles) {
      const int t = i - 1, rows = p->M - t * T < T ? p->M - t * T : T;
      okk_bdc_matmul(out[t % 2], left[t % 2], right, bias, rows, p->K, p->N, p->lcpc, p->rcpc,
                     p->has_bias, false);
    }
    if (i >= 2) {
      const int t = i - 2, rows = p->M - t * T < T ? p->M - t * T : T;
      okk_gdma_32bit_matrix_L2S(p->output_addr + 4ull * t * T * p->N, out[t % 2], rows, p->N,
                                p->rcpc, p->N);
    }
    okk_parallel_end();
  }
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(matmul_tiled_contest);
