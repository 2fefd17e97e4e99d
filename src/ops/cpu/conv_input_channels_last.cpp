// The output-channels-in-lanes form's input when x is channels-last (the
// runner's fp32 layout): whole padded images copied into blocks of 16
// channels (per group), (G * ceil(C/G/16), Hp, Wp, 16) as MLAS's NCHWc, so that every tap of every
// output is one load at q + offset, with no stride phases (each output's q
// is listed by the driver). Blocked, not NHWC: with NHWC the positions of a
// tile lie C floats apart, and for C = 256 or 512 a tile's taps fall into
// two or four L1 sets (4 KB apart) and evict each other (resnet18's 7x7 and
// 14x14 layers ran 5-10% slower than from NCHW planes); in blocks they are
// consecutive lines. A 1x1 unpadded strided convolution's copy holds only
// the pixels it reads (see Sampling).
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "conv_nchw.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

std::vector<float>& padded_scratch() {
  thread_local std::vector<float> v;
  return v;
}

constexpr int64_t kBlock = 16;

// Which input pixels the copy holds: padded row r is input row
// (r - pad_top) / (ins_h + 1) * row_step when that is a row (else zeros), its
// columns input columns j * col_step for j < cols, at pad_left + j *
// (ins_w + 1). A 1x1 unpadded strided convolution reads every stride-th
// pixel only: row_step, col_step = the strides, and the copy is the output
// grid (a quarter of the image at stride 2: resnet18's downsamples).
struct Sampling {
  int64_t row_step = 1, col_step = 1, rows = 0, cols = 0;
};

// Padded row r of image n, every block of channels: zeros, or the sampled
// input row's channels in blocks (each group's channels in blocks of their
// own, the lanes past a group's last channel zero) with zeroed borders. dst
// is the row in the first block; blocks are `block_plane` apart.
void fill_row(const TensorView& x, const Window2d& win, const Sampling& s, int64_t groups,
              int64_t n, int64_t r, int64_t Wp, int64_t block_plane, float* dst) {
  const int64_t C = x.dim(1), icg = C / groups;
  const int64_t per_group = (icg + kBlock - 1) / kBlock;
  // Sampled row i sits at padded row pad_top + i * (ins_h + 1); the rows
  // between are inserted zeros.
  const int64_t from_top = r - win.pad_top, i = from_top / (win.ins_h + 1);
  const bool input_row = from_top >= 0 && from_top % (win.ins_h + 1) == 0 && i < s.rows;
  const int64_t step = (win.ins_w + 1) * kBlock;  // floats between input columns
  const int64_t src_step = s.col_step * C;
  for (int64_t b = 0; b < groups * per_group; ++b) {
    float* row = dst + b * block_plane;
    if (!input_row || win.ins_w) {
      std::fill(row, row + Wp * kBlock, 0.0f);
      if (!input_row) continue;
    } else {
      std::fill(row, row + win.pad_left * kBlock, 0.0f);
      std::fill(row + (win.pad_left + s.cols) * kBlock, row + Wp * kBlock, 0.0f);
    }
    const int64_t c0 = b % per_group * kBlock, lanes = std::min(kBlock, icg - c0);
    const float* src = static_cast<const float*>(x.raw()) + n * x.stride(0) +
                       i * s.row_step * x.stride(2) + b / per_group * icg + c0;
    float* d = row + win.pad_left * kBlock;
    if (lanes == kBlock) {  // a constant size: one vector move, not a call per position
      for (int64_t w = 0; w < s.cols; ++w, d += step, src += src_step)
        std::memcpy(d, src, kBlock * sizeof(float));
      continue;
    }
    for (int64_t w = 0; w < s.cols; ++w, d += step, src += src_step) {
      std::memcpy(d, src, static_cast<size_t>(lanes) * sizeof(float));
      std::fill(d + lanes, d + kBlock, 0.0f);
    }
  }
}

// Where the taps of input channel ic sit: channel ic at ic (NHWC read in
// place: block_plane 0) or in its block of 16 (block_plane floats apart);
// tap (kh, kw) kh * row + kw * col further on.
struct StepGeometry {
  int64_t block_plane, row, col;
};

struct StepTables {
  std::vector<int64_t> offset, chain_end;
  std::vector<int32_t> w_index;
};

// Fills in.offset (and under MLAS's orders w_index and chain_end) from a
// per-thread cache keyed by everything they depend on: built per call, they
// took 1-10 us of serial time before each of resnet18's 3x3 layers (4608
// steps in layer 4: ~4.5 us for the offsets, ~4.8 to put them in MLAS's
// order), ~90 us per run at 2 threads.
void set_steps(const ConvProblem& p, ConvInput& in, const StepGeometry& at) {
  const int64_t G = p.params.groups, ICG = p.x.dim(1) / G, KH = p.w.dim(2), KW = p.w.dim(3);
  using Key = std::array<int64_t, 9>;
  const Key key{ICG,
                KH,
                KW,
                at.block_plane,
                at.row,
                at.col,
                mlas_nchwc_block(p.params.accumulation),
                p.y.dim(1) / G,
                G};
  thread_local std::vector<std::pair<Key, StepTables>> cache;
  auto hit =
      std::find_if(cache.begin(), cache.end(), [&](const auto& e) { return e.first == key; });
  if (hit == cache.end()) {
    if (cache.size() >= 64) cache.clear();  // a bound for programs of many shapes
    in.offset.clear();
    in.offset.reserve(static_cast<size_t>(ICG * KH * KW));
    for (int64_t ic = 0; ic < ICG; ++ic) {
      const int64_t channel = at.block_plane ? ic / kBlock * at.block_plane + ic % kBlock : ic;
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          in.offset.push_back(channel + kh * at.row + kw * at.col);
    }
    order_conv_steps(p, in);
    cache.push_back({key, {in.offset, in.chain_end, in.w_index}});
    return;
  }
  in.offset = hit->second.offset;
  in.w_index = hit->second.w_index;
  in.chain_end = hit->second.chain_end;
}

}  // namespace

bool is_channels_last(const TensorView& t) {
  if (t.rank() != 4) return false;
  const int64_t C = t.dim(1), H = t.dim(2), W = t.dim(3);
  return C > 1 && t.stride(1) == 1 && t.stride(3) == C && t.stride(2) == W * C &&
         t.stride(0) == H * W * C;
}

ConvInput prepare_conv_input_channels_last(const ConvProblem& p) {
  const Window2d& win = p.params.window;
  const TensorView& x = p.x;
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t G = p.params.groups, ICG = C / G, KH = p.w.dim(2), KW = p.w.dim(3);
  Sampling s{1, 1, H, W};
  const bool unpadded = win.pad_top == 0 && win.pad_bottom == 0 && win.pad_left == 0 &&
                        win.pad_right == 0 && win.ins_h == 0 && win.ins_w == 0;
  if (KH == 1 && KW == 1 && unpadded)
    s = {win.stride_h, win.stride_w, (H - 1) / win.stride_h + 1, (W - 1) / win.stride_w + 1};
  const int64_t Hp = (s.rows - 1) * (win.ins_h + 1) + 1 + win.pad_top + win.pad_bottom;
  const int64_t Wp = (s.cols - 1) * (win.ins_w + 1) + 1 + win.pad_left + win.pad_right;
  // Strides the q layout takes: those the sampling has not.
  const int64_t sh = win.stride_h / s.row_step, sw = win.stride_w / s.col_step;
  const int64_t per_group = (ICG + kBlock - 1) / kBlock, block_plane = Hp * Wp * kBlock;
  ConvInput in;
  in.plane = Hp * Wp;
  in.wq = Wp;
  in.image = G * per_group * block_plane;
  in.group = per_group * block_plane;
  in.q_row = sh * Wp * kBlock;
  in.q_col = sw * kBlock;
  if (unpadded && s.row_step == 1 && s.col_step == 1) {
    // Nothing to write out: the steps read the NHWC activation in place
    // (mobilenet_v2's 1x1 layers on 14x14 and 7x7: ~10% faster each). 1x1
    // stride-2 layers copy only the pixels they read instead (the two were
    // within a few % of each other on resnet18's downsamples).
    in.x = static_cast<const float*>(x.raw());
    in.image = H * W * C;
    in.group = ICG;
    in.q_row = win.stride_h * W * C;
    in.q_col = win.stride_w * C;
    set_steps(p, in, {0, win.dilation_h * W * C, win.dilation_w * C});
    return in;
  }
  std::vector<float>& xp = padded_scratch();
  // Grown only (fill_row writes every float): a resize after a smaller
  // layer zeroed the regrown part serially before the region.
  if (xp.size() < static_cast<size_t>(N * in.image)) xp.resize(static_cast<size_t>(N * in.image));
  float* base = xp.data();
  parallel_for(N * Hp, std::max<int64_t>(1, 16384 / (Wp * C)), [&](int64_t nr) {
    const int64_t n = nr / Hp, r = nr % Hp;
    fill_row(x, win, s, G, n, r, Wp, block_plane, base + n * in.image + r * Wp * kBlock);
  });
  in.x = base;
  set_steps(p, in, {block_plane, win.dilation_h * Wp * kBlock, win.dilation_w * kBlock});
  return in;
}

}  // namespace npukit::cpu
