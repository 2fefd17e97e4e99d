/* Contest-style device kernel: fp32 average pooling with PyTorch's
 * count_include_pad and ceil_mode, built from okk_bdc_avg_pool2d (which always
 * divides by kh*kw and pads with zeros).
 *
 * ceil_mode adds output rows/columns whose windows reach past the bottom/right
 * padding: the kernel pads the input further there (zeros). The divisor of
 * output (i, j) is the number of window taps inside a valid region V (the
 * padded input when count_include_pad, else the input itself), clipped to the
 * padded input. That count divided by kh*kw is the average pool of a tensor
 * of ones over V with zeros elsewhere, so out = avgpool(x) / avgpool(ones_V).
 * Without ceil_mode and with count_include_pad the divisor is kh*kw and the
 * division is skipped.
 *
 * Tiles are (one image, G channels, T output rows) with G a multiple of 64
 * (every tile starts on NPU 0), pipelined through ping-pong buffers: in step
 * i the GDMA loads tile i, the BDC pools tile i-1, the GDMA stores tile i-2. */
#include "okk.h"

typedef struct {
  int N, C, H, W, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w;
  int ceil_mode, count_include_pad;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) avgpool_param_t;

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

/* Output size along one axis, PyTorch's rule: with ceil_mode the last window
 * must still start inside the input or its leading padding. */
static int pooled_size(int in, int pad0, int pad1, int k, int s, int ceil_mode) {
  const int span = in + pad0 + pad1 - k;
  int out = (ceil_mode ? DIV_UP(span, s) : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad0) --out;
  return out;
}

/* One axis of a window block: positions [lo, hi) of the (extended) padded
 * axis, and the part [lo, hi) ∩ [vlo, vhi) that the data covers. */
typedef struct {
  int first, count; /* first data index, data elements */
  int pad_before, pad_after;
} span_t;

static span_t clip(int lo, int hi, int vlo, int vhi) {
  span_t s;
  const int a = max_int(lo, vlo), b = min_int(hi, vhi);
  s.first = a;
  s.count = b - a;
  s.pad_before = a - lo;
  s.pad_after = hi - b;
  return s;
}

typedef struct {
  const avgpool_param_t* p;
  int oh, ow;
  int G, T, groups, blocks;
  int divide; /* 0 when the divisor is always kh*kw */
} plan_t;

typedef struct {
  int n, c0, cg, o0, rows_out;
  span_t rows;      /* input rows (data: the input) */
  span_t ones_rows; /* rows of the ones tensor (data: V) */
} tile_t;

static tile_t tile_of(const plan_t* pl, int i) {
  const avgpool_param_t* p = pl->p;
  tile_t t;
  const int b = i % pl->blocks, g = (i / pl->blocks) % pl->groups;
  t.n = i / (pl->blocks * pl->groups);
  t.c0 = g * pl->G;
  t.cg = min_int(pl->G, p->C - t.c0);
  t.o0 = b * pl->T;
  t.rows_out = min_int(pl->T, pl->oh - t.o0);
  const int lo = t.o0 * p->stride_h - p->pad_top;
  const int hi = (t.o0 + t.rows_out - 1) * p->stride_h - p->pad_top + p->kh;
  t.rows = clip(lo, hi, 0, p->H);
  t.ones_rows = p->count_include_pad ? clip(lo, hi, -p->pad_top, p->H + p->pad_bottom) : t.rows;
  return t;
}

void avgpool_tiled_contest(const void* args) {
  okk_initialize();
  const avgpool_param_t* p = (const avgpool_param_t*)args;
  const int npu = okk_npu_num();
  const unsigned lmem = okk_local_mem_size_per_npu();
  plan_t pl;
  pl.p = p;
  pl.oh = pooled_size(p->H, p->pad_top, p->pad_bottom, p->kh, p->stride_h, p->ceil_mode);
  pl.ow = pooled_size(p->W, p->pad_left, p->pad_right, p->kw, p->stride_w, p->ceil_mode);
  pl.divide = p->ceil_mode || !p->count_include_pad;
  /* Columns: every tile spans the whole width. */
  const int wlo = -p->pad_left, whi = (pl.ow - 1) * p->stride_w - p->pad_left + p->kw;
  const span_t cols = clip(wlo, whi, 0, p->W);
  const span_t ones_cols =
      p->count_include_pad ? clip(wlo, whi, -p->pad_left, p->W + p->pad_right) : cols;
  const int ones_w = ones_cols.count;
  const int dv = min_int(p->C, npu); /* the divisor map: one slot on each NPU used */

  pl.T = 0;
  for (int slots = okk_channle_num_per_npu(0, p->C); slots >= 1 && pl.T == 0; --slots) {
    const int G = min_int(p->C, slots * npu);
    for (int T = pl.oh; T >= 1; --T) {
      const int rows = (T - 1) * p->stride_h + p->kh; /* padded rows of a block */
      unsigned need =
          2 * aligned_bytes(G, min_int(rows, p->H), p->W) + 2 * aligned_bytes(G, T, pl.ow);
      if (pl.divide) need += aligned_bytes(dv, rows, ones_w) + aligned_bytes(dv, T, pl.ow);
      if (need <= lmem) {
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
  const int rows_max = (pl.T - 1) * p->stride_h + p->kh;
  local_addr_t in_addr[2], out_addr[2];
  in_addr[0] = 0;
  in_addr[1] = aligned_bytes(pl.G, min_int(rows_max, p->H), p->W);
  out_addr[0] = 2 * in_addr[1];
  out_addr[1] = out_addr[0] + aligned_bytes(pl.G, pl.T, pl.ow);
  const local_addr_t ones_addr = out_addr[1] + aligned_bytes(pl.G, pl.T, pl.ow);
  const local_addr_t div_addr = ones_addr + aligned_bytes(dv, rows_max, ones_w);
  OKKERNEL_ASSERT(!pl.divide || div_addr + aligned_bytes(dv, pl.T, pl.ow) <= lmem);
  OKKERNEL_LOG("avgpool_tiled_contest: %d tiles of %d channels x %d output rows, %s\n", tiles, pl.G,
               pl.T, pl.divide ? "divisor map" : "divisor kh*kw");

  if (pl.divide) {
    /* Ones on every NPU, enough for any block; each block reads a prefix. */
    const dim4 ones_shape = {1, dv, rows_max, ones_w};
    x32 one;
    one.fp32 = 1.0f;
    okk_bdc_32bit_set_C(ones_addr, one, &ones_shape, NULL);
  }
  const dim4 in_sys = {p->C * p->H * p->W, p->H * p->W, p->W, 1};
  const dim4 out_sys = {p->C * pl.oh * pl.ow, pl.oh * pl.ow, pl.ow, 1};
  const dim2 stride = {p->stride_h, p->stride_w};
  for (int i = 0; i < tiles + 2; ++i) {
    okk_parallel_start();
    if (i < tiles) {
      const tile_t t = tile_of(&pl, i);
      OKKERNEL_ASSERT(t.rows.count >= 1);
      const dim4 shape = {1, t.cg, t.rows.count, p->W};
      const unsigned long long src =
          p->input_addr +
          4ull * (((unsigned long long)t.n * p->C + t.c0) * p->H + t.rows.first) * p->W;
      okk_gdma_32bit_cpy_S2L(in_addr[i % 2], src, &shape, NULL, &in_sys);
    }
    if (i >= 1 && i - 1 < tiles) {
      const tile_t t = tile_of(&pl, i - 1);
      const local_addr_t out = out_addr[(i - 1) % 2];
      const dim4 shape = {1, t.cg, t.rows.count, p->W};
      const Padding pad = {t.rows.pad_before, t.rows.pad_after, cols.pad_before, cols.pad_after};
      okk_bdc_avg_pool2d(out, in_addr[(i - 1) % 2], &shape, p->kh, p->kw, &pad, &stride);
      if (pl.divide) {
        const int dc = min_int(t.cg, npu);
        const dim4 ones_shape = {1, dc, t.ones_rows.count, ones_w};
        const Padding ones_pad = {t.ones_rows.pad_before, t.ones_rows.pad_after,
                                  ones_cols.pad_before, ones_cols.pad_after};
        okk_bdc_avg_pool2d(div_addr, ones_addr, &ones_shape, p->kh, p->kw, &ones_pad, &stride);
        /* Every channel slot divides by the same map: channel stride 0. */
        const dim4 out_shape = {1, t.cg, t.rows_out, pl.ow};
        const dim4 div_shape = {1, dc, t.rows_out, pl.ow};
        dim4 div_stride;
        okk_128_byte_aligned_stride_for_32bit(&div_stride, 0, &div_shape);
        div_stride.n = 0;
        div_stride.c = 0;
        okk_bdc_div(out, out, div_addr, &out_shape, NULL, NULL, &div_stride);
      }
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
OKKERNEL_FUNC_REGISTER(avgpool_tiled_contest);
