/* Contest-style device kernel: fp32 depthwise conv2d (stride, padding,
 * dilation, optional bias) of an N x C x H x W tensor that need not fit in
 * local memory. Work is cut into tiles of (one image, a group of G channels,
 * a block of T output rows); G is a multiple of 64 so every tile starts on
 * NPU 0 like the weights and bias. Tiles run through ping-pong buffers: in
 * step i the GDMA loads tile i, the BDC convolves tile i-1 and the GDMA
 * stores tile i-2, all inside one parallel region. */
#include "okk.h"

typedef struct {
  int N, C, H, W, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w, dilation_h, dilation_w;
  int has_bias;
  unsigned long long output_addr, input_addr, weight_addr, bias_addr;
} __attribute__((packed)) depthwise_param_t;

/* Bytes per NPU of a (1, c, h, w) fp32 tensor in the 128-byte aligned layout. */
static unsigned aligned_bytes(int c, int h, int w) {
  const dim4 shape = {1, c, h, w};
  dim4 stride;
  okk_128_byte_aligned_stride_for_32bit(&stride, 0, &shape);
  return ALIGN(stride.n * 4, 128);
}

static int min_int(int a, int b) {
  return a < b ? a : b;
}
static int max_int(int a, int b) {
  return a > b ? a : b;
}

typedef struct {
  int n, c0, cg;    /* image, first channel, channels */
  int o0, rows_out; /* first output row, output rows */
  int r0, rows_in;  /* first input row, input rows loaded */
  int pad_top, pad_bottom;
} tile_t;

typedef struct {
  const depthwise_param_t* p;
  int oh, ow, ext_h; /* output size, dilated kernel height */
  int G, T;          /* channels and output rows per tile */
  int groups, blocks;
} plan_t;

static tile_t tile_of(const plan_t* pl, int i) {
  const depthwise_param_t* p = pl->p;
  tile_t t;
  const int b = i % pl->blocks, g = (i / pl->blocks) % pl->groups;
  t.n = i / (pl->blocks * pl->groups);
  t.c0 = g * pl->G;
  t.cg = min_int(pl->G, p->C - t.c0);
  t.o0 = b * pl->T;
  t.rows_out = min_int(pl->T, pl->oh - t.o0);
  /* Input rows [lo, hi) of the padded image feed these output rows. */
  const int lo = t.o0 * p->stride_h - p->pad_top;
  const int hi = (t.o0 + t.rows_out - 1) * p->stride_h - p->pad_top + pl->ext_h;
  t.r0 = max_int(lo, 0);
  t.rows_in = min_int(hi, p->H) - t.r0;
  t.pad_top = t.r0 - lo;
  t.pad_bottom = hi - min_int(hi, p->H);
  return t;
}

void depthwise_tiled_contest(const void* args) {
  okk_initialize();
  const depthwise_param_t* p = (const depthwise_param_t*)args;
  const int npu = okk_npu_num(), khkw = p->kh * p->kw;
  const unsigned lmem = okk_local_mem_size_per_npu();
  plan_t pl;
  pl.p = p;
  pl.ext_h = (p->kh - 1) * p->dilation_h + 1;
  const int ext_w = (p->kw - 1) * p->dilation_w + 1;
  pl.oh = (p->H + p->pad_top + p->pad_bottom - pl.ext_h) / p->stride_h + 1;
  pl.ow = (p->W + p->pad_left + p->pad_right - ext_w) / p->stride_w + 1;

  /* Weights (1, C, kh, kw) and bias (1, C, 1, 1) stay resident, compact, from NPU 0. */
  const int slots_all = okk_channle_num_per_npu(0, p->C);
  const local_addr_t w_addr = 0;
  const local_addr_t b_addr = ALIGN(slots_all * khkw * 4, 128);
  const local_addr_t buf0 = b_addr + ALIGN(slots_all * 4, 128);

  /* The largest tile that fits: first the most channels, then the most rows. */
  pl.G = 0;
  pl.T = 0;
  for (int slots = slots_all; slots >= 1 && pl.T == 0; --slots) {
    const int G = min_int(p->C, slots * npu);
    for (int T = pl.oh; T >= 1; --T) {
      const int rows = min_int((T - 1) * p->stride_h + pl.ext_h, p->H);
      const unsigned need = 2 * aligned_bytes(G, rows, p->W) + 2 * aligned_bytes(G, T, pl.ow);
      if (buf0 + need <= lmem) {
        pl.G = G;
        pl.T = T;
        break;
      }
    }
  }
  OKKERNEL_ASSERT(pl.T >= 1);
  pl.groups = DIV_UP(p->C, pl.G);
  pl.blocks = DIV_UP(pl.oh, pl.T);
  const int tiles = p->N * pl.groups * pl.blocks;
  const int rows_max = min_int((pl.T - 1) * p->stride_h + pl.ext_h, p->H);
  local_addr_t in_addr[2], out_addr[2];
  in_addr[0] = buf0;
  in_addr[1] = in_addr[0] + aligned_bytes(pl.G, rows_max, p->W);
  out_addr[0] = in_addr[1] + aligned_bytes(pl.G, rows_max, p->W);
  out_addr[1] = out_addr[0] + aligned_bytes(pl.G, pl.T, pl.ow);
  OKKERNEL_ASSERT(out_addr[1] + aligned_bytes(pl.G, pl.T, pl.ow) <= lmem);
  OKKERNEL_LOG("depthwise_tiled_contest: %d tiles of %d channels x %d output rows\n", tiles, pl.G,
               pl.T);

  const dim4 w_shape = {1, p->C, p->kh, p->kw};
  dim4 w_stride;
  okk_compact_stride(&w_stride, 0, &w_shape);
  okk_gdma_32bit_cpy_S2L(w_addr, p->weight_addr, &w_shape, &w_stride, NULL);
  if (p->has_bias) {
    const dim4 b_shape = {1, p->C, 1, 1};
    dim4 b_stride;
    okk_compact_stride(&b_stride, 0, &b_shape);
    okk_gdma_32bit_cpy_S2L(b_addr, p->bias_addr, &b_shape, &b_stride, NULL);
  }

  const dim4 in_sys = {p->C * p->H * p->W, p->H * p->W, p->W, 1};
  const dim4 out_sys = {p->C * pl.oh * pl.ow, pl.oh * pl.ow, pl.ow, 1};
  const dim2 stride = {p->stride_h, p->stride_w};
  const dim2 dilation = {p->dilation_h, p->dilation_w};
  for (int i = 0; i < tiles + 2; ++i) {
    okk_parallel_start();
    if (i < tiles) {
      const tile_t t = tile_of(&pl, i);
      OKKERNEL_ASSERT(t.rows_in >= 1);
      const dim4 shape = {1, t.cg, t.rows_in, p->W};
      const unsigned long long src =
          p->input_addr + 4ull * (((unsigned long long)t.n * p->C + t.c0) * p->H + t.r0) * p->W;
      okk_gdma_32bit_cpy_S2L(in_addr[i % 2], src, &shape, NULL, &in_sys);
    }
    if (i >= 1 && i - 1 < tiles) {
      const tile_t t = tile_of(&pl, i - 1);
      const dim4 shape = {1, t.cg, t.rows_in, p->W};
      const Padding pad = {t.pad_top, t.pad_bottom, p->pad_left, p->pad_right};
      /* A group starts at channel c0 = k * 64: slot k of NPU 0 in the compact tensors. */
      const int slot = t.c0 / npu;
      okk_bdc_depthwise2d(out_addr[(i - 1) % 2], in_addr[(i - 1) % 2], w_addr + slot * khkw * 4,
                          b_addr + slot * 4, &shape, p->kh, p->kw, p->has_bias, &pad, &stride,
                          &dilation);
    }
    if (i >= 2) {
      const tile_t t = tile_of(&pl, i - 2);
      const dim4 shape = {1, t.cg, t.rows_out, pl.ow};
      const unsigned long long dst =
          p->output_addr + 4ull * (((unsigned long long)t.n * p->C + t.c0) * pl.oh + t.o0) * pl.ow;
      okk_gdma_32bit_cpy_L2S(dst, out_addr[i % 2], &shape, &out_sys, NULL);
    }
    okk_parallel_end();
  }
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(depthwise_tiled_contest);
