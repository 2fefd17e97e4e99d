// Host program of the conv2d kernel test: packs weights in 2IC order, runs the
// kernel through bmlib, checks with the contest tolerance against a
// double-precision reference.
#include <cstdio>
#include <vector>

#include "contest_check.hpp"

typedef struct {
  int N, IC, H, W, OC, kh, kw;
  int pad_top, pad_bottom, pad_left, pad_right;
  int stride_h, stride_w, dilation_h, dilation_w;
  int has_bias;
  unsigned long long output_addr, input_addr, weight_addr, bias_addr;
} __attribute__((packed)) conv_param_t;

static int run(bm_handle_t handle, conv_param_t p, unsigned seed) {
  const int oh =
      (p.H + p.pad_top + p.pad_bottom - ((p.kh - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  const int ow =
      (p.W + p.pad_left + p.pad_right - ((p.kw - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  const size_t in_len = size_t(p.N) * p.IC * p.H * p.W, w_len = size_t(p.OC) * p.IC * p.kh * p.kw;
  const size_t out_len = size_t(p.N) * p.OC * oh * ow;
  const int icn = (p.IC + 1) / 2, khkw = p.kh * p.kw;
  const std::vector<float> x = random_floats(in_len, seed), w = random_floats(w_len, seed + 1),
                           b = random_floats(p.OC, seed + 2);
  // 2IC: index ((ic/2)*OC*kh*kw + oc*kh*kw + k)*2 + ic%2; an odd IC's dummy is left as 7 (ignored).
  std::vector<float> w2(size_t(icn) * p.OC * khkw * 2, 7.0f);
  for (int oc = 0; oc < p.OC; ++oc)
    for (int ic = 0; ic < p.IC; ++ic)
      for (int k = 0; k < khkw; ++k)
        w2[((size_t(ic / 2) * p.OC + oc) * khkw + k) * 2 + ic % 2] =
            w[(size_t(oc) * p.IC + ic) * khkw + k];
  DeviceBuffer xd(handle, in_len * 4), wd(handle, w2.size() * 4), bd(handle, size_t(p.OC) * 4),
      yd(handle, out_len * 4);
  xd.upload(x);
  wd.upload(w2);
  bd.upload(b);
  p.input_addr = xd.addr();
  p.weight_addr = wd.addr();
  p.bias_addr = bd.addr();
  p.output_addr = yd.addr();
  BMLIB_SAFE_CALL(okkernel_launch_sync(handle, "conv2d_2ic_contest", &p, sizeof(p)));
  const std::vector<float> y = yd.download(out_len);
  std::vector<double> ref(out_len);
  for (int n = 0; n < p.N; ++n)
    for (int oc = 0; oc < p.OC; ++oc)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double acc = p.has_bias ? b[oc] : 0.0;
          for (int ic = 0; ic < p.IC; ++ic)
            for (int u = 0; u < p.kh; ++u)
              for (int v = 0; v < p.kw; ++v) {
                const int h = i * p.stride_h - p.pad_top + u * p.dilation_h;
                const int ww = j * p.stride_w - p.pad_left + v * p.dilation_w;
                if (h < 0 || h >= p.H || ww < 0 || ww >= p.W) continue;
                acc += double(x[((size_t(n) * p.IC + ic) * p.H + h) * p.W + ww]) *
                       w[((size_t(oc) * p.IC + ic) * p.kh + u) * p.kw + v];
              }
          ref[((size_t(n) * p.OC + oc) * oh + i) * ow + j] = acc;
        }
  char name[160];
  std::snprintf(name, sizeof name,
                "conv2d N%d IC%d %dx%d OC%d k%dx%d pad%d,%d,%d,%d s%d,%d d%d,%d bias%d (seed %u)",
                p.N, p.IC, p.H, p.W, p.OC, p.kh, p.kw, p.pad_top, p.pad_bottom, p.pad_left,
                p.pad_right, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.has_bias, seed);
  return contest_compare(name, y, ref);
}

int main() {
  bm_handle_t handle;
  BMLIB_SAFE_CALL(bm_dev_request(&handle, 0));
  conv_param_t cases[] = {
      {3, 5, 9, 11, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {2, 8, 12, 12, 16, 3, 3, 0, 2, 1, 0, 2, 2, 2, 1, 0, 0, 0, 0, 0},
      {1, 1, 7, 7, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {4, 3, 16, 10, 130, 5, 2, 2, 2, 0, 1, 3, 1, 1, 2, 1, 0, 0, 0, 0},
  };
  int failed = 0;
  unsigned seed = 2024;
  for (const conv_param_t& c : cases) failed += run(handle, c, seed += 10) != 0;
  bm_dev_free(handle);
  std::printf("%d passed, %d failed\n", int(sizeof cases / sizeof cases[0]) - failed, failed);
  return failed ? 1 : 0;
}
