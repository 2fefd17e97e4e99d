/* Contest-style device kernel: fp32 conv2d with 2IC weights. The batch is
 * pipelined with ping-pong buffers: in step i the GDMA loads image i while the
 * BDC convolves image i-1 and the GDMA stores image i-2. */
#include "okk.h"

#define LOCAL_MEM_SIZE okk_local_mem_size_per_npu()

typedef struct {
  int N, IC, H, W, OC, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w, dilation_h, dilation_w;
  int has_bias;
  unsigned long long output_addr, input_addr, weight_addr, bias_addr;
} __attribute__((packed)) conv_param_t;

void conv2d_2ic_contest(const void* args) {
  okk_initialize();
  const conv_param_t* p = (const conv_param_t*)args;
  const int oh =
      (p->H + p->pad_top + p->pad_bottom - ((p->kh - 1) * p->dilation_h + 1)) / p->stride_h + 1;
  const int ow =
      (p->W + p->pad_left + p->pad_right - ((p->kw - 1) * p->dilation_w + 1)) / p->stride_w + 1;
  const dim4 in_shape = {1, p->IC, p->H, p->W};
  const dim4 out_shape = {1, p->OC, oh, ow};
  dim4 in_stride, out_stride;
  okk_128_byte_aligned_stride_for_32bit(&in_stride, 0, &in_shape);
  okk_128_byte_aligned_stride_for_32bit(&out_stride, 0, &out_shape);
  const unsigned in_bytes = ALIGN(in_stride.n * 4, 128);
  const unsigned out_bytes = ALIGN(out_stride.n * 4, 128);
  const int icn = DIV_UP(p->IC, 2), khkw = p->kh * p->kw;
  const int oc_per_npu = okk_channle_num_per_npu(0, p->OC);
  local_addr_t in_addr[2], out_addr[2];
  in_addr[0] = 0;
  in_addr[1] = in_bytes;
  out_addr[0] = 2 * in_bytes;
  out_addr[1] = out_addr[0] + out_bytes;
  const local_addr_t w_addr = out_addr[1] + out_bytes;
  const local_addr_t b_addr = w_addr + ALIGN(icn * oc_per_npu * khkw * 8, 128);
  OKKERNEL_ASSERT(b_addr + oc_per_npu * 4 <= LOCAL_MEM_SIZE);

  /* Weights arrive as (ceil(IC/2), OC, kh, kw) fp32 pairs: copy them as 32-bit
   * rows of 2*kh*kw elements per (pair, oc), compact on the OC NPUs. */
  const dim4 w_shape = {icn, p->OC, 1, 2 * khkw};
  const dim4 w_stride = {oc_per_npu * 2 * khkw, 2 * khkw, 2 * khkw, 1};
  okk_gdma_32bit_cpy_S2L(w_addr, p->weight_addr, &w_shape, &w_stride, NULL);
  if (p->has_bias) {
    const dim4 b_shape = {1, p->OC, 1, 1};
    dim4 b_stride;
    okk_compact_stride(&b_stride, 0, &b_shape);
    okk_gdma_32bit_cpy_S2L(b_addr, p->bias_addr, &b_shape, &b_stride, NULL);
  }
  const dim4 kernel_stride = {oc_per_npu * khkw, khkw, p->kw, 1}; /* in fp32 pairs */
  const Padding pad = {p->pad_top, p->pad_bottom, p->pad_left, p->pad_right};
  const dim2 stride = {p->stride_h, p->stride_w};
  const dim2 dilation = {p->dilation_h, p->dilation_w};
  const unsigned long long in_image = 4ull * p->IC * p->H * p->W;
  const unsigned long long out_image = 4ull * p->OC * oh * ow;
  for (int i = 0; i < p->N + 2; ++i) {
    okk_parallel_start();
    if (i < p->N)
      okk_gdma_32bit_cpy_S2L(in_addr[i % 2], p->input_addr + i * in_image, &in_shape, NULL, NULL);
    if (i >= 1 && i - 1 < p->N)
      okk_bdc_conv2d(out_addr[(i - 1) % 2], in_addr[(i - 1) % 2], w_addr, b_addr, &in_shape, p->OC,
                     p->kh, p->kw, NULL, &kernel_stride, p->has_bias, false, &pad, &stride,
                     &dilation);
    if (i >= 2)
      okk_gdma_32bit_cpy_L2S(p->output_addr + (i - 2) * out_image, out_addr[(i - 2) % 2],
                             &out_shape, NULL, NULL);
    okk_parallel_end();
  }
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(conv2d_2ic_contest);
