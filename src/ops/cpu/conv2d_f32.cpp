// Fast fp32 convolution for both accumulations, bit for bit the reference
// kernels: every output keeps its order of rounded operations, stated as the
// chains of DotChains (interleaved: the four accumulators L0..L3; sequential:
// one accumulator over (ic, kh, kw)); speed comes from computing 96 outputs
// at once in SIMD lanes, register blocking and threads.
#include <cmath>

#include "dot_chains.hpp"
#include "finite.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

// Input planes with the padding and inserted zeros written out, so that every
// tap (real or not) is one load: [N][C][Hp][Wp].
struct PaddedInput {
  std::vector<float> data;
  int64_t Hp = 0, Wp = 0, plane = 0, C = 0;
};

void pad_input(const TensorView& x, const Window2d& win, PaddedInput& r) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  r.C = C;
  r.Hp = (H - 1) * (win.ins_h + 1) + 1 + win.pad_top + win.pad_bottom;
  r.Wp = (W - 1) * (win.ins_w + 1) + 1 + win.pad_left + win.pad_right;
  r.plane = r.Hp * r.Wp;
  r.data.assign(static_cast<size_t>(N * C * r.plane), 0.0f);
  parallel_for(N * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    float* dst = r.data.data() + nc * r.plane;
    for (int64_t h = 0; h < H; ++h)
      for (int64_t ww = 0; ww < W; ++ww)
        dst[(win.pad_top + h * (win.ins_h + 1)) * r.Wp + win.pad_left + ww * (win.ins_w + 1)] =
            x.at<float>(n, c, h, ww);
  });
}

// Buffers kept per calling thread and reused: glibc maps each large block
// afresh, and faulting in ~2 MB of new zero pages per call costs more than
// the copies themselves.
struct Scratch {
  PaddedInput input;
  DotChains chains;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Each chain's steps as (channel within the group) * K + tap, in its order:
// one chain in the sequential order, BM1684's four interleaved accumulators
// otherwise (channel pairs and taps alternating between them).
std::vector<std::vector<int64_t>> chain_step_order(int64_t IC, int64_t ICG, int64_t K,
                                                   bool interleaved) {
  std::vector<std::vector<int64_t>> chain_steps(interleaved ? 4 : 1);
  if (interleaved) {
    const int64_t ICn = (IC + 1) / 2;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < ICn; ++j)
        for (int64_t ic = 2 * j; ic < 2 * j + 2 && ic < IC; ++ic)
          chain_steps[static_cast<size_t>(((k * ICn + j) % 2) * 2 + ic % 2)].push_back(ic * K + k);
  } else {
    for (int64_t ick = 0; ick < ICG * K; ++ick) chain_steps[0].push_back(ick);
  }
  return chain_steps;
}

}  // namespace

bool conv2d_f32(const TensorView& x, const TensorView& w, const TensorView& bias,
                const TensorView& y, const Conv2dParams& p) {
  const Window2d& win = p.window;
  const bool interleaved = p.accumulation == Fp32Accumulation::interleaved;
  if (mlas_nchwc_block(p.accumulation)) return false;  // not its chains
  if (p.flush_denormals && !dot_chains_can_flush()) return false;
  if (interleaved && p.groups != 1) return false;
  // The sequential reference skips padded and inserted taps, where we add
  // 0 * w instead: the same sum (the accumulator is never -0) unless some w
  // is infinite or NaN.
  const bool has_zero_taps =
      win.pad_top || win.pad_bottom || win.pad_left || win.pad_right || win.ins_h || win.ins_w;
  if (!interleaved && has_zero_taps && !all_finite_f32(w)) return false;

  const int64_t N = x.dim(0), IC = x.dim(1);
  const int64_t OC = y.dim(1), OH = y.dim(2), OW = y.dim(3);
  const int64_t G = p.groups, ICG = IC / G, OCG = OC / G;
  const int64_t KH = w.dim(2), KW = w.dim(3), K = KH * KW;
  Scratch& scratch_buffers = scratch();
  PaddedInput& xp = scratch_buffers.input;
  pad_input(x, win, xp);
  const float* b = p.has_bias ? static_cast<const float*>(bias.raw()) : nullptr;
  const int64_t bias_step = p.has_bias ? bias.stride(bias.rank() == 1 ? 0 : 1) : 0;

  DotChains& d = scratch_buffers.chains;
  d.base.clear();
  d.offset.clear();
  d.chain_end.clear();
  d.src = xp.data.data();
  d.flush_denormals = p.flush_denormals;
  d.base.resize(static_cast<size_t>(N * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        d.base[static_cast<size_t>((n * OH + oh) * OW + ow)] =
            n * IC * xp.plane + oh * win.stride_h * xp.Wp + ow * win.stride_w;
  const std::vector<std::vector<int64_t>> chain_steps = chain_step_order(IC, ICG, K, interleaved);
  std::vector<int64_t> step_ick;
  for (const auto& c : chain_steps) {
    step_ick.insert(step_ick.end(), c.begin(), c.end());
    d.chain_end.push_back(static_cast<int64_t>(step_ick.size()));
  }
  for (int64_t ick : step_ick) {
    const int64_t ic = ick / K, kh = ick % K / KW, kw = ick % KW;
    d.offset.push_back(ic * xp.plane + kh * win.dilation_h * xp.Wp + kw * win.dilation_w);
  }

  for (int64_t g = 0; g < G; ++g) {
    d.src = xp.data.data() + g * ICG * xp.plane;
    d.pack_columns(OCG, [&](int64_t e, int64_t col) {
      const int64_t ick = step_ick[static_cast<size_t>(e)];
      return w.at<float>(g * OCG + col, ick / K, ick % K / KW, ick % KW);
    });
    run_dot_chains(d, [&](const DotTile& t) {
      for (int64_t i = 0; i < t.positions; ++i) {
        const int64_t pos = t.p0 + i, n = pos / (OH * OW), oh = pos / OW % OH, ow = pos % OW;
        for (int64_t l = 0; l < t.cols; ++l) {
          const int64_t oc = g * OCG + t.col0 + l;
          float& out = y.at<float>(n, oc, oh, ow);
          if (interleaved) {
            // The exact operations of ref::conv2d_f32_interleaved.
            float r = (t.sums[0][i][l] + t.sums[2][i][l]) + (t.sums[1][i][l] + t.sums[3][i][l]);
            if (b) r = r + b[oc * bias_step];
            out = p.result_add ? r + out : r;
          } else {
            // The exact operations of ref::conv2d_f32.
            float acc = t.sums[0][i][l];
            if (b) acc += b[oc * bias_step];
            out = p.result_add ? out + acc : acc;
          }
        }
      }
    });
  }
  return true;
}

}  // namespace npukit::cpu
