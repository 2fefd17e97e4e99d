// Driver of f32-dwconv-nchwc-* (dwconv.hpp, DwGroup): which depthwise
// convolutions the channels-in-lanes kernels take, the padded positions and
// taps as offsets, each group's weights per tap, and the groups shared among
// the threads. On small planes the plane kernels' per-plane costs (the
// padded copy, half-empty vectors, the epilogue per row) dominate; here a
// group of channels costs two transposes per run of positions instead.
// Where x and y are both channels-last, the row walk (DwNhwcRows) reads x in
// place instead: rows of outputs over every channel, shared by the threads.
#include <algorithm>
#include <vector>

#include "dwconv.hpp"
#include "npukit/kernels.hpp"
#include "npukit/parallel.hpp"

namespace npukit::cpu {

namespace {

// Input planes larger than this go to the plane kernels (faster on large
// planes: they need no transposes).
// Measured in mobilenet_v2 (1 thread, per-layer bests), AVX-512: 3x3
// stride 2 on 56x56 inputs 0.088 ms here, 0.072 in the plane kernels;
// stride 1 read in place by the plane kernels from 14x14 up (576@14 0.054 ->
// 0.041 ms), but not on 7x7 planes (960@7 0.029 -> 0.042: 7 of 16 lanes
// used). AVX2: this kernel stays faster up to 56x56 (192@28 0.075 vs 0.088,
// 576@14 0.061 vs 0.075 in place).
constexpr int64_t kMaxInputPlane = 28 * 28;
constexpr int64_t kMinInPlaceWidth = 12;
constexpr int64_t kMaxInputPlaneAvx2 = 56 * 56;
// Output planes up to this many positions have the runner hold the
// depthwise layer's input and output channels-last (dwconv_channels_last).
// mobilenet_v2, 1 thread, per-layer bests: on 14x14 and 7x7 outputs the
// expansions before them store whole vectors (64->384@14 0.073 -> 0.056 ms,
// 96->576@14 0.139 -> 0.112) and these layers drop their transposes (960@7
// 0.030 -> 0.025, 576@14 s2 0.029 -> 0.021); on 28x28 outputs the in-place
// plane kernel is faster (192@28 0.044 vs 0.061) and the 32-channel
// projection after it slower from channels-last (0.049 vs 0.080).
constexpr int64_t kMaxChannelsLastPlane = 14 * 14;

bool dense_planes(const TensorView& t) {
  return t.stride(3) == 1 && t.stride(2) == t.dim(3) && t.stride(1) >= t.dim(2) * t.dim(3);
}
// Not dense planes, but channels contiguous at each position (the runner's
// channels-last activations, NHWC views): read or written per position, no
// transposes.
bool lanes_contiguous(const TensorView& t) {
  return !dense_planes(t) && (t.dim(1) == 1 || t.stride(1) == 1);
}

struct GroupBuffers {
  std::vector<float> padded, sums, weights;
};
GroupBuffers& group_buffers() {
  thread_local GroupBuffers b;
  return b;
}

}  // namespace

namespace {

// What both widths decline: what they cannot compute, and planes so large
// that the plane kernels are faster at every ISA level.
const char* declines_any_width(const DwconvProblem& p) {
  if (const char* why = dwconv_declines_fast(p)) return why;
  if (p.accumulation == Fp32Accumulation::interleaved) return "the interleaved accumulation";
  if (p.flush_denormals) return "flushing denormals";
  if (p.multiplier != 1) return "a channel multiplier";
  if (p.window.ins_h || p.window.ins_w) return "inserted zeros";
  const bool x_cl = lanes_contiguous(p.x), y_cl = lanes_contiguous(p.y);
  if ((!dense_planes(p.x) && !x_cl) || (!dense_planes(p.y) && !y_cl))
    return "input or output neither dense planes nor channels contiguous";
  // The plane kernels would gather channels-last operands: this one is faster on any plane.
  if (x_cl || y_cl) return nullptr;
  if (p.x.dim(2) * p.x.dim(3) > kMaxInputPlaneAvx2)
    return "an input plane over 56x56 positions (the plane kernels are faster)";
  return nullptr;
}

}  // namespace

const char* dwconv_nchwc_declines(const DwconvProblem& p) {
  if (const char* why = declines_any_width(p)) return why;
  if (lanes_contiguous(p.x) || lanes_contiguous(p.y)) return nullptr;
  if (p.x.dim(2) * p.x.dim(3) > kMaxInputPlane)
    return "an input plane over 28x28 positions (the plane kernels are faster)";
  if (dwconv_reads_in_place(p) && p.window.stride_h == 1 && p.y.dim(3) >= kMinInPlaceWidth)
    return "a 3x3 stride-1 window on rows of 12+ outputs (the plane kernels read x in place: "
           "faster)";
  return nullptr;
}

const char* dwconv_nchwc_avx2_declines(const DwconvProblem& p) {
  // Where AVX-512 kernels may run, the AVX-512 plane kernel (after this one
  // in the list) is the faster one on what the AVX-512 rule leaves to it.
  if (kernel_allowed(Isa::avx512, false)) return dwconv_nchwc_declines(p);
  return declines_any_width(p);
}

bool dwconv_channels_last(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p) {
  return kernel_allowed(Isa::avx512, false) && x.size() == 4 && w.size() == 4 && y.size() == 4 &&
         p.groups == x[1] && w[0] == x[1] && w[1] == 1 && !p.residual_first &&
         p.accumulation != Fp32Accumulation::interleaved && !p.flush_denormals &&
         y[2] * y[3] <= kMaxChannelsLastPlane;
}

void pack_dwconv_taps(const TensorView& w, int64_t pitch, float* to) {
  const int64_t C = w.dim(0), KH = w.dim(2), KW = w.dim(3), step = w.stride(0);
  // Tap by tap, each a strided read and a contiguous write (per channel, its
  // taps scattered `pitch` floats apart took ~1% of mobilenet_v2's run).
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const float* from = static_cast<const float*>(w.raw()) + kh * w.stride(2) + kw * w.stride(3);
      float* row = to + (kh * KW + kw) * pitch;
      for (int64_t c = 0; c < C; ++c) row[c] = from[c * step];
      std::fill(row + C, row + pitch, 0.0f);
    }
}

namespace {

// Whether the memory of x and y may overlap (the row walk reads x after it
// wrote y; the group walk copies each group's input first).
bool apart(const TensorView& x, const TensorView& y) {
  auto end = [](const TensorView& v) {
    int64_t last = 0;
    for (int i = 0; i < v.rank(); ++i) last += (v.dim(i) - 1) * v.stride(i);
    return static_cast<const float*>(v.raw()) + last + 1;
  };
  const auto* x0 = static_cast<const float*>(x.raw());
  const auto* y0 = static_cast<const float*>(y.raw());
  return end(x) <= y0 || end(y) <= x0;
}

struct RowBuffers {
  std::vector<float> weights, bias;
};

// Channels per pass of the row walk over the plane. An output row's three
// input rows hold 3 * W * C floats (97 KB for mobilenet_v2's 576@14): more
// than L1, so without passes each input row comes from L2 for every output
// row that reads it; in passes of 128 channels they stay in L1 (1 thread,
// layers alone, warm: 576@14 33.3 -> 27.1 us, 384@14 19.1 -> 17.5). On rows
// narrower than 14 positions the passes cost more than they save (960@7
// 10.4 -> 11.7 us in passes of 64, the same in passes of 128; in the model
// 0.016 -> 0.017 ms).
constexpr int64_t kRowPassChannels = 128, kRowPassMinWidth = 14;
int64_t row_pass_channels(int64_t channels, int64_t ow) {
  return ow >= kRowPassMinWidth ? std::min(channels, kRowPassChannels) : channels;
}

// The channels-last row walk: each task a range of (n, channel pass, output
// row), rows innermost.
void run_rows(const DwconvProblem& p, DwNhwcRowsKernel kernel, int64_t lanes) {
  const Window2d& win = p.window;
  const int64_t N = p.x.dim(0), C = p.x.dim(1), OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t KH = win.kernel_h, KW = win.kernel_w;
  // Weights per tap along the channels (packed when the model was planned,
  // else here), and the bias, padded with zeros.
  thread_local RowBuffers buf;
  const bool packed = p.w_taps != nullptr && p.taps_pitch >= (C + lanes - 1) / lanes * lanes;
  const int64_t cp = packed ? p.taps_pitch : (C + lanes - 1) / lanes * lanes;
  if (!packed) {
    buf.weights.resize(static_cast<size_t>(KH * KW * cp));
    pack_dwconv_taps(p.w, cp, buf.weights.data());
  }
  if (p.has_bias) {
    buf.bias.assign(static_cast<size_t>(cp), 0.0f);
    const auto* b = static_cast<const float*>(p.bias.raw());
    const int64_t step = p.bias.stride(p.bias.rank() == 1 ? 0 : 1);
    for (int64_t c = 0; c < C; ++c) buf.bias[static_cast<size_t>(c)] = b[c * step];
  }
  DwNhwcRows r;
  r.x_row = p.x.stride(2);
  r.x_col = p.x.stride(3);
  r.h = p.x.dim(2);
  r.w = p.x.dim(3);
  r.channels = C;
  r.channels_padded = cp;
  r.kh = KH;
  r.kw = KW;
  r.stride_h = win.stride_h;
  r.stride_w = win.stride_w;
  r.dilation_h = win.dilation_h;
  r.dilation_w = win.dilation_w;
  r.pad_top = win.pad_top;
  r.pad_left = win.pad_left;
  r.weights = packed ? p.w_taps : buf.weights.data();
  r.bias = p.has_bias ? buf.bias.data() : nullptr;
  r.y_row = p.y.stride(2);
  r.y_col = p.y.stride(3);
  r.ow = OW;
  static_cast<DwEpilogue&>(r) = dw_epilogue(p, !clip_is_identity(p.clip));
  const auto* x = static_cast<const float*>(p.x.raw());
  auto* y = static_cast<float*>(p.y.raw());
  const int64_t chunk = row_pass_channels(C, OW), chunks = (C + chunk - 1) / chunk;
  // With passes, the rows in bands of ceil(OH / threads): tasks (n, band,
  // pass, row), so that each thread's range is whole bands over every pass
  // (ranges of (n, pass, row) gave one thread 2.5 of 576@14's 4.5 passes).
  const int64_t bands = chunks > 1 ? std::clamp<int64_t>(num_threads(), 1, OH) : 1;
  const int64_t band_rows = (OH + bands - 1) / bands;
  // Enough rows per task to be worth a thread (a 7-wide row of 960 channels is ~120k flops).
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, OW * KH * KW * chunk));
  parallel_ranges(N * chunks * OH, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end;) {
      const int64_t n = task / (chunks * OH), in_image = task - n * chunks * OH;
      const int64_t band = in_image / (chunks * band_rows), row0 = band * band_rows;
      const int64_t rows = std::min(band_rows, OH - row0);  // the last band may be short
      const int64_t in_band = in_image - chunks * row0, pass = in_band / rows;
      const int64_t first = in_band - pass * rows;  // row within the band
      const int64_t stop = std::min(end, task + rows - first);
      DwNhwcRows t = r;
      t.x = x + n * p.x.stride(0);
      t.y = y + n * p.y.stride(0);
      t.oh0 = row0 + first;
      t.oh1 = t.oh0 + (stop - task);
      t.c0 = pass * chunk;
      t.c1 = std::min(C, t.c0 + chunk);
      kernel(t);
      task = stop;
    }
  });
}

// The stride-2 walk (DwS2Nhwc): each task a range of (n, group of 16 channels).
void run_s2_nhwc(const DwconvProblem& p, DwS2NhwcKernel kernel) {
  constexpr int64_t kGroupLanes = 16;
  const int64_t N = p.x.dim(0), C = p.x.dim(1), OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t groups = (C + kGroupLanes - 1) / kGroupLanes;
  const auto* x = static_cast<const float*>(p.x.raw());
  const auto* w = static_cast<const float*>(p.w.raw());
  const auto* b = p.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  const int64_t bias_step = p.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  auto* y = static_cast<float*>(p.y.raw());
  DwS2Nhwc g;
  static_cast<DwEpilogue&>(g) = dw_epilogue(p, !clip_is_identity(p.clip));
  g.x_channel = p.x.stride(1);
  g.x_row = p.x.stride(2);
  g.h = p.x.dim(2);
  g.w = p.x.dim(3);
  g.pad_top = p.window.pad_top;
  g.pad_left = p.window.pad_left;
  g.oh = OH;
  g.ow = OW;
  g.y_row = p.y.stride(2);
  g.y_col = p.y.stride(3);
  // Enough groups per task to be worth a thread (as the group walk).
  const int64_t grain =
      std::max<int64_t>(1, 65536 / std::max<int64_t>(1, OH * OW * 9 * kGroupLanes));
  parallel_ranges(N * groups, grain, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> sums;
    sums.resize(static_cast<size_t>(OH * kGroupLanes * kGroupLanes));
    float weights[kGroupLanes * 9], bias[kGroupLanes];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / groups, c0 = task % groups * kGroupLanes;
      DwS2Nhwc t = g;
      t.channels = std::min(kGroupLanes, C - c0);
      for (int64_t c = 0; c < kGroupLanes; ++c) {
        const bool in = c < t.channels;
        for (int64_t k = 0; k < 9; ++k)
          weights[c * 9 + k] =
              in ? w[(c0 + c) * p.w.stride(0) + k / 3 * p.w.stride(2) + k % 3 * p.w.stride(3)]
                 : 0.0f;
        bias[c] = in && b ? b[(c0 + c) * bias_step] : 0.0f;
      }
      t.weights = weights;
      t.bias = b ? bias : nullptr;
      t.sums = sums.data();
      t.x = x + n * p.x.stride(0) + c0 * p.x.stride(1);
      t.y = y + n * p.y.stride(0) + c0 * p.y.stride(1);
      kernel(t);
    }
  });
}

}  // namespace

bool dwconv_s2_nhwc(const DwconvProblem& p) {
  const Window2d& win = p.window;
  return win.kernel_h == 3 && win.kernel_w == 3 && win.stride_h == 2 && win.stride_w == 2 &&
         win.dilation_h == 1 && win.dilation_w == 1 && win.ins_h == 0 && win.ins_w == 0 &&
         p.multiplier == 1 && p.accumulation != Fp32Accumulation::interleaved &&
         dense_planes(p.x) && lanes_contiguous(p.y) && p.y.dim(3) <= kDwS2NhwcMaxWidth &&
         apart(p.x, p.y);
}

bool dwconv_nhwc_rows(const DwconvProblem& p) {
  return lanes_contiguous(p.x) && lanes_contiguous(p.y) && apart(p.x, p.y);
}

void run_dwconv_nchwc(const DwconvProblem& p, DwGroupKernel kernel, DwNhwcRowsKernel rows,
                      int64_t lanes, DwS2NhwcKernel s2) {
  if (dwconv_nhwc_rows(p)) return run_rows(p, rows, lanes);
  if (s2 && dwconv_s2_nhwc(p)) return run_s2_nhwc(p, s2);
  const Window2d& win = p.window;
  const int64_t N = p.x.dim(0), C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const int64_t OH = p.y.dim(2), OW = p.y.dim(3), KH = win.kernel_h, KW = win.kernel_w;
  const int64_t Hp = H + win.pad_top + win.pad_bottom, Wp = W + win.pad_left + win.pad_right;
  std::vector<int64_t> tap, out_at;
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      tap.push_back((kh * win.dilation_h * Wp + kw * win.dilation_w) * lanes);
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow)
      out_at.push_back((oh * win.stride_h * Wp + ow * win.stride_w) * lanes);
  const int64_t groups = (C + lanes - 1) / lanes;
  const auto* x = static_cast<const float*>(p.x.raw());
  auto* y = static_cast<float*>(p.y.raw());
  const auto* w = static_cast<const float*>(p.w.raw());
  const float* bias = p.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  const int64_t bias_step = p.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  const bool clip = !clip_is_identity(p.clip);
  // Enough groups per task to be worth a thread (a 7x7 group is ~14k flops).
  const int64_t grain =
      std::max<int64_t>(1, 65536 / std::max<int64_t>(1, OH * OW * KH * KW * lanes));
  parallel_ranges(N * groups, grain, [&](int64_t begin, int64_t end) {
    GroupBuffers& buf = group_buffers();
    buf.padded.assign(static_cast<size_t>(Hp * Wp * lanes), 0.0f);  // the borders stay zero
    buf.sums.resize(static_cast<size_t>(OH * OW * lanes));
    buf.weights.assign(static_cast<size_t>(KH * KW * lanes), 0.0f);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / groups, c0 = task % groups * lanes;
      DwGroup g;
      g.channels = std::min(lanes, C - c0);
      for (int64_t c = 0; c < g.channels; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw)
            buf.weights[static_cast<size_t>((kh * KW + kw) * lanes + c)] =
                w[(c0 + c) * p.w.stride(0) + kh * p.w.stride(2) + kw * p.w.stride(3)];
      g.x = x + n * p.x.stride(0) + c0 * p.x.stride(1);
      g.x_channel = p.x.stride(1);
      g.x_channels_last = lanes_contiguous(p.x);
      g.x_row = p.x.stride(2);
      g.x_col = p.x.stride(3);
      g.h = H;
      g.w = W;
      g.pad_top = win.pad_top;
      g.pad_left = win.pad_left;
      g.wp = Wp;
      g.padded = buf.padded.data();
      g.out_at = out_at.data();
      g.tap = tap.data();
      g.taps = KH * KW;
      g.weights = buf.weights.data();
      g.sums = buf.sums.data();
      g.oh = OH;
      g.ow = OW;
      g.y = y + n * p.y.stride(0) + c0 * p.y.stride(1);
      g.y_channel = p.y.stride(1);
      g.y_channels_last = lanes_contiguous(p.y);
      g.y_row = p.y.stride(2);
      g.y_col = p.y.stride(3);
      g.bias = bias ? bias + c0 * bias_step : nullptr;
      g.bias_step = bias_step;
      static_cast<DwEpilogue&>(g) = dw_epilogue(p, clip);
      kernel(g);
    }
  });
}

}  // namespace npukit::cpu
