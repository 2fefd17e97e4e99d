// Host program of the tiled average-pool kernel test: every combination of
// count_include_pad and ceil_mode, checked with the contest tolerance against
// a plain double-precision loop that follows PyTorch's avg_pool2d (window end
// clipped to the padded input; divisor = taps in the padded input when
// count_include_pad, else taps in the input), pads allowed to be asymmetric.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  int N, C, H, W, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w;
  int ceil_mode, count_include_pad;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) avgpool_param_t;

static int pooled(int in, int p0, int p1, int k, int s, bool ceil_mode) {
  const int span = in + p0 + p1 - k;
  int out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p0) --out;
  return out;
}

static int run(bm_handle_t handle, avgpool_param_t p, unsigned seed) {
  const int oh = pooled(p.H, p.pad_top, p.pad_bottom, p.kh, p.stride_h, p.ceil_mode);
  const int ow = pooled(p.W, p.pad_left, p.pad_right, p.kw, p.stride_w, p.ceil_mode);
  // A ceil_mode case must really add a row or a column, or it tests nothing.
  const bool extends = oh != pooled(p.H, p.pad_top, p.pad_bottom, p.kh, p.stride_h, false) ||
                       ow != pooled(p.W, p.pad_left, p.pad_right, p.kw, p.stride_w, false);
  if (p.ceil_mode && !extends) {
    std::printf("bad test case: ceil_mode adds no output row or column\n");
    return 1;
  }
  const size_t in_len = size_t(p.N) * p.C * p.H * p.W, out_len = size_t(p.N) * p.C * oh * ow;
  const std::vector<float> x = random_floats(in_len, seed, -2.0f, 3.0f);
  DeviceBuffer xd(handle, in_len * 4), yd(handle, out_len * 4);
  xd.upload(x);
  p.input_addr = xd.addr();
  p.output_addr = yd.addr();
  BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "avgpool_tiled_contest", &p, sizeof(p)));
  const std::vector<float> y = yd.download(out_len);
  std::vector<double> ref(out_len);
  for (int n = 0; n < p.N; ++n)
    for (int c = 0; c < p.C; ++c)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          int h0 = i * p.stride_h - p.pad_top, w0 = j * p.stride_w - p.pad_left;
          int h1 = std::min(h0 + p.kh, p.H + p.pad_bottom);
          int w1 = std::min(w0 + p.kw, p.W + p.pad_right);
          const int padded_taps = (h1 - h0) * (w1 - w0);
          h0 = std::max(h0, 0);
          w0 = std::max(w0, 0);
          h1 = std::min(h1, p.H);
          w1 = std::min(w1, p.W);
          double sum = 0.0;
          for (int h = h0; h < h1; ++h)
            for (int w = w0; w < w1; ++w) sum += x[((size_t(n) * p.C + c) * p.H + h) * p.W + w];
          const int divisor = p.count_include_pad ? padded_taps : (h1 - h0) * (w1 - w0);
          ref[((size_t(n) * p.C + c) * oh + i) * ow + j] = sum / divisor;
        }
  char name[192];
  std::snprintf(name, sizeof name,
                "avgpool N%d C%d %dx%d k%dx%d pad%d,%d,%d,%d s%d,%d ceil_mode%d "
                "count_include_pad%d -> %dx%d (seed %u)",
                p.N, p.C, p.H, p.W, p.kh, p.kw, p.pad_top, p.pad_bottom, p.pad_left, p.pad_right,
                p.stride_h, p.stride_w, p.ceil_mode, p.count_include_pad, oh, ow, seed);
  return contest_compare(name, y, ref);
}

int main() {
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  // The first two and the last cases do not fit in local memory whole (row
  // blocks); the last also needs several channel groups.
  avgpool_param_t cases[] = {
      // N  C    H    W    kh kw pads        stride ceil incl
      {2, 100, 258, 256, 3, 3, 1, 1, 1, 1, 2, 2, 1, 0, 0, 0},
      {2, 64, 300, 301, 5, 5, 2, 2, 2, 2, 3, 3, 0, 1, 0, 0},
      {1, 130, 120, 97, 3, 2, 1, 1, 0, 1, 2, 3, 0, 0, 0, 0},
      {3, 70, 33, 34, 4, 3, 1, 2, 1, 0, 3, 2, 1, 1, 0, 0},
      {1, 7, 5, 6, 2, 2, 0, 0, 0, 0, 2, 2, 1, 1, 0, 0},
      {1, 1500, 5, 900, 3, 3, 1, 0, 1, 1, 2, 2, 1, 0, 0, 0},
  };
  int failed = 0;
  unsigned seed = 9000;
  for (const avgpool_param_t& c : cases) failed += run(handle, c, seed += 10) != 0;
  bm_dev_free(handle);
  std::printf("%d passed, %d failed\n", int(sizeof cases / sizeof cases[0]) - failed, failed);
  return failed ? 1 : 0;
}
