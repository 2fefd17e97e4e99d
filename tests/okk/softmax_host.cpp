// Host program of the tiled softmax kernel test (over the channels and over
// W), checked with the contest tolerance against a double-precision softmax.
#include <cmath>
#include <cstdio>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  int N, C, H, W, axis;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) softmax_param_t;

static int run(bm_handle_t handle, softmax_param_t p, unsigned seed) {
  const size_t len = size_t(p.N) * p.C * p.H * p.W;
  const std::vector<float> x = random_floats(len, seed, -8.0f, 8.0f);
  DeviceBuffer xd(handle, len * 4), yd(handle, len * 4);
  xd.upload(x);
  p.input_addr = xd.addr();
  p.output_addr = yd.addr();
  BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "softmax_tiled_contest", &p, sizeof(p)));
  const std::vector<float> y = yd.download(len);
  std::vector<double> ref(len);
  // Element (n, c, h, w) is at ((n*C + c)*H + h)*W + w; a softmax vector runs
  // along c (step H*W) or along w (step 1).
  const int count = p.axis == 1 ? p.C : p.W;
  const size_t step = p.axis == 1 ? size_t(p.H) * p.W : 1;
  for (int n = 0; n < p.N; ++n)
    for (int c = 0; c < (p.axis == 1 ? 1 : p.C); ++c)
      for (int h = 0; h < p.H; ++h)
        for (int w = 0; w < (p.axis == 1 ? p.W : 1); ++w) {
          const size_t base = ((size_t(n) * p.C + c) * p.H + h) * p.W + w;
          double m = -INFINITY, s = 0.0;
          for (int k = 0; k < count; ++k) m = std::fmax(m, x[base + k * step]);
          for (int k = 0; k < count; ++k) s += std::exp(double(x[base + k * step]) - m);
          for (int k = 0; k < count; ++k)
            ref[base + k * step] = std::exp(double(x[base + k * step]) - m) / s;
        }
  char name[128];
  std::snprintf(name, sizeof name, "softmax N%d C%d H%d W%d axis %d (seed %u)", p.N, p.C, p.H, p.W,
                p.axis, seed);
  return contest_compare(name, y, ref);
}

int main() {
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  // The first two need several tiles (more than 4095 rows / more lanes than
  // local memory holds); the others have odd sizes and one-element vectors.
  softmax_param_t cases[] = {
      {2, 64, 50, 1000, 3, 0, 0}, {2, 2000, 40, 40, 1, 0, 0}, {3, 5, 7, 9, 3, 0, 0},
      {1, 70, 3, 5, 1, 0, 0},     {2, 3, 4, 1, 3, 0, 0},
  };
  int failed = 0;
  unsigned seed = 31337;
  for (const softmax_param_t& c : cases) failed += run(handle, c, seed += 10) != 0;
  bm_dev_free(handle);
  std::printf("%d passed, %d failed\n", int(sizeof cases / sizeof cases[0]) - failed, failed);
  return failed ? 1 : 0;
}
