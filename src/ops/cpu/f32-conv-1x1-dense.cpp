// Driver of f32-conv-1x1-dense-* (conv_1x1_dense.hpp): which pointwise
// convolutions the kernels take, the chains of the accumulation, and the
// tiles (a slice of positions whose inputs stay in L1 x a block of output
// channels) shared among the threads.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "conv_1x1_dense.hpp"
#include "npukit/parallel.hpp"
#include "ops/conv_mlas_order.hpp"

namespace npukit::cpu {

namespace {

// Output planes this small go to the output-channels-in-lanes kernels
// (f32-conv-1x1-*), which waste no lanes on them.
constexpr int64_t kMinPlane = 257;
// Input floats of one tile's positions (all input channels): L1's share.
constexpr int64_t kTileInputFloats = 8192;

// Whether planes are rows of W floats, H rows each, one after the other.
bool dense_planes(const TensorView& t) {
  return t.stride(3) == 1 && t.stride(2) == t.dim(3) && t.stride(1) >= t.dim(2) * t.dim(3);
}

// Whether two views' address ranges (positive strides) overlap.
bool overlap(const TensorView& a, const TensorView& b) {
  auto end = [](const TensorView& t) {
    int64_t last = 0;
    for (int i = 0; i < t.rank(); ++i) last += (t.dim(i) - 1) * t.stride(i);
    return static_cast<const float*>(t.raw()) + last + 1;
  };
  const auto* a0 = static_cast<const float*>(a.raw());
  const auto* b0 = static_cast<const float*>(b.raw());
  return a0 < end(b) && b0 < end(a);
}

// The chain ends of MLAS's 1x1 order for (IC, OC, block), kept per thread
// (a model's layers: a few shapes): building the order on every call (a step
// per input channel in heap vectors) was set-up on one thread before each
// pointwise layer's region. The reference is read during the call only.
const std::vector<int64_t>& chain_ends_1x1(int64_t ic, int64_t oc, int64_t block) {
  struct Kept {
    int64_t ic, oc, block;
    std::vector<int64_t> chain_end;
  };
  constexpr size_t kMaxKept = 64;
  thread_local std::vector<Kept> kept;
  for (const Kept& k : kept)
    if (k.ic == ic && k.oc == oc && k.block == block) return k.chain_end;
  if (kept.size() == kMaxKept) kept.clear();
  kept.push_back({ic, oc, block, detail::mlas_conv_order(ic, oc, 1, 1, block).chain_end});
  return kept.back().chain_end;
}

}  // namespace

const char* conv_1x1_dense_declines(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  const Window2d& win = c.window;
  if (p.w.dim(2) != 1 || p.w.dim(3) != 1) return "a KxK kernel";
  if (win.stride_h != 1 || win.stride_w != 1 || win.ins_h || win.ins_w)
    return "a stride or inserted zeros";
  if (win.pad_top || win.pad_bottom || win.pad_left || win.pad_right) return "padding";
  if (c.groups != 1) return "groups > 1";
  if (c.accumulation == Fp32Accumulation::interleaved) return "the interleaved accumulation";
  if (c.flush_denormals) return "flushing denormals";
  if (!dense_planes(p.x) || !dense_planes(p.y) || p.x.stride(0) <= 0 || p.y.stride(0) <= 0)
    return "input or output planes not dense";
  if (p.w.stride(1) != 1 || p.w.stride(0) <= 0) return "weights not contiguous per output channel";
  if (overlap(p.x, p.y)) return "input and output overlap";
  if (p.y.dim(2) * p.y.dim(3) < kMinPlane)
    return "an output plane of at most 256 positions (f32-conv-1x1 takes it)";
  return nullptr;
}

void run_conv_1x1_dense(const ConvProblem& p, const Dense1x1Kernel& kernel) {
  const Conv2dParams& c = p.params;
  const int64_t N = p.x.dim(0), IC = p.x.dim(1), OC = p.y.dim(1);
  const int64_t Q = p.y.dim(2) * p.y.dim(3);
  Dense1x1 d{};
  d.x_channel = p.x.stride(1);
  d.w = static_cast<const float*>(p.w.raw());
  d.w_channel = p.w.stride(0);
  d.y_channel = p.y.stride(1);
  d.bias = c.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  d.bias_step = c.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  d.steps = IC;
  if (const int64_t block = mlas_nchwc_block(c.accumulation)) {
    // A 1x1 order sums the input channels in order, in batches (chains).
    const std::vector<int64_t>& chain_end = chain_ends_1x1(IC, OC, block);
    d.fma = true;
    d.chain_end = chain_end.data();
    d.chains = static_cast<int64_t>(chain_end.size());
    d.residual_first = c.result_add && c.residual_first;
  }
  d.result_add = c.result_add && !d.residual_first;
  d.clip = !clip_is_identity(c.clip);
  d.clip_min = c.clip.min;
  d.clip_max = c.clip.max;

  const int64_t step = kernel.positions;
  const int64_t q_tile =
      std::clamp<int64_t>(kTileInputFloats / std::max<int64_t>(1, IC) / step * step, step, 1024);
  const int64_t q_tiles = (Q + q_tile - 1) / q_tile;
  const int64_t row_tiles = (OC + kernel.rows - 1) / kernel.rows;
  const int64_t image_tiles = q_tiles * row_tiles;
  const int64_t grain = std::max<int64_t>(1, 65536 / (kernel.rows * q_tile * IC));
  const auto* x = static_cast<const float*>(p.x.raw());
  auto* y = static_cast<float*>(p.y.raw());
  // Channel blocks vary fastest: consecutive tiles read the same inputs.
  parallel_for(N * image_tiles, grain, [&](int64_t task) {
    const int64_t n = task / image_tiles, qt = task % image_tiles / row_tiles;
    const int64_t oc0 = task % row_tiles * kernel.rows;
    Dense1x1 di = d;
    di.x = x + n * p.x.stride(0);
    di.y = y + n * p.y.stride(0);
    const Dense1x1Tile t{oc0, std::min(kernel.rows, OC - oc0), qt * q_tile,
                         std::min(Q, (qt + 1) * q_tile)};
    kernel.tile(di, t);
  });
}

void run_conv_1x1_dense_avx512(const ConvProblem& p) {
  run_conv_1x1_dense(p, kConv1x1DenseAvx512);
}
void run_conv_1x1_dense_avx2(const ConvProblem& p) {
  run_conv_1x1_dense(p, kConv1x1DenseAvx2);
}

}  // namespace npukit::cpu
