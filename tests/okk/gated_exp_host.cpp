// Host program of the gated exponential kernel: contest tolerance against a
// double reference, and the count of okk.h functions the kernel linked.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  unsigned long long x_addr, y_addr, count_addr;
  int c, w, shift;
} __attribute__((packed)) gated_exp_param_t;

constexpr int kDeclaredFunctions = 142;  // functions declared in okk.h

int main() {
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  int failed = 0, passed = 0;
  const int shapes[][3] = {{3, 17, 2}, {64, 40, 0}, {70, 5, 5}};
  unsigned seed = 5;
  for (const auto& s : shapes) {
    gated_exp_param_t p{0, 0, 0, s[0], s[1], s[2]};
    const size_t n = size_t(p.c) * p.w;
    const std::vector<float> x = random_floats(n, seed++, -1.0f, 3.0f);
    DeviceBuffer xd(handle, n * 4), yd(handle, n * 4), cd(handle, 4);
    xd.upload(x);
    p.x_addr = xd.addr();
    p.y_addr = yd.addr();
    p.count_addr = cd.addr();
    BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "gated_exp_contest", &p, sizeof(p)));
    const std::vector<float> y = yd.download(n);
    std::vector<double> ref(n);
    for (size_t i = 0; i < n; ++i)
      ref[i] = x[i] > 0 ? std::exp(-double(x[i])) * double(1 << p.shift) : 0.0;
    char name[96];
    std::snprintf(name, sizeof name, "gated exp c %d w %d shift %d (seed %u)", p.c, p.w, p.shift,
                  seed - 1);
    const bool ok = contest_compare(name, y, ref) == 0;
    const std::vector<float> count_bits = cd.download(1);
    int count;
    std::memcpy(&count, count_bits.data(), 4);
    const bool all = count == kDeclaredFunctions;
    if (!all) std::printf("%s: %d of %d okk.h functions linked\n", name, count, kDeclaredFunctions);
    (ok && all ? passed : failed)++;
  }
  bm_dev_free(handle);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
