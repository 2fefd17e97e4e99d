/* Contest-style device kernel: fp32 softmax of an N x C x H x W tensor over
 * the channels (axis 1) or over W (axis 3).
 *
 * Every softmax vector becomes one NPU channel ("lane") of a local tensor
 * (1, G, Lh, Lw): over W a lane is one row (Lh = 1, Lw = W, lanes = N*C*H);
 * over the channels a lane is one pixel whose C values are loaded down h with
 * a system stride of H*W (Lh = C, Lw = 1, lanes = H*W per image). A pooling
 * window covering the whole (Lh, Lw) plane reduces each lane: max pool gives
 * the maximum, avg pool the mean (the sum / (Lh*Lw)). Then
 *   x -= max (broadcast by zero h/w strides), e = exp(x), y = e / (mean*L).
 * Tiles of G lanes are pipelined through ping-pong buffers: in step i the GDMA
 * loads tile i, the BDC works on tile i-1 and the GDMA stores tile i-2. */
#include "okk.h"

typedef struct {
  int N, C, H, W, axis;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) softmax_param_t;

static unsigned aligned_bytes(int c, int h, int w) {
  const dim4 shape = {1, c, h, w};
  dim4 stride;
  okk_128_byte_aligned_stride_for_32bit(&stride, 0, &shape);
  return ALIGN(stride.n * 4, 128);
}

static int min_int(int a, int b) {
  return a < b ? a : b;
}

typedef struct {
  int lanes_per_image; /* lanes that share one system stride pattern */
  int images;
  int Lh, Lw, G, tiles_per_image;
} plan_t;

/* System address of the first element of a tile and its lane count. */
static unsigned long long tile_offset(const softmax_param_t* p, const plan_t* pl, int i,
                                      int* lanes) {
  const int img = i / pl->tiles_per_image, l0 = (i % pl->tiles_per_image) * pl->G;
  *lanes = min_int(pl->G, pl->lanes_per_image - l0);
  if (p->axis == 3) return 4ull * ((unsigned long long)l0 * p->W);
  return 4ull * ((unsigned long long)img * p->C * p->H * p->W + l0);
}

void softmax_tiled_contest(const void* args) {
  okk_initialize();
  const softmax_param_t* p = (const softmax_param_t*)args;
  OKKERNEL_ASSERT(p->axis == 1 || p->axis == 3);
  const unsigned lmem = okk_local_mem_size_per_npu();
  plan_t pl;
  if (p->axis == 3) {
    pl.lanes_per_image = p->N * p->C * p->H; /* rows are evenly spaced: one "image" */
    pl.images = 1;
    pl.Lh = 1;
    pl.Lw = p->W;
  } else {
    pl.lanes_per_image = p->H * p->W;
    pl.images = p->N;
    pl.Lh = p->C;
    pl.Lw = 1;
  }
  /* in[2], out[2], the exp work buffer, max and mean per lane. */
  pl.G = 0;
  for (int G = min_int(pl.lanes_per_image, 4095); G >= 1; G -= okk_npu_num()) {
    const unsigned need = 5 * aligned_bytes(G, pl.Lh, pl.Lw) + 2 * aligned_bytes(G, 1, 1);
    if (need <= lmem) {
      pl.G = G;
      break;
    }
  }
  OKKERNEL_ASSERT(pl.G >= 1);
  pl.tiles_per_image = DIV_UP(pl.lanes_per_image, pl.G);
  const int tiles = pl.images * pl.tiles_per_image;
  const unsigned buf = aligned_bytes(pl.G, pl.Lh, pl.Lw);
  local_addr_t in_addr[2], out_addr[2];
  in_addr[0] = 0;
  in_addr[1] = buf;
  out_addr[0] = 2 * buf;
  out_addr[1] = 3 * buf;
  const local_addr_t work_addr = 4 * buf;
  const local_addr_t max_addr = 5 * buf;
  const local_addr_t mean_addr = max_addr + aligned_bytes(pl.G, 1, 1);
  OKKERNEL_ASSERT(mean_addr + aligned_bytes(pl.G, 1, 1) <= lmem);
  OKKERNEL_LOG("softmax_tiled_contest: axis %d, %d tiles of %d lanes x %d values\n", p->axis, tiles,
               pl.G, pl.Lh * pl.Lw);

  /* System strides of a tile (1, lanes, Lh, Lw). */
  dim4 sys;
  if (p->axis == 3) {
    sys.n = pl.G * p->W;
    sys.c = p->W;
    sys.h = p->W;
    sys.w = 1;
  } else {
    sys.n = p->C * p->H * p->W;
    sys.c = 1;
    sys.h = p->H * p->W;
    sys.w = 1;
  }
  for (int i = 0; i < tiles + 2; ++i) {
    okk_parallel_start();
    if (i < tiles) {
      int lanes;
      const unsigned long long off = tile_offset(p, &pl, i, &lanes);
      const dim4 shape = {1, lanes, pl.Lh, pl.Lw};
      okk_gdma_32bit_cpy_S2L(in_addr[i % 2], p->input_addr + off, &shape, NULL, &sys);
    }
    if (i >= 1 && i - 1 < tiles) {
      int lanes;
      tile_offset(p, &pl, i - 1, &lanes);
      const local_addr_t x = in_addr[(i - 1) % 2], y = out_addr[(i - 1) % 2];
      const dim4 shape = {1, lanes, pl.Lh, pl.Lw};
      const dim4 lane_shape = {1, lanes, 1, 1};
      /* A per-lane value broadcast over the lane's plane: zero h and w strides. */
      dim4 bcast;
      okk_128_byte_aligned_stride_for_32bit(&bcast, 0, &lane_shape);
      bcast.h = 0;
      bcast.w = 0;
      okk_bdc_max_pool2d(max_addr, x, &shape, pl.Lh, pl.Lw, NULL, NULL);
      okk_bdc_sub(x, x, max_addr, &shape, NULL, NULL, &bcast);
      okk_bdc_exp(y, x, work_addr, &shape);
      okk_bdc_avg_pool2d(mean_addr, y, &shape, pl.Lh, pl.Lw, NULL, NULL);
      okk_bdc_mul_C(mean_addr, mean_addr, (float)(pl.Lh * pl.Lw), &lane_shape, NULL, NULL);
      okk_bdc_div(y, y, mean_addr, &shape, NULL, NULL, &bcast);
    }
    if (i >= 2) {
      int lanes;
      const unsigned long long off = tile_offset(p, &pl, i - 2, &lanes);
      const dim4 shape = {1, lanes, pl.Lh, pl.Lw};
      okk_gdma_32bit_cpy_L2S(p->output_addr + off, out_addr[i % 2], &shape, &sys, NULL);
    }
    okk_parallel_end();
  }
  okk_poll();
}
OKKERNEL_FUNC_REGISTER(softmax_tiled_contest);
