// The cost model's calibration check: runs npukit's own contest-style kernels
// (depthwise_device.c, softmax_device.c) on the 15 fit cases of Sophgo's
// OKKernel contest and compares their estimated device time with the table
// calibration_bm1684.csv (hardware time, the best published team kernel's and
// these kernels' estimates at fit time). Fails when an estimate drifts from
// the table, so a cost-model change that moves the calibration fails CI until
// the table is refitted (calibration_teams_check.sh checks the team kernels
// themselves against the hardware times). `okk_calibration <csv> --print`
// only prints the table.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "contest_check.hpp"
#include "npukit/npu/launch.hpp"

typedef struct {
  int N, C, H, W, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w, dilation_h, dilation_w;
  int has_bias;
  unsigned long long output_addr, input_addr, weight_addr, bias_addr;
} __attribute__((packed)) depthwise_param_t;

typedef struct {
  int N, C, H, W, axis;
  unsigned long long output_addr, input_addr;
} __attribute__((packed)) softmax_param_t;

struct Case {
  std::string op;
  int index = 0;
  int v[14] = {};  // N C H W kh kw pads(4) strides(2) dilations(2)
  double hardware_us = 0, team_us = 0, npukit_us = 0;
  std::string team;
};

static std::vector<Case> read_table(const char* path) {
  std::ifstream in(path);
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream s(line);
    std::string field;
    Case c;
    std::getline(s, c.op, ',');
    std::getline(s, field, ',');
    c.index = std::stoi(field);
    for (int& x : c.v) {
      std::getline(s, field, ',');
      x = std::stoi(field);
    }
    std::getline(s, field, ',');
    c.hardware_us = std::stod(field);
    std::getline(s, field, ',');
    c.team_us = std::stod(field);
    std::getline(s, c.team, ',');
    std::getline(s, field, ',');
    c.npukit_us = std::stod(field);
    cases.push_back(c);
  }
  return cases;
}

// Runs the case and returns the estimated device time of the launch.
static double estimate(bm_handle_t handle, const Case& c) {
  const int N = c.v[0], C = c.v[1], H = c.v[2], W = c.v[3];
  const size_t in_len = size_t(N) * C * H * W;
  if (c.op == "softmax") {
    DeviceBuffer x(handle, in_len * 4), y(handle, in_len * 4);
    x.upload(random_floats(in_len, 10 + c.index, -8.0f, 8.0f));
    // With H = W = 1 the C values of an image are contiguous: a softmax over
    // the last axis of (N, 1, 1, C) is the same computation and layout.
    softmax_param_t p = H * W == 1 ? softmax_param_t{N, 1, 1, C, 3, y.addr(), x.addr()}
                                   : softmax_param_t{N, C, H, W, 1, y.addr(), x.addr()};
    BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "softmax_tiled_contest", &p, sizeof(p)));
    return npukit::npu::last_launch_report().device_us;
  }
  depthwise_param_t p{};
  std::memcpy(&p, c.v, sizeof c.v);  // N..dilation_w share the table's order
  const int oh = (H + p.pad_top + p.pad_bottom - ((p.kh - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  const int ow = (W + p.pad_left + p.pad_right - ((p.kw - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  const size_t out_len = size_t(N) * C * oh * ow, w_len = size_t(C) * p.kh * p.kw;
  DeviceBuffer x(handle, in_len * 4), w(handle, w_len * 4), y(handle, out_len * 4);
  x.upload(random_floats(in_len, 20 + c.index));
  w.upload(random_floats(w_len, 30 + c.index));
  p.input_addr = x.addr();
  p.weight_addr = w.addr();
  p.output_addr = y.addr();
  BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "depthwise_tiled_contest", &p, sizeof(p)));
  return npukit::npu::last_launch_report().device_us;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: %s calibration_bm1684.csv [--print]\n", argv[0]);
    return 2;
  }
  const std::vector<Case> cases = read_table(argv[1]);
  const bool print_only = argc > 2 && std::strcmp(argv[2], "--print") == 0;
  // The stand-in kernels are not the contest's best kernels: their estimate
  // must stay within 2% of the value recorded at fit time, so a cost-model
  // change shows up here and the table (and the docs' calibration table) is
  // refitted with it. npukit_us < 0: the stand-in cannot run the case.
  const double drift_band = 0.02;
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  int failed = 0;
  std::printf("%-10s %4s %12s %12s %7s %12s %12s %7s\n", "op", "case", "hardware_us", "team_us",
              "error", "npukit_us", "at_fit_us", "drift");
  for (const Case& c : cases) {
    if (c.npukit_us < 0) {
      std::printf("%-10s %4d %12.1f %12.1f %+6.1f%% %12s\n", c.op.c_str(), c.index, c.hardware_us,
                  c.team_us, c.team_us > 0 ? 100 * (c.team_us / c.hardware_us - 1) : 0.0,
                  "(no stand-in)");
      continue;
    }
    const double e = estimate(handle, c);
    const double drift = c.npukit_us > 0 ? e / c.npukit_us - 1.0 : 0.0;
    const bool bad = !print_only && (c.npukit_us == 0 || std::fabs(drift) > drift_band);
    std::printf("%-10s %4d %12.1f %12.1f %+6.1f%% %12.1f %12.1f %+6.1f%%%s\n", c.op.c_str(),
                c.index, c.hardware_us, c.team_us,
                c.team_us > 0 ? 100 * (c.team_us / c.hardware_us - 1) : 0.0, e, c.npukit_us,
                100 * drift, bad ? "  FAIL" : "");
    failed += bad;
  }
  bm_dev_free(handle);
  std::printf("%d cases, %d outside the drift band (+-%.0f%%)\n", int(cases.size()), failed,
              100 * drift_band);
  return failed ? 1 : 0;
}
