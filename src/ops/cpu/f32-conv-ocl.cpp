// Driver of the fp32 convolution's output-channels-in-lanes form: packs the
// weights in the kernel's blocks of channels (or takes them packed when the
// model was planned), lists the real output positions (no q-layout padding
// columns) and splits them evenly into tiles, threads over (image, group,
// channel block, positions). Under an mlas_nchwc accumulation the weights are
// packed in MLAS's step order and the tiles run its FMA chains.
#include <algorithm>
#include <array>
#include <vector>

#include "conv_nchw.hpp"
#include "finite.hpp"
#include "npukit/parallel.hpp"
#include "npukit/window.hpp"
#include "ops/conv_mlas_order.hpp"

namespace npukit::cpu {

namespace {

int64_t blocks_of(int64_t ocg, int64_t block) {
  return (ocg + block - 1) / block;
}

// The packing's step order: (ic, kh, kw), or MLAS's chains for an
// mlas_nchwc accumulation (the order prepare_conv_input gives the offsets).
std::vector<int64_t> step_order(const TensorView& w, int64_t groups,
                                Fp32Accumulation accumulation) {
  const int64_t K = w.dim(2) * w.dim(3), steps = w.dim(1) * K;
  if (const int64_t nchwc = mlas_nchwc_block(accumulation))
    return detail::mlas_conv_order(w.dim(1), w.dim(0) / groups, K, groups, nchwc).step;
  std::vector<int64_t> order(static_cast<size_t>(steps));
  for (int64_t s = 0; s < steps; ++s) order[static_cast<size_t>(s)] = s;
  return order;
}

void pack_into(const TensorView& w, int64_t groups, int64_t block, Fp32Accumulation accumulation,
               std::vector<float>& data) {
  const int64_t OC = w.dim(0), OCG = OC / groups, blocks = blocks_of(OCG, block);
  const int64_t KH = w.dim(2), KW = w.dim(3), K = KH * KW;
  const std::vector<int64_t> order = step_order(w, groups, accumulation);
  const auto steps = static_cast<int64_t>(order.size());
  data.assign(static_cast<size_t>(groups * blocks * steps * block), 0.0f);
  const auto* src = static_cast<const float*>(w.raw());
  for (int64_t oc = 0; oc < OC; ++oc) {
    const int64_t g = oc / OCG, b = oc % OCG / block, lane = oc % OCG % block;
    float* dst = data.data() + (g * blocks + b) * steps * block + lane;
    for (int64_t s : order) {
      const int64_t ic = s / K, kh = s % K / KW, kw = s % KW;
      *dst = src[oc * w.stride(0) + ic * w.stride(1) + kh * w.stride(2) + kw * w.stride(3)];
      dst += block;
    }
  }
}

ConvPackedWeights& packed_scratch() {
  thread_local ConvPackedWeights s;
  return s;
}

bool matches(const ConvPackedWeights& pw, const TensorView& w, int64_t groups, int64_t block,
             Fp32Accumulation accumulation) {
  return pw.oc == w.dim(0) && pw.icg == w.dim(1) && pw.kh == w.dim(2) && pw.kw == w.dim(3) &&
         pw.groups == groups && pw.block == block &&
         pw.order_block == mlas_nchwc_block(accumulation);
}

}  // namespace

std::shared_ptr<const ConvPackedWeights> pack_conv_weights(const TensorView& w, int64_t groups,
                                                           int64_t block,
                                                           Fp32Accumulation accumulation) {
  auto pw = std::make_shared<ConvPackedWeights>();
  pw->oc = w.dim(0);
  pw->icg = w.dim(1);
  pw->kh = w.dim(2);
  pw->kw = w.dim(3);
  pw->groups = groups;
  pw->block = block;
  pw->order_block = mlas_nchwc_block(accumulation);
  pack_into(w, groups, block, accumulation, pw->data);
  pw->source = w.raw();
  pw->finite = all_finite_f32(w);
  return pw;
}

namespace {

bool packs_w(const ConvProblem& p) {
  const ConvPackedWeights* pw = p.packed;
  return pw != nullptr && pw->source == p.w.raw() && p.w.is_contiguous() && pw->oc == p.w.dim(0) &&
         pw->icg == p.w.dim(1) && pw->kh == p.w.dim(2) && pw->kw == p.w.dim(3);
}

}  // namespace

bool conv_weights_finite(const ConvProblem& p) {
  return packs_w(p) ? p.packed->finite : all_finite_f32(p.w);
}

bool conv_weights_known_finite(const ConvProblem& p) {
  return packs_w(p) && p.packed->finite;
}

namespace {

// Positions per chain-outer task: their totals (64 floats each, 16 KB)
// stay in L1/L2 and a chain's packed weights (36 KB for 16 channels x 9 taps
// x 64) are read from L1 by every tile of the task, so a layer's weights come
// from memory once, not once per tile (resnet18's 7x7 layers, whose 9.4 MB of
// weights are not in cache in a model: 8-12% faster; its stem 1.57 ms against
// 1.79 tile-at-a-time; with the weights hot in L3, BM_Layer, 64 positions,
// 1000 and one tile measured the same).
constexpr int64_t kChainRunPositions = 64;
// Tasks a layer is cut into at least, runs made shorter if need be: the
// threads take whole tasks, so 3 channel blocks of 64, 64 and 32 (mobilenet_v2's
// 7x7 projections, 960 -> 160) left one thread idle a third of the layer.
constexpr int64_t kMinTasks = 8;

// A task's tiles and their totals, kept per thread.
struct TaskTiles {
  std::vector<OclTile> tile;
  std::vector<float> tot;
};
TaskTiles& task_tiles() {
  thread_local TaskTiles s;
  return s;
}

// Runs of consecutive outputs; stored by runs when there are at most two (a
// row break), else scattered.
void set_runs(OclTile& t) {
  int64_t runs = 0;
  for (int64_t i = 0; i < t.positions && runs <= 2; ++i)
    if (i == 0 || t.y_at[i] != t.y_at[i - 1] + 1) t.run_start[runs++] = static_cast<int32_t>(i);
  if (runs <= 2) {
    t.run_start[runs] = static_cast<int32_t>(t.positions);
    t.runs = runs;
  }
}

// Channels-last outputs from first's first position to last's last
// (contiguous), asked for writing: in a model they are cold, and a
// residual_first tile reads them in its first chain.
void prefetch_outputs(const OclTile& first, const OclTile& last) {
  const float* from = first.y + first.y_at[0];
  const float* to = last.y + last.y_at[last.positions - 1] + last.rows;
  for (const float* a = from; a < to; a += 16) __builtin_prefetch(a, 1, 2);
}

// Output bytes beyond which a conv's outputs come from memory (an L2's worth).
constexpr int64_t kOutputsFromMemory = int64_t{1} << 20;

}  // namespace

namespace {

// The runner's packed weights when they fit this kernel, else a packing made
// here (in this thread's scratch).
const ConvPackedWeights* packed_weights_for(const ConvProblem& p, int64_t block) {
  const Conv2dParams& c = p.params;
  const ConvPackedWeights* pw = p.packed;
  if (pw == nullptr || !matches(*pw, p.w, c.groups, block, c.accumulation)) {
    ConvPackedWeights& s = packed_scratch();
    s.oc = 0;  // not a packing of any w while it is rewritten
    pack_into(p.w, c.groups, block, c.accumulation, s.data);
    pw = &s;
  }
  return pw;
}

// Each output position's input offset (q) and output offset (y_at), kept
// per thread for the shapes met (they depend on the output plane and the
// two layouts' pitches only): built per call, 3136 positions took 2-4 us
// before each 56x56 layer, ~20 us per resnet18 run. Filled by index:
// push_back's capacity check per position was ~1% of the stem (12544).
struct PositionTables {
  std::array<int64_t, 6> key;  // OH, OW, q_row, q_col, y_row, y_col
  std::vector<int64_t> q, y_at;
};

const PositionTables& position_tables(const ConvProblem& p, const ConvInput& in) {
  const int64_t OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t y_row = p.y.stride(2), y_col = p.y.stride(3);
  const std::array<int64_t, 6> key{OH, OW, in.q_row, in.q_col, y_row, y_col};
  thread_local std::vector<PositionTables> kept;
  for (const PositionTables& t : kept)
    if (t.key == key) return t;
  if (kept.size() >= 32) kept.clear();  // a bound for programs of many shapes
  PositionTables& t = kept.emplace_back();
  t.key = key;
  t.q.resize(static_cast<size_t>(OH * OW));
  t.y_at.resize(static_cast<size_t>(OH * OW));
  for (int64_t oh = 0, i = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow, ++i) {
      t.q[static_cast<size_t>(i)] = oh * in.q_row + ow * in.q_col;
      t.y_at[static_cast<size_t>(i)] = oh * y_row + ow * y_col;
    }
  return t;
}

// Per output row, the steps every chain starts (lead) or ends (trail) with
// whose taps are padding or inserted zeros all along the row (kernel rows
// above or below the input), as ocl_chain skips them; 0 where the chains
// do not all start (end) with the same number of such steps.
struct RowSkips {
  std::vector<int64_t> lead, trail;
};

// Steps at the start (or end) of every chain whose kernel row `edge` takes;
// 0 unless all chains agree.
template <class Edge>
int64_t common_edge_steps(const ConvInput& in, int64_t K, int64_t KW, bool from_end, Edge edge) {
  int64_t common = -1;
  for (size_t c = 0; c < in.chain_end.size(); ++c) {
    const int64_t b = c == 0 ? 0 : in.chain_end[c - 1], e = in.chain_end[c];
    int64_t n = 0;
    while (n < e - b &&
           edge(in.w_index[static_cast<size_t>(from_end ? e - 1 - n : b + n)] % K / KW))
      ++n;
    if (common >= 0 && n != common) return 0;
    common = n;
  }
  return std::max<int64_t>(common, 0);
}

RowSkips row_skips(const ConvProblem& p, const ConvInput& in) {
  const int64_t OH = p.y.dim(2), KH = p.w.dim(2), KW = p.w.dim(3);
  RowSkips s;
  s.lead.assign(static_cast<size_t>(OH), 0);
  s.trail.assign(static_cast<size_t>(OH), 0);
  if (in.chain_end.empty() || in.w_index.size() != in.offset.size()) return s;
  const AxisTaps th = axis_taps(axis_h(p.params.window, p.x.dim(2)), OH);
  // Steps by the number of kernel rows skipped (-1: not yet counted).
  std::vector<int64_t> lead_of(static_cast<size_t>(KH + 1), -1), trail_of(lead_of);
  for (int64_t oh = 0; oh < OH; ++oh) {
    int64_t top = 0, bottom = 0;
    while (top < KH && th.kind_at(oh, top) != Tap::input) ++top;
    while (bottom < KH - top && th.kind_at(oh, KH - 1 - bottom) != Tap::input) ++bottom;
    int64_t& lead = lead_of[static_cast<size_t>(top)];
    if (lead < 0)
      lead = common_edge_steps(in, KH * KW, KW, false, [&](int64_t kh) { return kh < top; });
    int64_t& trail = trail_of[static_cast<size_t>(bottom)];
    if (trail < 0)
      trail =
          common_edge_steps(in, KH * KW, KW, true, [&](int64_t kh) { return kh >= KH - bottom; });
    s.lead[static_cast<size_t>(oh)] = lead;
    s.trail[static_cast<size_t>(oh)] = trail;
  }
  return s;
}

// A task's tiles chain-outer: each chain over every tile before the next
// chain (running totals per tile in tiles.tot). While a chain runs, its
// tiles ask the weights read next into L2, each tile a slice of them (all
// in one tile stalled on the outstanding misses): the next chain's when
// `cold` (the task is its block's first: later tasks find them in L2), after
// the last chain those at next_block (the block the thread's next task
// likely runs), if any. block: floats per step.
void run_chain_outer(TaskTiles& tiles, const OclKernel& kernel, int64_t chains, int64_t block,
                     bool cold, const float* next_block, bool streamed) {
  OclTile& first = tiles.tile.front();
  // Channels-last outputs: a task's lines asked at its start; when they come
  // from memory (`streamed`: resnet18's stem, 3.2 MB), the first tile's at
  // the start and each next tile's while its predecessor runs the first
  // chain (a task's 256 lines at once filled the outstanding misses: 5% of
  // the stem; spread so, the layers whose outputs were in L2 ran 1-2% slower).
  const bool outputs = first.y_channel == 1;
  if (outputs) prefetch_outputs(first, streamed ? first : tiles.tile.back());
  tiles.tot.resize(tiles.tile.size() * kOclTotFloats);
  for (size_t i = 0; i < tiles.tile.size(); ++i)
    tiles.tile[i].tot = tiles.tot.data() + i * kOclTotFloats;
  const int64_t* end = first.chain_end;
  OclTile* tile = tiles.tile.data();
  const auto n = static_cast<int64_t>(tiles.tile.size());
  for (int64_t chain = 0; chain < chains; ++chain) {
    const bool last = chain + 1 == chains;
    const float* next = last ? next_block : cold ? first.w + end[chain] * block : nullptr;
    const int64_t len = last ? end[0] : end[chain + 1] - end[chain];
    // Tile i's slice of the prefetch: steps [i * len / n, (i + 1) * len / n),
    // its ends stepped without a division per tile.
    const int64_t whole = len / n, part = len % n;
    for (int64_t i = 0, from = 0, frac = 0; i < n; ++i) {
      OclTile& t = tile[i];
      frac += part;
      const int64_t to = from + whole + (frac >= n ? 1 : 0);
      if (frac >= n) frac -= n;
      t.chain0 = chain;
      t.chain1 = chain + 1;
      t.prefetch = next == nullptr ? nullptr : next + from * block;
      t.prefetch_steps = to - from;
      from = to;
    }
    if (outputs && streamed && chain == 0) {
      for (int64_t i = 0; i < n; ++i) {
        if (i + 1 < n) prefetch_outputs(tile[i + 1], tile[i + 1]);
        kernel.tile(tile[i]);
      }
    } else if (kernel.pass != nullptr) {
      kernel.pass(tile, n);
    } else {
      for (int64_t i = 0; i < n; ++i) kernel.tile(tile[i]);
    }
  }
}

// The fields every tile of a call shares (first: the old output starts the
// totals). Each tile is copied from it, then given its task's and positions'
// fields: copying a per-task prototype stalled on store forwarding (its
// fields had just been written one by one; ~2% of the stem).
OclTile call_tile(const ConvProblem& p, const ConvInput& in, bool first) {
  const Conv2dParams& c = p.params;
  OclTile t{};
  t.offset = in.offset.data();
  t.steps = static_cast<int64_t>(in.offset.size());
  t.y_channel = p.y.stride(1);
  t.result_add = c.result_add && !first;
  t.clip = !clip_is_identity(c.clip);
  t.clip_min = c.clip.min;
  t.clip_max = c.clip.max;
  if (!in.chain_end.empty()) {
    t.fma = true;
    t.chain_end = in.chain_end.data();
    t.chains = static_cast<int64_t>(in.chain_end.size());
    t.residual_first = first;
  }
  return t;
}

}  // namespace

void run_conv_ocl(const ConvProblem& p, const OclKernel& kernel) {
  const Conv2dParams& c = p.params;
  const int64_t N = p.x.dim(0), OC = p.y.dim(1), OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t block = kernel.channels;
  const int64_t G = c.groups, OCG = OC / G, blocks = blocks_of(OCG, block);
  const ConvInput in =
      is_channels_last(p.x) ? prepare_conv_input_channels_last(p) : prepare_conv_input(p, 0, false);
  const int64_t steps = static_cast<int64_t>(in.offset.size());
  const ConvPackedWeights* pw = packed_weights_for(p, block);
  // Kept by this thread until its next call (helpers read them meanwhile).
  const PositionTables& tables = position_tables(p, in);
  const std::vector<int64_t>&q = tables.q, &y_at = tables.y_at;
  const int64_t positions = OH * OW;
  const int64_t most = kernel.max_positions(std::min(OCG, block));
  const int64_t chunks = (positions + most - 1) / most;
  // Chain-outer driving: a task is a run of chunks (tiles) that runs each
  // chain over all its tiles before the next chain.
  const bool chain_outer = kernel.resumes && in.chain_end.size() > 1;
  const int64_t run = chain_outer ? std::max<int64_t>(1, kChainRunPositions / most) : 1;
  const int64_t block_tasks = N * G * blocks;
  const int64_t runs_per_block = std::min(
      chunks, std::max((chunks + run - 1) / run, (kMinTasks + block_tasks - 1) / block_tasks));
  const int64_t tasks = block_tasks * runs_per_block;
  const float* bias = c.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  const int64_t bias_step = c.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  float* ybase = static_cast<float*>(p.y.raw());
  const int64_t flops_per_task = 2 * block * most * (chunks / runs_per_block) * steps;
  // The old output starts the FMA chains' total (mlas orders only).
  const bool first = c.result_add && c.residual_first && !in.chain_end.empty();
  const OclTile shared = call_tile(p, in, first);
  const RowSkips skips = row_skips(p, in);
  const bool streamed = N * OC * positions * int64_t{sizeof(float)} > kOutputsFromMemory;
  parallel_for(tasks, std::max<int64_t>(1, 65536 / flops_per_task), [&](int64_t task) {
    const int64_t r = task % runs_per_block, b = task / runs_per_block % blocks;
    const int64_t g = task / runs_per_block / blocks % G, n = task / runs_per_block / blocks / G;
    const int64_t oc0 = g * OCG + b * block;
    float bias_rows[kOclMaxBlock] = {};
    const int64_t rows = std::min(block, OCG - b * block);
    if (bias)
      for (int64_t k = 0; k < rows; ++k) bias_rows[k] = bias[(oc0 + k) * bias_step];
    TaskTiles& tiles = task_tiles();
    tiles.tile.clear();
    const float* x = in.x + n * in.image + g * in.group;
    const float* w = pw->data.data() + (g * blocks + b) * steps * block;
    float* y = ybase + n * p.y.stride(0) + oc0 * p.y.stride(1);
    // Runs of equal size (+-1 tile): 33 tiles as 10, 10, 10 and 3 left a
    // second thread idle for up to 10 tiles at the end of a 14x14 layer.
    const int64_t chunk0 = r * chunks / runs_per_block, chunk1 = (r + 1) * chunks / runs_per_block;
    for (int64_t chunk = chunk0; chunk < chunk1; ++chunk) {
      const int64_t p0 = chunk * positions / chunks, p1 = (chunk + 1) * positions / chunks;
      OclTile& t = tiles.tile.emplace_back(shared);
      t.x = x;
      t.w = w;
      t.rows = rows;
      t.y = y;
      t.bias = bias ? bias_rows : nullptr;
      t.positions = p1 - p0;
      t.q = q.data() + p0;
      t.y_at = y_at.data() + p0;
      for (int64_t oh = p0 / OW; oh <= (p1 - 1) / OW; ++oh) {
        const auto row = static_cast<size_t>(oh);
        t.lead = oh == p0 / OW ? skips.lead[row] : std::min(t.lead, skips.lead[row]);
        t.trail = oh == p0 / OW ? skips.trail[row] : std::min(t.trail, skips.trail[row]);
      }
      // Channels-last outputs are stored per position (store_contiguous): no runs.
      if (kernel.stores_runs && t.y_channel != 1) set_runs(t);
    }
    if (!chain_outer) {
      for (const OclTile& t : tiles.tile) kernel.tile(t);
      return;
    }
    // The next task runs this block again (its weights are in L2 by then)
    // or the next one, whose weights follow.
    const float* next_block = r + 1 < runs_per_block ? nullptr
                              : b + 1 < blocks       ? w + steps * block
                                                     : nullptr;
    run_chain_outer(tiles, kernel, static_cast<int64_t>(in.chain_end.size()), block, r == 0,
                    next_block, streamed);
  });
}

}  // namespace npukit::cpu
