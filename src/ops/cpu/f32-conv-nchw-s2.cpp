// f32-conv-nchw-s2-avx512's conditions and its split into tasks
// (conv_nchw_s2.hpp); the band kernel is f32-conv-nchw-s2-avx512.cpp.
#include <algorithm>
#include <vector>

#include "conv_nchw_s2.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

const char* conv_nchw_s2_declines(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  const Window2d& win = c.window;
  const int64_t block = mlas_nchwc_block(c.accumulation);
  if (block == 0) return "not an mlas_nchwc accumulation";
  if (c.groups != 1) return "groups > 1";
  if (p.x.dim(1) >= block)
    return "input channels not fewer than the NCHWc block (not MLAS's NCHW-input chains)";
  if (p.w.dim(2) != 3 || p.w.dim(3) != 3) return "not a 3x3 kernel";
  if (win.stride_h != 2 || win.stride_w != 2) return "not stride 2";
  if (win.dilation_h != 1 || win.dilation_w != 1) return "dilation";
  if (win.ins_h || win.ins_w) return "inserted zeros";
  if (p.x.stride(3) != 1) return "input rows not contiguous";
  return nullptr;
}

namespace {

// w (OC, IC, 3, 3) as the blocks read it (ConvS2Band::packed).
std::vector<float> pack_weights(const TensorView& w) {
  const int64_t OC = w.dim(0), IC = w.dim(1);
  std::vector<float> packed(static_cast<size_t>(OC * IC * 9));
  for (int64_t oc0 = 0; oc0 < OC; oc0 += kConvS2Rows) {
    const int64_t rows = std::min<int64_t>(kConvS2Rows, OC - oc0);
    float* block = packed.data() + oc0 * IC * 9;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < IC; ++c)
        for (int64_t t = 0; t < 9; ++t)
          block[(c * 9 + t) * rows + r] = w.at<float>(oc0 + r, c, t / 3, t % 3);
  }
  return packed;
}

}  // namespace

void run_conv_nchw_s2_avx512(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  const int64_t N = p.x.dim(0), OH = p.y.dim(2), OW = p.y.dim(3);
  ConvS2Band b{};
  b.ic = p.x.dim(1);
  b.h = p.x.dim(2);
  b.w = p.x.dim(3);
  b.x_channel = p.x.stride(1);
  b.x_row = p.x.stride(2);
  b.oc = p.y.dim(1);
  const std::vector<float> packed = pack_weights(p.w);
  b.packed = packed.data();
  b.ow = OW;
  b.y_channel = p.y.stride(1);
  b.y_row = p.y.stride(2);
  b.vectors_per_row = (OW + 15) / 16;
  std::vector<float> bias;
  if (c.has_bias) {
    const auto* from = static_cast<const float*>(p.bias.raw());
    const int64_t step = p.bias.stride(p.bias.rank() == 1 ? 0 : 1);
    for (int64_t o = 0; o < b.oc; ++o) bias.push_back(from[o * step]);
    b.bias = bias.data();
  }
  b.pad_top = c.window.pad_top;
  b.pad_left = c.window.pad_left;
  b.result_add = c.result_add;
  b.residual_first = c.result_add && c.residual_first;
  b.clip = !clip_is_identity(c.clip);
  b.clip_min = c.clip.min;
  b.clip_max = c.clip.max;
  // Tasks of two output rows (the stem: 14 vectors, 28 KB of output and
  // 13 KB of input rows, 112 / 2 tasks per image).
  const int64_t vectors = OH * b.vectors_per_row, band = 2 * b.vectors_per_row;
  const int64_t tasks = (vectors + band - 1) / band;
  const auto* x = static_cast<const float*>(p.x.raw());
  auto* y = static_cast<float*>(p.y.raw());
  parallel_for(N * tasks, 1, [&](int64_t t) {
    ConvS2Band task = b;
    const int64_t n = t / tasks;
    task.x = x + n * p.x.stride(0);
    task.y = y + n * p.y.stride(0);
    task.k0 = t % tasks * band;
    task.k1 = std::min(vectors, task.k0 + band);
    conv_nchw_s2_band_avx512(task);
  });
}

}  // namespace npukit::cpu
