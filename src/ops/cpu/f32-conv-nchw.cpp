// Driver of the fp32 NCHW convolution family: what the fast kernels cannot
// reproduce, the padded phase-split input, the tiles and their threads, and
// the family's list (these kernels, then DotChains, then the reference).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "conv_1x1.hpp"
#include "conv_1x1_dense.hpp"
#include "conv_nchw.hpp"
#include "conv_nchw_s2.hpp"
#include "dot_chains.hpp"
#include "finite.hpp"
#include "npukit/kernels.hpp"
#include "npukit/parallel.hpp"
#include "ops/conv_mlas_order.hpp"
#include "phase_split.hpp"

namespace npukit::cpu {

namespace {

bool has_zero_taps(const Window2d& win) {
  return win.pad_top || win.pad_bottom || win.pad_left || win.pad_right || win.ins_h || win.ins_w;
}

// Whether the weights' finiteness is settled after the run, from the output:
// when the output does not add to y (the reference can then overwrite it)
// and is smaller than the weights (deep layers: a scan of fewer floats).
bool checks_output(const ConvProblem& p) {
  return !p.params.result_add && p.y.numel() < p.w.numel();
}

// What neither form of the family computes exactly; every check but the
// output's layout, which each form states.
const char* declines_common(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  const Window2d& win = c.window;
  if (c.accumulation == Fp32Accumulation::interleaved) return "the interleaved accumulation";
  if (c.flush_denormals) return "flushing denormals";
  if (win.pad_top < 0 || win.pad_bottom < 0 || win.pad_left < 0 || win.pad_right < 0)
    return "negative pads";
  const TensorView& w = p.w;
  if (w.stride(3) != 1 || w.stride(2) != w.dim(3) || w.stride(1) != w.dim(2) * w.dim(3))
    return "weights not contiguous per output channel";
  // The reference skips padded and inserted taps, where these kernels add
  // 0 * w: the same sum (the accumulator is never -0) unless a weight is
  // infinite or NaN. Checked here only when it is cheaper than checking the
  // output afterwards (see run_checked).
  if (has_zero_taps(win) && !checks_output(p) && !conv_weights_finite(p))
    return "a non-finite weight with padded taps";
  return nullptr;
}

const char* declines_nchw(const ConvProblem& p) {
  if (p.y.stride(3) != 1) return "output rows not contiguous";
  return declines_common(p);
}

// Where the output-channels-in-lanes form takes over (measured with
// npukit_bench BM_Layer and the bundled model): planes up to 16x16 with 64
// steps or more, up to 32x32 with 1024 or more (3x3 over 128+ channels), and
// strided convolutions of 64+ steps on any plane (the positions-in-lanes form
// reads stride phases there: resnet18's stem and stride-2 layers); at least
// two vectors of channels (with one, the broadcasts outnumber the products'
// inputs and the scatter is amortized over fewer outputs).
constexpr int64_t kOclSmallPlane = 256, kOclSmallSteps = 64;
constexpr int64_t kOclMediumPlane = 1024, kOclMediumSteps = 1024;
constexpr int64_t kOclMinChannels = 32;

struct Layout {
  int64_t sh, sw, hq, wq, phase_size, plane;
};

Layout layout(const ConvProblem& p) {
  const Window2d& win = p.params.window;
  const int64_t H = p.x.dim(2), W = p.x.dim(3);
  const int64_t Hp = (H - 1) * (win.ins_h + 1) + 1 + win.pad_top + win.pad_bottom;
  const int64_t Wp = (W - 1) * (win.ins_w + 1) + 1 + win.pad_left + win.pad_right;
  Layout l;
  l.sh = win.stride_h;
  l.sw = win.stride_w;
  l.hq = (Hp + l.sh - 1) / l.sh;
  l.wq = (Wp + l.sw - 1) / l.sw;
  l.phase_size = l.hq * l.wq;
  l.plane = l.sh * l.sw * l.phase_size;
  return l;
}

// Per input column: where it goes in a padded row (phase and column), so
// that filling a plane needs no division.
std::vector<int64_t> column_map(const ConvProblem& p, const Layout& l) {
  const Window2d& win = p.params.window;
  std::vector<int64_t> map(static_cast<size_t>(p.x.dim(3)));
  for (int64_t w = 0; w < p.x.dim(3); ++w) {
    const int64_t pc = win.pad_left + w * (win.ins_w + 1);
    map[static_cast<size_t>(w)] = (pc % l.sw) * l.phase_size + pc / l.sw;
  }
  return map;
}

// Writes input plane (n, c) into the zeroed phase planes at `dst`.
void fill_plane(const ConvProblem& p, const Layout& l, const std::vector<int64_t>& columns,
                int64_t n, int64_t c, float* dst) {
  const Window2d& win = p.params.window;
  const int64_t H = p.x.dim(2), W = p.x.dim(3);
  const float* src = static_cast<const float*>(p.x.raw()) + n * p.x.stride(0) + c * p.x.stride(1);
  const int64_t xs_h = p.x.stride(2), xs_w = p.x.stride(3);
  const bool copy_rows = l.sw == 1 && win.ins_w == 0 && xs_w == 1;
  // Padded row pr = pad_top + h * (ins_h + 1) is row pr / sh of phase row
  // pr % sh: both stepped without a division (two per row were a tenth of a
  // batch of 14x14 images' convolution).
  int64_t phase_row = win.pad_top % l.sh, row_in_phase = win.pad_top / l.sh;
  for (int64_t h = 0; h < H; ++h) {
    if (h > 0) {
      phase_row += win.ins_h + 1;
      while (phase_row >= l.sh) {
        phase_row -= l.sh;
        ++row_in_phase;
      }
    }
    float* row = dst + phase_row * l.sw * l.phase_size + row_in_phase * l.wq;
    const float* s = src + h * xs_h;
    if (copy_rows) {
      std::copy(s, s + W, row + win.pad_left);
      continue;
    }
    if (l.sw == 2 && win.ins_w == 0 && xs_w == 1) {
      split_row_stride2(s, W, win.pad_left, row, row + l.phase_size);
      continue;
    }
    if (win.ins_w == 0) {
      // Without inserted zeros, every sw-th column goes to consecutive
      // columns of one phase: strided copies instead of indexed stores.
      for (int64_t ph = 0; ph < l.sw; ++ph) {
        const int64_t w0 = ((ph - win.pad_left) % l.sw + l.sw) % l.sw;
        float* d = row + ph * l.phase_size + (win.pad_left + w0) / l.sw;
        for (int64_t w = w0; w < W; w += l.sw) *d++ = s[w * xs_w];
      }
      continue;
    }
    for (int64_t w = 0; w < W; ++w) row[columns[static_cast<size_t>(w)]] = s[w * xs_w];
  }
}

std::vector<float>& input_scratch() {
  thread_local std::vector<float> v;
  return v;
}

// Whether the memory of two views may overlap (their address ranges do).
bool overlaps(const TensorView& a, const TensorView& b) {
  auto range = [](const TensorView& v) {
    const auto* lo = static_cast<const char*>(v.raw());
    const char* hi = lo;
    for (int i = 0; i < v.rank(); ++i) {
      const int64_t span = (v.dim(i) - 1) * v.stride(i) * static_cast<int64_t>(sizeof(float));
      (span < 0 ? lo : hi) += span;
    }
    return std::pair<const char*, const char*>(lo, hi + sizeof(float));
  };
  const auto [alo, ahi] = range(a);
  const auto [blo, bhi] = range(b);
  return alo < bhi && blo < ahi;
}

// Whether the input itself has the padded phase-split layout (1x1, stride 1,
// nothing padded or inserted, x contiguous): then it is read in place, not
// copied. The kernels' reads end at the tile's last position rounded up to
// 16 (q_tile is a multiple of 16), so a plane size that is a multiple of 16
// keeps them inside x.
bool reads_input_in_place(const ConvProblem& p, const Layout& l, bool overreads) {
  const Window2d& win = p.params.window;
  const TensorView& x = p.x;
  const int64_t H = x.dim(2), W = x.dim(3);
  return !has_zero_taps(win) && l.sh == 1 && l.sw == 1 && p.w.dim(2) == 1 && p.w.dim(3) == 1 &&
         x.stride(3) == 1 && x.stride(2) == W && x.stride(1) == H * W &&
         x.stride(0) == x.dim(1) * H * W && l.plane == H * W && (!overreads || l.plane % 16 == 0) &&
         !overlaps(x, p.y);
}

}  // namespace

ConvInput prepare_conv_input(const ConvProblem& p, int64_t slack, bool overreads, bool fill) {
  const Window2d& win = p.params.window;
  const int64_t N = p.x.dim(0), IC = p.x.dim(1);
  const int64_t ICG = IC / p.params.groups, KH = p.w.dim(2), KW = p.w.dim(3);
  const Layout l = layout(p);
  ConvInput in;
  in.plane = l.plane;
  in.wq = l.wq;
  std::vector<float>& xp = input_scratch();
  const auto planes = static_cast<size_t>(N * IC * l.plane);
  const auto size = planes + static_cast<size_t>(slack + l.wq + 64);
  const bool in_place = reads_input_in_place(p, l, overreads);
  // Nothing padded and one phase: fill_plane writes the planes whole. Else
  // each plane is zeroed first, in its own task (zeroing the scratch before
  // the region was serial: ~600 KB for a stem's phase planes).
  const bool zero_planes = has_zero_taps(win) || l.sh != 1 || l.sw != 1;
  if (!fill) {
    in.x = nullptr;  // the caller pads the images itself
  } else if (!in_place) {
    if (xp.size() < size) xp.resize(size);  // never shrunk: regrowing zeroed it again
    std::fill(xp.begin() + static_cast<std::ptrdiff_t>(planes),
              xp.begin() + static_cast<std::ptrdiff_t>(size), 0.0f);  // the slack
  }
  if (fill) in.x = in_place ? static_cast<const float*>(p.x.raw()) : xp.data();
  if (fill && !in_place) {
    const std::vector<int64_t> columns = column_map(p, l);
    parallel_for(N * IC, std::max<int64_t>(1, 4096 / l.plane), [&](int64_t nc) {
      float* plane = xp.data() + nc * l.plane;
      if (zero_planes) std::fill(plane, plane + l.plane, 0.0f);
      fill_plane(p, l, columns, nc / IC, nc % IC, plane);
    });
  }
  // Each tap's offset within a channel's phase planes, then per step the
  // channel's plane added (the divisions once per tap, not once per step:
  // 960 steps of a 1x1 layer were ~1 us of serial time per call).
  const int64_t K = KH * KW;
  std::vector<int64_t> tap(static_cast<size_t>(K));
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const int64_t r = kh * win.dilation_h, col = kw * win.dilation_w;
      tap[static_cast<size_t>(kh * KW + kw)] =
          ((r % l.sh) * l.sw + col % l.sw) * l.phase_size + (r / l.sh) * l.wq + col / l.sw;
    }
  in.offset.resize(static_cast<size_t>(ICG * K));
  for (int64_t ic = 0; ic < ICG; ++ic)
    for (int64_t k = 0; k < K; ++k)
      in.offset[static_cast<size_t>(ic * K + k)] = ic * l.plane + tap[static_cast<size_t>(k)];
  in.image = IC * l.plane;
  in.group = ICG * l.plane;
  in.q_row = l.wq;
  in.q_col = 1;
  order_conv_steps(p, in);
  return in;
}

namespace {

// MLAS's order for one shape, kept per thread: a network asks for the same
// few orders on every run, and building one (two vectors grown step by step,
// 4608 steps for a 512-channel 3x3 layer) was serial time before each
// convolution's parallel region (about 2 us per 1x1 layer of mobilenet_v2).
struct StepOrder {
  int64_t icg, ocg, k, groups, block;
  std::vector<int64_t> offset_at;  // order.step
  std::vector<int32_t> w_index;    // the same, as the kernels' weight index
  std::vector<int64_t> chain_end;
};

const StepOrder& step_order(int64_t icg, int64_t ocg, int64_t k, int64_t groups, int64_t block) {
  constexpr size_t kKept = 64;  // more shapes than any network here has
  thread_local std::vector<std::unique_ptr<StepOrder>> kept;
  for (const auto& o : kept)
    if (o->icg == icg && o->ocg == ocg && o->k == k && o->groups == groups && o->block == block)
      return *o;
  if (kept.size() == kKept) kept.erase(kept.begin());
  detail::MlasConvOrder order = detail::mlas_conv_order(icg, ocg, k, groups, block);
  auto o = std::make_unique<StepOrder>(
      StepOrder{icg, ocg, k, groups, block, std::move(order.step), {}, std::move(order.chain_end)});
  o->w_index.assign(o->offset_at.begin(), o->offset_at.end());
  return *kept.emplace_back(std::move(o));
}

}  // namespace

void order_conv_steps(const ConvProblem& p, ConvInput& in) {
  const int64_t block = mlas_nchwc_block(p.params.accumulation);
  if (block == 0) return;
  const int64_t G = p.params.groups, ICG = p.x.dim(1) / G;
  const StepOrder& order = step_order(ICG, p.y.dim(1) / G, p.w.dim(2) * p.w.dim(3), G, block);
  std::vector<int64_t> offset(order.offset_at.size());
  for (size_t i = 0; i < offset.size(); ++i)
    offset[i] = in.offset[static_cast<size_t>(order.offset_at[i])];
  in.offset = std::move(offset);
  in.w_index = order.w_index;
  in.chain_end = order.chain_end;
}

namespace {

std::vector<float>& image_scratch() {
  thread_local std::vector<float> v;
  return v;
}

// Batches of small images are padded one image at a time, inside that
// image's task, so that its tiles read it from cache (padding the whole batch
// first streams it through memory twice).
bool pads_per_image(const ConvProblem& p, const Layout& l) {
  constexpr int64_t kMaxImageBytes = 128 * 1024;
  return p.x.dim(0) >= 8 && !reads_input_in_place(p, l, true) &&
         p.x.dim(1) * l.plane * static_cast<int64_t>(sizeof(float)) <= kMaxImageBytes;
}

}  // namespace

int64_t conv_nchw_row_vectors(const ConvProblem& p, int64_t lanes) {
  const Layout l = layout(p);
  const int64_t OW = p.y.dim(3);
  const bool dense = l.wq == OW && p.y.stride(2) == OW;
  return lanes > 0 && !dense && OW % lanes == 0 ? OW / lanes : 0;
}

void run_conv_nchw(const ConvProblem& p, ConvTileKernel kernel, ConvKernelShape shape) {
  const Conv2dParams& c = p.params;
  const int64_t N = p.x.dim(0), IC = p.x.dim(1), OC = p.y.dim(1), OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t G = c.groups, ICG = IC / G, OCG = OC / G;
  const Layout l = layout(p);
  const bool per_image = pads_per_image(p, l);
  // Reads of the last tile may run `positions` (+ a row) past the last plane.
  const int64_t slack = shape.positions + l.wq + 64;
  const ConvInput in = prepare_conv_input(p, shape.positions, true, !per_image);
  const int64_t steps = static_cast<int64_t>(in.offset.size());
  const bool dense = in.wq == OW && p.y.stride(2) == OW;
  const int64_t row_vectors = conv_nchw_row_vectors(p, shape.row_lanes);
  // q of the last real output + 1 (the row form: vectors of whole rows).
  const int64_t Q = row_vectors ? OH * OW : (OH - 1) * in.wq + OW;
  // Tiles of a few blocks of positions: enough tiles to share, each a
  // cache-friendly slice of the input.
  const int64_t q_tile = shape.positions * 4;
  const int64_t q_tiles = (Q + q_tile - 1) / q_tile;
  const int64_t row_blocks = (OCG + shape.rows - 1) / shape.rows;
  const int64_t image_tiles = G * q_tiles * row_blocks;
  const int64_t flops_per_tile = shape.rows * q_tile * steps;
  const float* wbase = static_cast<const float*>(p.w.raw());
  const float* bias = c.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  const int64_t bias_step = c.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  float* ybase = static_cast<float*>(p.y.raw());
  // The old output starts the FMA chains' total (mlas orders only).
  const bool first = c.result_add && c.residual_first && !in.w_index.empty();
  // Tile `tile` of image n, whose padded planes start at `image`.
  auto run_tile = [&](int64_t n, int64_t tile, const float* image) {
    const int64_t rb = tile % row_blocks, qt = tile / row_blocks % q_tiles;
    const int64_t g = tile / row_blocks / q_tiles;
    ConvTile t;
    t.x = image + g * ICG * in.plane;
    t.offset = in.offset.data();
    t.steps = steps;
    t.rows = std::min(shape.rows, OCG - rb * shape.rows);
    for (int64_t r = 0; r < t.rows; ++r) {
      const int64_t oc = g * OCG + rb * shape.rows + r;
      t.w[r] = wbase + oc * p.w.stride(0);
      t.y[r] = ybase + n * p.y.stride(0) + oc * p.y.stride(1);
      t.bias[r] = bias ? bias[oc * bias_step] : 0.0f;
    }
    t.q0 = qt * q_tile;
    t.q1 = std::min(Q, t.q0 + q_tile);
    t.wq = in.wq;
    t.ow = OW;
    t.y_row = p.y.stride(2);
    t.has_bias = bias != nullptr;
    t.result_add = c.result_add && !first;
    t.dense = dense;
    t.row_vectors = row_vectors;
    t.clip = !clip_is_identity(c.clip);
    t.clip_min = c.clip.min;
    t.clip_max = c.clip.max;
    if (!in.w_index.empty()) {
      t.fma = true;
      t.w_index = in.w_index.data();
      t.chain_end = in.chain_end.data();
      t.chains = static_cast<int64_t>(in.chain_end.size());
      t.residual_first = first;
    }
    kernel(t);
  };
  if (per_image) {
    const std::vector<int64_t> columns = column_map(p, l);
    parallel_for(N, 1, [&](int64_t n) {
      std::vector<float>& image = image_scratch();
      image.assign(static_cast<size_t>(IC * l.plane + slack), 0.0f);
      for (int64_t ic = 0; ic < IC; ++ic)
        fill_plane(p, l, columns, n, ic, image.data() + ic * l.plane);
      for (int64_t tile = 0; tile < image_tiles; ++tile) run_tile(n, tile, image.data());
    });
    return;
  }
  parallel_for(N * image_tiles, std::max<int64_t>(1, 65536 / flops_per_tile), [&](int64_t tile) {
    const int64_t n = tile / image_tiles;
    run_tile(n, tile % image_tiles, in.x + n * IC * in.plane);
  });
}

namespace {

// Whether some output is NaN (rows contiguous, as declines_nchw requires, or
// channels-last: one run per image).
bool any_nan(const TensorView& y) {
  uint32_t any = 0;
  if (is_channels_last(y)) {
    const auto* v = static_cast<const uint32_t*>(y.raw());
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) any |= (v[i] & 0x7fffffffu) > 0x7f800000u;
    return any != 0;
  }
  for (int64_t n = 0; n < y.dim(0); ++n)
    for (int64_t c = 0; c < y.dim(1); ++c)
      for (int64_t h = 0; h < y.dim(2); ++h) {
        const auto* row = reinterpret_cast<const uint32_t*>(&y.at<float>(n, c, h, 0));
        for (int64_t w = 0; w < y.dim(3); ++w) any |= (row[w] & 0x7fffffffu) > 0x7f800000u;
      }
  return any != 0;
}

// After a fast run: whether a NaN in y may come from a non-finite weight on
// a padded tap (then the reference computes y again). Weights a packing
// found finite need no scan of y (a serial pass over the output of every
// padded layer: ~50 us of resnet18's run).
bool output_may_need_reference(const ConvProblem& p) {
  return has_zero_taps(p.params.window) && checks_output(p) && !conv_weights_known_finite(p) &&
         any_nan(p.y) && !conv_weights_finite(p);
}

void run_reference(const ConvProblem& p) {
  if (p.params.accumulation == Fp32Accumulation::interleaved)
    ref::conv2d_f32_interleaved(p.x, p.w, p.bias, p.y, p.params);
  else if (mlas_nchwc_block(p.params.accumulation))
    ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, p.params);
  else
    ref::conv2d_f32(p.x, p.w, p.bias, p.y, p.params);
  // The fused clip: the unfused Clip, on the finished output.
  if (!clip_is_identity(p.params.clip)) ref::clip_f32(p.y, p.y, p.params.clip);
}

// Runs the kernel; when the weights' finiteness was left to the output
// (checks_output), a NaN-free output proves that no infinite or NaN weight
// met a padded tap (0 * such a weight is NaN, and a NaN term keeps the sum
// NaN), so it equals the reference. Otherwise, if a weight is non-finite,
// the reference recomputes the whole output (y is not an input then).
void run_checked(const ConvProblem& p, ConvTileKernel kernel, ConvKernelShape shape) {
  run_conv_nchw(p, kernel, shape);
  if (output_may_need_reference(p)) run_reference(p);
}

void run_avx512(const ConvProblem& p) {
  run_checked(p, f32_conv_tile_avx512, {6, 64, 16});
}

// f32-conv-nchw-s2-avx512 reads x in place: not where y may overwrite it.
const char* declines_s2(const ConvProblem& p) {
  if (const char* why = declines_nchw(p)) return why;
  if (const char* why = conv_nchw_s2_declines(p)) return why;
  return overlaps(p.x, p.y) ? "input and output overlap" : nullptr;
}
void run_s2_avx512(const ConvProblem& p) {
  run_conv_nchw_s2_avx512(p);
  if (output_may_need_reference(p)) run_reference(p);
}

// The output-channels-in-lanes form where it is the faster one: small planes
// (the positions-in-lanes tile wastes the q layout's padding columns and a
// partial last vector) with reductions long enough to amortize the scatter.
// Strided convolutions on any plane at AVX-512 only (at AVX2 resnet18's 1x1
// stride-2 64 -> 128 @28 took 0.31 ms in the form against 0.19 ms).
// Channels-last operands (the runner's fp32 layout) take the form on any
// plane at AVX-512: the positions-in-lanes form cannot store them, and their
// whole-line stores and loads are what makes the form win there.
const char* ocl_slower(const Shape& w, const Conv2dParams& c, int64_t y_h, int64_t y_w, Isa isa,
                       bool channels_last) {
  const int64_t plane = y_h * y_w, steps = w[1] * w[2] * w[3];
  const bool any_plane =
      isa >= Isa::avx512 && (channels_last || c.window.stride_h > 1 || c.window.stride_w > 1);
  if (w[0] / c.groups < kOclMinChannels) return "fewer than 32 output channels per group";
  if (!any_plane &&
      (plane > kOclMediumPlane || (plane > kOclSmallPlane && steps < kOclMediumSteps)))
    return "a large plane for its reduction (positions in lanes are faster)";
  if (steps < kOclSmallSteps) return "a short reduction (the scatter epilogue would dominate)";
  return nullptr;
}

const char* declines_ocl_at(const ConvProblem& p, Isa isa) {
  if (const char* why = conv_ocl_declines_exactness(p)) return why;
  return ocl_slower(p.w.shape(), p.params, p.y.dim(2), p.y.dim(3), isa,
                    is_channels_last(p.x) || is_channels_last(p.y));
}
const char* declines_ocl(const ConvProblem& p) {
  return declines_ocl_at(p, Isa::avx512);
}

void run_ocl_avx512(const ConvProblem& p) {
  run_conv_ocl_exact(p, kOclAvx512);
}
// f32-conv-1x1-avx512 (helper F's file): where f32-conv-ocl-avx512 runs, 1x1 kernels.
const char* declines_1x1(const ConvProblem& p) {
  if (p.w.dim(2) != 1 || p.w.dim(3) != 1) return "a KxK kernel (f32-conv-ocl takes it)";
  if (is_channels_last(p.x) || is_channels_last(p.y))
    return "channels-last operands (f32-conv-ocl takes them)";
  return declines_ocl(p);
}
void run_1x1_avx512(const ConvProblem& p) {
  run_conv_ocl_exact(p, kConv1x1Avx512);
}
// At AVX2 (8 lanes, 12 accumulators) the form wins on 1x1 convolutions only
// (measured: 1x1 on 7x7 and 14x14 1.0-1.25x, 3x3 on 7x7 and 14x14 0.7-0.8x).
const char* ocl_avx2_slower(const Shape& w) {
  return w[2] * w[3] > 1 ? "a KxK kernel (positions in lanes are faster at AVX2)" : nullptr;
}
const char* declines_ocl_avx2(const ConvProblem& p) {
  if (const char* why = declines_ocl_at(p, Isa::avx2)) return why;
  return ocl_avx2_slower(p.w.shape());
}
void run_ocl_avx2(const ConvProblem& p) {
  run_conv_ocl_exact(p, kOclAvx2);
}
void run_1x1_avx2(const ConvProblem& p) {
  run_conv_ocl_exact(p, kConv1x1Avx2);
}
void run_avx2(const ConvProblem& p) {
  run_checked(p, f32_conv_tile_avx2, {6, 16});
}

}  // namespace

const char* conv_ocl_declines_exactness(const ConvProblem& p) {
  const bool cl_y = is_channels_last(p.y);
  if (!cl_y && p.y.stride(3) != 1) return "output rows not contiguous (nor channels-last)";
  if (const char* why = declines_common(p)) return why;
  const int64_t ys = p.y.stride(1);
  if (ys <= 0 || ys > INT32_MAX / kOclMaxBlock) return "output channel stride outside (0, 2^31/64)";
  return nullptr;
}

int64_t conv_ocl_block(const Shape& w, const Conv2dParams& p, int64_t y_h, int64_t y_w) {
  // w[1] == 1: groups = C, which conv2d gives to the depthwise family.
  const Isa isa = max_isa();
  if (conv_ocl_channels_last(w, p)) return kOclAvx512.channels;
  if (p.accumulation == Fp32Accumulation::interleaved || p.flush_denormals || w[1] == 1 ||
      isa < Isa::avx2 || ocl_slower(w, p, y_h, y_w, isa, false) != nullptr ||
      impl() == Impl::reference)
    return 0;
  if (isa >= Isa::avx512) return kOclAvx512.channels;
  return ocl_avx2_slower(w) == nullptr ? kOclAvx2.channels : 0;
}

bool conv_ocl_channels_last(const Shape& w, const Conv2dParams& p) {
  const Window2d& win = p.window;
  return kernel_allowed(Isa::avx512, false) && p.accumulation != Fp32Accumulation::interleaved &&
         !p.flush_denormals && w[1] > 1 && win.pad_top >= 0 && win.pad_bottom >= 0 &&
         win.pad_left >= 0 && win.pad_right >= 0 &&
         ocl_slower(w, p, 1, 1, Isa::avx512, true) == nullptr;
}

void run_conv_ocl_exact(const ConvProblem& p, const OclKernel& kernel) {
  run_conv_ocl(p, kernel);
  if (output_may_need_reference(p)) run_reference(p);
}

namespace {

const char* declines_dot_chains(const ConvProblem& p) {
  const Conv2dParams& c = p.params;
  if (c.flush_denormals && !dot_chains_can_flush()) return "flushing denormals needs the x86 MXCSR";
  if (mlas_nchwc_block(c.accumulation)) return "an mlas_nchwc accumulation";
  if (c.accumulation == Fp32Accumulation::interleaved && c.groups != 1) return "groups > 1";
  if (c.accumulation == Fp32Accumulation::sequential && has_zero_taps(c.window) &&
      !conv_weights_finite(p))
    return "a non-finite weight with padded taps";
  return nullptr;
}
// The fused clip of kernels that do not fuse it: the unfused Clip, on the
// finished output.
void clip_output(const ConvProblem& p) {
  if (!clip_is_identity(p.params.clip)) ref::clip_f32(p.y, p.y, p.params.clip);
}

void run_dot_chains(const ConvProblem& p) {
  conv2d_f32(p.x, p.w, p.bias, p.y, p.params);
  clip_output(p);
}

constexpr const char* kNchw =
    "sequential or mlas_nchwc accumulation, weights contiguous per output channel, output rows "
    "contiguous, no "
    "negative pads; with padding, finite weights (when the output is smaller than the weights and "
    "not added to, checked after the run: a NaN output with a non-finite weight is recomputed by "
    "the reference)";

constexpr const char* kOcl =
    "as f32-conv-nchw, and at least 32 output channels per group, 64+ steps (ic, kh, kw) per "
    "output and an output plane of at most 256 positions, or of at most 1024 with 1024+ steps, or "
    "any plane with a stride above 1 or channels-last (NHWC-strided) operands (AVX-512); output "
    "channel stride below 2^31/64; output rows contiguous or channels-last";

constexpr const char* kS2 =
    "as f32-conv-nchw, and a 3x3 kernel of stride 2, no dilation nor inserted zeros, one group "
    "of fewer input channels than the mlas_nchwc accumulation's block (MLAS's NCHW-input "
    "chains), input rows contiguous, input and output apart";

constexpr const char* kOclAvx2Applies =
    "as f32-conv-ocl-avx512 without its any-plane rule for strides, 1x1 kernels only";

}  // namespace

const KernelList<ConvProblem>& conv_nchw_kernels() {
  static const KernelList<ConvProblem> list{
      "conv2d",
      {{"f32-conv-1x1-avx512", Isa::avx512, "as f32-conv-ocl-avx512, 1x1 kernels only",
        declines_1x1, run_1x1_avx512},
       {"f32-conv-ocl-avx512", Isa::avx512, kOcl, declines_ocl, run_ocl_avx512},
       {"f32-conv-1x1-dense-avx512", Isa::avx512, kConv1x1DenseApplies, conv_1x1_dense_declines,
        run_conv_1x1_dense_avx512},
       {"f32-conv-nchw-s2-avx512", Isa::avx512, kS2, declines_s2, run_s2_avx512},
       {"f32-conv-nchw-avx512", Isa::avx512, kNchw, declines_nchw, run_avx512},
       {"f32-conv-1x1-avx2", Isa::avx2, kOclAvx2Applies, declines_ocl_avx2, run_1x1_avx2},
       {"f32-conv-ocl-avx2", Isa::avx2, kOclAvx2Applies, declines_ocl_avx2, run_ocl_avx2},
       {"f32-conv-1x1-dense-avx2", Isa::avx2, kConv1x1DenseApplies, conv_1x1_dense_declines,
        run_conv_1x1_dense_avx2},
       {"f32-conv-nchw-avx2", Isa::avx2, kNchw, declines_nchw, run_avx2},
       {"f32-conv-dotchains", Isa::portable,
        "both accumulations (interleaved: groups = 1); sequential with padding needs finite "
        "weights",
        declines_dot_chains, run_dot_chains},
       {"f32-conv-reference", Isa::portable,
        "always (ref::conv2d_f32, ref::conv2d_f32_interleaved, ref::conv2d_f32_mlas)", nullptr,
        run_reference, true}}};
  return list;
}

}  // namespace npukit::cpu
