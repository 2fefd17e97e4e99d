// Host program of the tiled depthwise conv2d kernel test: runs the kernel
// through bmlib and checks it with the contest tolerance against a plain
// double-precision loop.
#include <cstdio>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  int N, C, H, W, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w, dilation_h, dilation_w;
  int has_bias;
  unsigned long long output_addr, input_addr, weight_addr, bias_addr;
} __attribute__((packed)) depthwise_param_t;

static int run(bm_handle_t handle, depthwise_param_t p, unsigned seed) {
  const int oh =
      (p.H + p.pad_top + p.pad_bottom - ((p.kh - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  const int ow =
      (p.W + p.pad_left + p.pad_right - ((p.kw - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  const size_t in_len = size_t(p.N) * p.C * p.H * p.W, out_len = size_t(p.N) * p.C * oh * ow;
  const std::vector<float> x = random_floats(in_len, seed),
                           w = random_floats(size_t(p.C) * p.kh * p.kw, seed + 1),
                           b = random_floats(p.C, seed + 2);
  DeviceBuffer xd(handle, in_len * 4), wd(handle, w.size() * 4), bd(handle, b.size() * 4),
      yd(handle, out_len * 4);
  xd.upload(x);
  wd.upload(w);
  bd.upload(b);
  p.input_addr = xd.addr();
  p.weight_addr = wd.addr();
  p.bias_addr = bd.addr();
  p.output_addr = yd.addr();
  BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "depthwise_tiled_contest", &p, sizeof(p)));
  const std::vector<float> y = yd.download(out_len);
  std::vector<double> ref(out_len);
  for (int n = 0; n < p.N; ++n)
    for (int c = 0; c < p.C; ++c)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double acc = p.has_bias ? b[c] : 0.0;
          for (int u = 0; u < p.kh; ++u)
            for (int v = 0; v < p.kw; ++v) {
              const int h = i * p.stride_h - p.pad_top + u * p.dilation_h;
              const int ww = j * p.stride_w - p.pad_left + v * p.dilation_w;
              if (h < 0 || h >= p.H || ww < 0 || ww >= p.W) continue;
              acc += double(x[((size_t(n) * p.C + c) * p.H + h) * p.W + ww]) *
                     w[(size_t(c) * p.kh + u) * p.kw + v];
            }
          ref[((size_t(n) * p.C + c) * oh + i) * ow + j] = acc;
        }
  char name[192];
  std::snprintf(name, sizeof name,
                "depthwise N%d C%d %dx%d k%dx%d pad%d,%d,%d,%d s%d,%d d%d,%d bias%d -> %dx%d "
                "(seed %u)",
                p.N, p.C, p.H, p.W, p.kh, p.kw, p.pad_top, p.pad_bottom, p.pad_left, p.pad_right,
                p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.has_bias, oh, ow, seed);
  return contest_compare(name, y, ref);
}

int main() {
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  // Per-NPU bytes of one whole image exceed local memory in the first, second
  // and last cases (row blocks), the last also needs several channel groups.
  depthwise_param_t cases[] = {
      // N  C    H    W    kh kw pads        stride dil   bias
      {2, 100, 200, 150, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {1, 300, 190, 110, 5, 3, 2, 1, 0, 2, 2, 1, 2, 3, 0, 0, 0, 0, 0},
      {3, 64, 17, 23, 7, 7, 3, 3, 3, 3, 3, 3, 1, 1, 1, 0, 0, 0, 0},
      {1, 5, 9, 6, 2, 4, 0, 1, 2, 0, 1, 2, 3, 1, 1, 0, 0, 0, 0},
      {1, 1000, 9, 700, 7, 7, 0, 0, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
  };
  int failed = 0;
  unsigned seed = 4242;
  for (const depthwise_param_t& c : cases) failed += run(handle, c, seed += 10) != 0;
  bm_dev_free(handle);
  std::printf("%d passed, %d failed\n", int(sizeof cases / sizeof cases[0]) - failed, failed);
  return failed ? 1 : 0;
}
