// Driver of the interleaved fp32 convolution family (conv_interleaved.hpp):
// which problems the row kernels take, the steps of each chain, the per
// channel weights, the planes and their threads, and the family's list (the
// row kernels, then DotChains, then the reference).
#include <algorithm>
#include <vector>

#include "conv_interleaved.hpp"
#include "dot_chains.hpp"
#include "flush_scope.hpp"
#include "npukit/kernels.hpp"
#include "npukit/ops/activation.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

// Above this many steps (ic, kh, kw) per output, DotChains' tiles, which
// share each input load over 16 output channels, read the input fewer times.
constexpr int64_t kMaxSteps = 64;

const char* declines_rows(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  const Window2d& win = c.window;
  if (c.accumulation != Fp32Accumulation::interleaved) return "not the interleaved accumulation";
  if (c.groups != 1) return "groups > 1";
  if (c.flush_denormals && !kCanFlush) return "flushing denormals needs the x86 MXCSR";
  if (win.pad_top < 0 || win.pad_bottom < 0 || win.pad_left < 0 || win.pad_right < 0)
    return "negative pads";
  if (p.y.stride(3) != 1) return "output rows not contiguous";
  if (p.x.dim(1) * p.w.dim(2) * p.w.dim(3) > kMaxSteps)
    return "more than 64 steps (ic, kh, kw) per output (DotChains reads the input fewer times)";
  return nullptr;
}

void run_rows(const ConvProblem& p, void (*kernel)(const InterleavedPlane&)) {
  const Conv2dParams& c = p.params;
  const int64_t N = p.x.dim(0), IC = p.x.dim(1), OC = p.y.dim(1), OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t KW = p.w.dim(3), K = p.w.dim(2) * KW, ICn = (IC + 1) / 2;
  // No slack and no overreads: the kernels load tail lanes under a mask.
  const ConvInput in = prepare_conv_input(p, 0, false);
  // The reference's step order: tap k, pair j, channel of the pair; step s =
  // k * ICn + j goes to chain (s % 2) * 2 + ic % 2.
  std::vector<int64_t> step_ick[4];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < ICn; ++j)
      for (int64_t ic = 2 * j; ic < 2 * j + 2 && ic < IC; ++ic)
        step_ick[((k * ICn + j) % 2) * 2 + ic % 2].push_back(ic * K + k);
  std::vector<int64_t> offset, chain_end;
  std::vector<int64_t> w_at;  // per step: the weight's place in w's output channel
  for (const auto& chain : step_ick) {
    for (int64_t ick : chain) {
      offset.push_back(in.offset[static_cast<size_t>(ick)]);
      w_at.push_back(ick / K * p.w.stride(1) + ick % K / KW * p.w.stride(2) +
                     ick % KW * p.w.stride(3));
    }
    chain_end.push_back(static_cast<int64_t>(offset.size()));
  }
  const auto steps = static_cast<int64_t>(offset.size());
  std::vector<float> weights(static_cast<size_t>(OC * steps));
  const float* wbase = static_cast<const float*>(p.w.raw());
  for (int64_t oc = 0; oc < OC; ++oc)
    for (int64_t e = 0; e < steps; ++e)
      weights[static_cast<size_t>(oc * steps + e)] =
          wbase[oc * p.w.stride(0) + w_at[static_cast<size_t>(e)]];
  const float* bias = c.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  const int64_t bias_step = c.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  float* ybase = static_cast<float*>(p.y.raw());
  const int64_t work = std::max<int64_t>(1, OH * OW * std::max<int64_t>(steps, 1));
  parallel_ranges(N * OC, std::max<int64_t>(1, 32768 / work), [&](int64_t b, int64_t e) {
    FlushScope scope(c.flush_denormals);
    for (int64_t noc = b; noc < e; ++noc) {
      const int64_t n = noc / OC, oc = noc % OC;
      InterleavedPlane t;
      t.x = in.x + n * IC * in.plane;
      t.offset = offset.data();
      t.w = weights.data() + oc * steps;
      t.chain_end = chain_end.data();
      t.y = ybase + n * p.y.stride(0) + oc * p.y.stride(1);
      t.oh = OH;
      t.ow = OW;
      t.wq = in.wq;
      t.y_row = p.y.stride(2);
      t.has_bias = bias != nullptr;
      t.result_add = c.result_add;
      t.bias = bias ? bias[oc * bias_step] : 0.0f;
      kernel(t);
    }
  });
  // The fused clip: the unfused Clip, on the finished output.
  if (!clip_is_identity(c.clip)) ref::clip_f32(p.y, p.y, c.clip);
}

#if defined(__x86_64__)
void run_rows_avx512(const ConvProblem& p) {
  run_rows(p, f32_conv_interleaved_rows_avx512);
}
void run_rows_avx2(const ConvProblem& p) {
  run_rows(p, f32_conv_interleaved_rows_avx2);
}
#endif

const char* declines_dot_chains(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  if (c.accumulation != Fp32Accumulation::interleaved) return "not the interleaved accumulation";
  if (c.flush_denormals && !dot_chains_can_flush()) return "flushing denormals needs the x86 MXCSR";
  if (c.groups != 1) return "groups > 1";
  return nullptr;
}
void run_dot_chains(const ConvProblem& p) {
  conv2d_f32(p.x, p.w, p.bias, p.y, p.params);
  if (!clip_is_identity(p.params.clip)) ref::clip_f32(p.y, p.y, p.params.clip);
}

void run_reference(const ConvProblem& p) {
  ref::conv2d_f32_interleaved(p.x, p.w, p.bias, p.y, p.params);
  if (!clip_is_identity(p.params.clip)) ref::clip_f32(p.y, p.y, p.params.clip);
}

constexpr const char* kRows =
    "interleaved accumulation, groups = 1, output rows contiguous, no negative pads, at most 64 "
    "steps (ic, kh, kw) per output";

}  // namespace

const KernelList<ConvProblem>& conv_interleaved_kernels() {
  static const KernelList<ConvProblem> list{
      "conv2d-interleaved",
      {
#if defined(__x86_64__)
          {"f32-conv-interleaved-rows-avx512", Isa::avx512, kRows, declines_rows, run_rows_avx512},
          {"f32-conv-interleaved-rows-avx2", Isa::avx2, kRows, declines_rows, run_rows_avx2},
#endif
          {"f32-conv-interleaved-dotchains", Isa::portable, "groups = 1", declines_dot_chains,
           run_dot_chains},
          {"f32-conv-interleaved-reference", Isa::portable, "always (ref::conv2d_f32_interleaved)",
           nullptr, run_reference, true}}};
  return list;
}

}  // namespace npukit::cpu
