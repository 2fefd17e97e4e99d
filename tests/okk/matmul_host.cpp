// Host program of the tiled matmul kernel test (contest tolerance, double reference).
#include <cstdio>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  int M, K, N, lcpc, rcpc, rows_per_tile, has_bias;
  unsigned long long output_addr, left_addr, right_addr, bias_addr;
} __attribute__((packed)) matmul_param_t;

static int run(bm_handle_t handle, matmul_param_t p, unsigned seed) {
  const std::vector<float> a = random_floats(size_t(p.M) * p.K, seed),
                           b = random_floats(size_t(p.K) * p.N, seed + 1),
                           bias = random_floats(p.N, seed + 2);
  DeviceBuffer ad(handle, a.size() * 4), bd(handle, b.size() * 4), cd(handle, bias.size() * 4),
      yd(handle, size_t(p.M) * p.N * 4);
  ad.upload(a);
  bd.upload(b);
  cd.upload(bias);
  p.left_addr = ad.addr();
  p.right_addr = bd.addr();
  p.bias_addr = cd.addr();
  p.output_addr = yd.addr();
  BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "matmul_tiled_contest", &p, sizeof(p)));
  const std::vector<float> y = yd.download(size_t(p.M) * p.N);
  std::vector<double> ref(y.size());
  for (int m = 0; m < p.M; ++m)
    for (int n = 0; n < p.N; ++n) {
      double acc = p.has_bias ? bias[n] : 0.0;
      for (int k = 0; k < p.K; ++k) acc += double(a[size_t(m) * p.K + k]) * b[size_t(k) * p.N + n];
      ref[size_t(m) * p.N + n] = acc;
    }
  char name[128];
  std::snprintf(name, sizeof name, "matmul %dx%dx%d lcpc %d rcpc %d tile %d bias %d (seed %u)", p.M,
                p.K, p.N, p.lcpc, p.rcpc, p.rows_per_tile, p.has_bias, seed);
  return contest_compare(name, y, ref);
}

int main() {
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  matmul_param_t cases[] = {
      {100, 300, 260, 100, 4, 16, 1, 0, 0, 0, 0},
      {7, 1024, 9, 128, 1, 3, 0, 0, 0, 0, 0},
      {1, 64, 5000, 16, 128, 1, 1, 0, 0, 0, 0},
      {65, 33, 2, 33, 2, 64, 1, 0, 0, 0, 0},
  };
  int failed = 0;
  unsigned seed = 77;
  for (const matmul_param_t& c : cases) failed += run(handle, c, seed += 10) != 0;
  bm_dev_free(handle);
  std::printf("%d passed, %d failed\n", int(sizeof cases / sizeof cases[0]) - failed, failed);
  return failed ? 1 : 0;
}
