// Host program of the vendor-limit kernels (vendor_limits_device.c): each
// case goes beyond a documented limit that Sophgo's C-model accepts and must
// give the right numbers, checked with the contest tolerance against a
// double-precision loop. Under npukit every limit prints one warning on
// stderr; with NPUKIT_OKK_STRICT=1 the first one stops the program (exit 255).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  int N, C, H, W, k, is_max;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) wide_pool_param_t;
typedef struct {
  int C;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) wide_copy_param_t;
typedef struct {
  int M, K, N, left_cpc, right_cpc;
  unsigned long long output_addr, left_addr, right_addr;
} __attribute__((packed)) wide_matmul_param_t;
typedef struct {
  int C, H, W, k, tile_rows;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) partial_tiles_param_t;

// Pool of (planes, H, W) with a k x k window, stride 1, no padding.
static std::vector<double> pool_ref(const std::vector<float>& x, int planes, int H, int W, int k,
                                    bool is_max) {
  const int oh = H - k + 1, ow = W - k + 1;
  std::vector<double> y(size_t(planes) * oh * ow);
  for (int c = 0; c < planes; ++c)
    for (int i = 0; i < oh; ++i)
      for (int j = 0; j < ow; ++j) {
        double acc = is_max ? -1e300 : 0.0;
        for (int a = 0; a < k; ++a)
          for (int b = 0; b < k; ++b) {
            const double v = x[(size_t(c) * H + i + a) * W + j + b];
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        y[(size_t(c) * oh + i) * ow + j] = is_max ? acc : acc / (k * k);
      }
  return y;
}

static int wide_pool(bm_handle_t h, int N, int C, int H, int W, int k, bool is_max, unsigned seed) {
  const size_t in_len = size_t(N) * C * H * W, out_len = size_t(N) * C * (H - k + 1) * (W - k + 1);
  const std::vector<float> x = random_floats(in_len, seed, -2.0f, 3.0f);
  DeviceBuffer xd(h, in_len * 4), yd(h, out_len * 4);
  xd.upload(x);
  wide_pool_param_t p{N, C, H, W, k, is_max ? 1 : 0, yd.addr(), xd.addr()};
  BMLIB_SAFE_CALL(okkernel_launch_sync(h, "wide_pool", &p, sizeof p));
  char name[128];
  std::snprintf(name, sizeof name, "wide_pool %s N%d C%d (%d channels) %dx%d k%d",
                is_max ? "max" : "avg", N, C, N * C, H, W, k);
  return contest_compare(name, yd.download(out_len), pool_ref(x, N * C, H, W, k, is_max));
}

static int wide_copy(bm_handle_t h, int C, unsigned seed) {
  const std::vector<float> x = random_floats(size_t(C), seed, 1.0f, 2.0f);
  DeviceBuffer xd(h, size_t(C) * 4), yd(h, size_t(C) * 4);
  xd.upload(x);
  wide_copy_param_t p{C, yd.addr(), xd.addr()};
  BMLIB_SAFE_CALL(okkernel_launch_sync(h, "wide_copy", &p, sizeof p));
  char name[64];
  std::snprintf(name, sizeof name, "wide_copy C%d", C);
  return contest_compare(name, yd.download(size_t(C)), std::vector<double>(x.begin(), x.end()));
}

static int wide_matmul(bm_handle_t h, int M, int K, int N, int lcpc, int rcpc, unsigned seed) {
  const std::vector<float> a = random_floats(size_t(M) * K, seed);
  const std::vector<float> b = random_floats(size_t(K) * N, seed + 1);
  std::vector<double> ref(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int t = 0; t < K; ++t)
        ref[size_t(i) * N + j] += double(a[size_t(i) * K + t]) * b[size_t(t) * N + j];
  DeviceBuffer ad(h, a.size() * 4), bd(h, b.size() * 4), yd(h, ref.size() * 4);
  ad.upload(a);
  bd.upload(b);
  wide_matmul_param_t p{M, K, N, lcpc, rcpc, yd.addr(), ad.addr(), bd.addr()};
  BMLIB_SAFE_CALL(okkernel_launch_sync(h, "wide_matmul", &p, sizeof p));
  char name[96];
  std::snprintf(name, sizeof name, "wide_matmul %dx%d x %dx%d cols_per_channel %d, %d", M, K, K, N,
                lcpc, rcpc);
  return contest_compare(name, yd.download(ref.size()), ref);
}

static int partial_tiles(bm_handle_t h, int C, int H, int W, int k, int T, unsigned seed) {
  const size_t in_len = size_t(C) * H * W, out_len = size_t(C) * (H - k + 1) * (W - k + 1);
  const std::vector<float> x = random_floats(in_len, seed, -2.0f, 3.0f);
  DeviceBuffer xd(h, in_len * 4), yd(h, out_len * 4);
  xd.upload(x);
  partial_tiles_param_t p{C, H, W, k, T, yd.addr(), xd.addr()};
  BMLIB_SAFE_CALL(okkernel_launch_sync(h, "partial_tiles", &p, sizeof p));
  char name[96];
  std::snprintf(name, sizeof name, "partial_tiles C%d %dx%d k%d, tiles of %d output rows", C, H, W,
                k, T);
  return contest_compare(name, yd.download(out_len), pool_ref(x, C, H, W, k, true));
}

typedef struct {
  int n;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) vector_param_t;

static int past_allocation(bm_handle_t h, int n, unsigned seed) {
  const std::vector<float> x = random_floats(size_t(n), seed);
  DeviceBuffer xd(h, size_t(n) * 4), yd(h, size_t(n) * 4);
  xd.upload(x);
  vector_param_t p{n, yd.addr(), xd.addr()};
  BMLIB_SAFE_CALL(okkernel_launch_sync(h, "past_allocation", &p, sizeof p));
  std::vector<double> ref(x.begin(), x.end());
  for (double& v : ref) v *= 2;
  char name[64];
  std::snprintf(name, sizeof name, "past_allocation n%d", n);
  return contest_compare(name, yd.download(size_t(n)), ref);
}

static int dtcm_sum(bm_handle_t h, int n, unsigned seed) {
  const std::vector<float> x = random_floats(size_t(n), seed);
  DeviceBuffer xd(h, size_t(n) * 4), yd(h, 4);
  xd.upload(x);
  vector_param_t p{n, yd.addr(), xd.addr()};
  BMLIB_SAFE_CALL(okkernel_launch_sync(h, "dtcm_sum", &p, sizeof p));
  double sum = 0;
  for (float v : x) sum += v;
  char name[64];
  std::snprintf(name, sizeof name, "dtcm_sum n%d", n);
  return contest_compare(name, yd.download(1), std::vector<double>{sum});
}

int main() {
  bm_handle_t h;
  BMLIB_SAFE_CALL(bm_dev_request(&h, 0));
  int failed = 0, passed = 0;
  auto count = [&](int bad) { (bad ? failed : passed) += 1; };
  // Sophgo's avg_pool demo folds N = 4 into C = 2048 (8192 channels).
  count(wide_pool(h, 4, 2048, 7, 7, 7, false, 1));
  count(wide_pool(h, 4, 2048, 5, 6, 3, true, 2));
  count(wide_pool(h, 3, 1500, 4, 4, 2, false, 3));  // 4500 channels, not a multiple of 64
  count(wide_copy(h, 131072, 4));
  count(wide_copy(h, 70001, 5));
  count(wide_matmul(h, 8, 100, 50, 128, 64, 6));  // right: 64 per channel > 50 columns
  count(wide_matmul(h, 5, 300, 1, 100, 16, 7));   // one output column in a 16-wide channel
  // First a single short tile (reads rows never written), then tiles 4, 4, 1.
  count(partial_tiles(h, 3, 4, 5, 2, 4, 9));
  count(partial_tiles(h, 70, 11, 9, 3, 4, 8));
  count(past_allocation(h, 1000, 10));  // 16 rows of 64: 24 floats past the input
  count(dtcm_sum(h, 777, 11));
  std::printf("%d passed, %d failed\n", passed, failed);
  bm_dev_free(h);
  return failed ? 1 : 0;
}
