// Driver of the fp32 depthwise family: checks what the fast kernels cannot
// reproduce, lays out each input plane with its zeros written out, threads
// over planes, and lists the kernels.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dwconv.hpp"
#include "finite.hpp"
#include "flush_scope.hpp"
#include "npukit/parallel.hpp"
#include "ops/conv_mlas_order.hpp"
#include "phase_split.hpp"

namespace npukit::cpu {

namespace {

constexpr int64_t kMaxLanes = 16;  // the widest plane kernel's vector

bool has_zero_taps(const Window2d& win) {
  return win.pad_top || win.pad_bottom || win.pad_left || win.pad_right || win.ins_h || win.ins_w;
}

}  // namespace

const char* dwconv_declines_fast(const DwconvProblem& p) {
  const Window2d& win = p.window;
  if (win.pad_top < 0 || win.pad_bottom < 0 || win.pad_left < 0 || win.pad_right < 0)
    return "negative pads";
  if (p.flush_denormals && !kCanFlush) return "flushing denormals needs the x86 MXCSR";
  // The sequential reference skips padded and inserted taps, where the fast
  // kernels add 0 * w: the same sum (the accumulator is never -0) unless a
  // weight is infinite or NaN.
  if (p.accumulation != Fp32Accumulation::interleaved && has_zero_taps(win) && !p.w_known_finite &&
      !all_finite_f32(p.w))
    return "a non-finite weight with padded or inserted taps";
  if (const int64_t block = mlas_nchwc_block(p.accumulation)) {
    const int64_t C = p.x.dim(1);
    if (detail::mlas_conv_order(1, p.multiplier, win.kernel_h * win.kernel_w, C, block)
            .chain_end.size() != 1)
      return "an mlas_nchwc order of more than one chain (over 128 taps)";
  }
  return nullptr;
}

namespace {

// Geometry of the padded, phase-split input plane: stride_w column phases,
// each of stride_h row phases of Hs rows of `row` floats.
struct Layout {
  int64_t Hp, Wp, Hs, row, row_phase, phase_size, plane, buffer;
};

Layout layout(const DwconvProblem& p) {
  const Window2d& win = p.window;
  const int64_t H = p.x.dim(2), W = p.x.dim(3), OW = p.y.dim(3);
  Layout l;
  l.Hp = (H - 1) * (win.ins_h + 1) + 1 + win.pad_top + win.pad_bottom;
  l.Wp = (W - 1) * (win.ins_w + 1) + 1 + win.pad_left + win.pad_right;
  l.Hs = (l.Hp + win.stride_h - 1) / win.stride_h;
  const int64_t reach = (win.kernel_w - 1) * win.dilation_w / win.stride_w;
  l.row = std::max((l.Wp + win.stride_w - 1) / win.stride_w, OW + reach);
  l.row_phase = l.Hs * l.row;
  l.phase_size = win.stride_h * l.row_phase;
  l.plane = win.stride_w * l.phase_size;
  // Vector loads of a row's (or the flat walk's) last outputs run past the
  // last row: zeros, never used.
  l.buffer = l.plane + l.row + kMaxLanes;
  return l;
}

// Where each input column and row goes in the padded plane (phase and
// index), so that filling a plane needs no division.
struct PlaneMap {
  std::vector<int64_t> column, row;  // float offsets
};

PlaneMap plane_map(const DwconvProblem& p, const Layout& l) {
  const Window2d& win = p.window;
  PlaneMap map;
  for (int64_t w = 0; w < p.x.dim(3); ++w) {
    const int64_t pc = win.pad_left + w * (win.ins_w + 1);
    map.column.push_back(pc % win.stride_w * l.phase_size + pc / win.stride_w);
  }
  for (int64_t h = 0; h < p.x.dim(2); ++h) {
    const int64_t pr = win.pad_top + h * (win.ins_h + 1);
    map.row.push_back(pr % win.stride_h * l.row_phase + pr / win.stride_h * l.row);
  }
  return map;
}

// Writes input plane (n, ic) into its padded positions; the zeros stay.
void fill_plane(const DwconvProblem& p, const Layout& l, const PlaneMap& map, int64_t n, int64_t ic,
                float* dst, RowSplit split) {
  const Window2d& win = p.window;
  const int64_t H = p.x.dim(2), W = p.x.dim(3);
  const float* src = static_cast<const float*>(p.x.raw()) + n * p.x.stride(0) + ic * p.x.stride(1);
  const int64_t xs_h = p.x.stride(2), xs_w = p.x.stride(3);
  const int64_t phases = win.stride_w;
  const bool copy_rows = phases == 1 && win.ins_w == 0 && xs_w == 1;
  for (int64_t h = 0; h < H; ++h) {
    const float* s = src + h * xs_h;
    float* row = dst + map.row[static_cast<size_t>(h)];
    if (copy_rows) {
      for (int64_t w = 0; w < W; ++w) row[win.pad_left + w] = s[w];
      continue;
    }
    if (phases == 2 && win.ins_w == 0 && xs_w == 1) {
      split(s, W, win.pad_left, row, row + l.phase_size);
      continue;
    }
    if (win.ins_w == 0) {
      // Without inserted zeros, every stride_w-th column goes to consecutive
      // columns of one phase: strided copies instead of indexed stores.
      for (int64_t ph = 0; ph < phases; ++ph) {
        const int64_t w0 = ((ph - win.pad_left) % phases + phases) % phases;
        float* d = row + ph * l.phase_size + (win.pad_left + w0) / phases;
        for (int64_t w = w0; w < W; w += phases) *d++ = s[w * xs_w];
      }
      continue;
    }
    for (int64_t w = 0; w < W; ++w) row[map.column[static_cast<size_t>(w)]] = s[w * xs_w];
  }
}

struct PlaneBuffers {
  std::vector<float> input, output, scratch;
};
PlaneBuffers& plane_buffers() {
  thread_local PlaneBuffers b;
  return b;
}

}  // namespace

bool dwconv_reads_in_place(const DwconvProblem& p) {
  const Window2d& win = p.window;
  return win.kernel_h == 3 && win.kernel_w == 3 && win.stride_h <= 2 &&
         win.stride_w == win.stride_h && win.dilation_h == 1 && win.dilation_w == 1 &&
         win.ins_h == 0 && win.ins_w == 0 && p.x.stride(3) == 1 &&
         p.accumulation != Fp32Accumulation::interleaved;
}

bool dwconv_flat_walk(int64_t oh, int64_t ow, int64_t row, int64_t lanes) {
  if (lanes < 2) return false;
  const int64_t rows = oh * ((ow + lanes - 1) / lanes);  // vectors of the row walk
  const int64_t flat = (oh * row + lanes - 1) / lanes;
  // The flat walk's copy of each row vector to y costs about a quarter of a
  // vector of 3x3 taps.
  return 4 * flat + rows < 4 * rows;
}

namespace {

// Each tap's offset in the padded (phase-split) input plane, row-major taps.
std::vector<int64_t> tap_offsets(const Window2d& win, const Layout& l) {
  std::vector<int64_t> tap(static_cast<size_t>(win.kernel_h * win.kernel_w));
  for (int64_t kh = 0; kh < win.kernel_h; ++kh)
    for (int64_t kw = 0; kw < win.kernel_w; ++kw) {
      const int64_t r = kh * win.dilation_h, col = kw * win.dilation_w;
      tap[static_cast<size_t>(kh * win.kernel_w + kw)] =
          col % win.stride_w * l.phase_size + r % win.stride_h * l.row_phase +
          r / win.stride_h * l.row + col / win.stride_w;
    }
  return tap;
}

// A strided output plane: the kernel works on a contiguous copy (it may read
// the plane first, for result_add), copied back after.
void run_through_contiguous(const DwconvProblem& p, DwPlaneKernel kernel, DwPlane& d, float* yplane,
                            std::vector<float>& plane) {
  const int64_t OH = p.y.dim(2), OW = p.y.dim(3);
  d.y = plane.data();
  d.y_row = OW;
  for (int64_t h = 0; h < OH; ++h)
    for (int64_t w = 0; w < OW; ++w)
      plane[static_cast<size_t>(h * OW + w)] = yplane[h * p.y.stride(2) + w * p.y.stride(3)];
  kernel(d);
  for (int64_t h = 0; h < OH; ++h)
    for (int64_t w = 0; w < OW; ++w)
      yplane[h * p.y.stride(2) + w * p.y.stride(3)] = plane[static_cast<size_t>(h * OW + w)];
}

// Output channel oc's weights, row-major taps.
void plane_weights(const TensorView& w, int64_t oc, std::vector<float>& weights) {
  const auto* base = static_cast<const float*>(w.raw());
  const int64_t KH = w.dim(2), KW = w.dim(3);
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      weights[static_cast<size_t>(kh * KW + kw)] =
          base[oc * w.stride(0) + kh * w.stride(2) + kw * w.stride(3)];
}

}  // namespace

// The largest input plane whose successor the direct walks prefetch.
constexpr int64_t kPrefetchPlaneBytes = 16 * 1024;

void run_dwconv(const DwconvProblem& p, DwPlaneKernel kernel, int64_t lanes, RowSplit split) {
  const Window2d& win = p.window;
  const int64_t N = p.y.dim(0), OC = p.y.dim(1), OH = p.y.dim(2), OW = p.y.dim(3);
  const int64_t KH = win.kernel_h, KW = win.kernel_w;
  const Layout l = layout(p);
  const PlaneMap map = plane_map(p, l);
  const std::vector<int64_t> tap = tap_offsets(win, l);
  const bool flat = dwconv_flat_walk(OH, OW, l.row, lanes);
  // The lines walk's tap structure (DwPlane::line_stride).
  const bool lines3x3 = lanes > 1 && KH == 3 && KW == 3 && win.dilation_h == 1 &&
                        win.stride_h <= 2 && p.accumulation != Fp32Accumulation::interleaved;
  const bool lines = lines3x3 && !flat;
  const bool direct = lanes > 1 && dwconv_reads_in_place(p);  // no padded copy
  // Direct walks prefetch the next channel's plane where it fits in L1 beside
  // this one (DwPlane::next_in; mobilenet_v2 in the model, 1 thread: 144@56 s2
  // and 192@28 s1 2-3% faster; the 50 KB planes of 96@112 s2 1.5% slower).
  const bool prefetch = direct && p.multiplier == 1 &&
                        p.x.dim(2) * p.x.stride(2) * int64_t{sizeof(float)} <= kPrefetchPlaneBytes;
  const float* bias = p.has_bias ? static_cast<const float*>(p.bias.raw()) : nullptr;
  const int64_t bias_step = p.has_bias ? p.bias.stride(p.bias.rank() == 1 ? 0 : 1) : 0;
  const bool y_rows_contiguous = p.y.stride(3) == 1;
  // The clip is fused into the plane kernels, except under flushing (the
  // MXCSR's DAZ would change its comparisons of denormals): applied after.
  const bool clipped = !clip_is_identity(p.clip);
  const bool fused_clip = clipped && !p.flush_denormals;
  // Enough planes per task to be worth a thread (a 7x7 3x3 plane is ~900 flops).
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, OH * OW * KH * KW));
  parallel_ranges(N * OC, grain, [&](int64_t begin, int64_t end) {
    FlushScope flush(p.flush_denormals);
    PlaneBuffers& buf = plane_buffers();
    if (!direct) buf.input.assign(static_cast<size_t>(l.buffer), 0.0f);
    if (!y_rows_contiguous) buf.output.resize(static_cast<size_t>(OH * OW));
    if (flat) buf.scratch.resize(static_cast<size_t>(OH * l.row + kMaxLanes));
    std::vector<float> weights(static_cast<size_t>(KH * KW));
    int64_t filled = -1;  // the (n, ic) plane now in buf.input
    // (n, oc) counted along, not divided out per plane: 7x7 planes are short.
    int64_t n = begin / OC, oc = begin % OC;
    for (int64_t plane = begin; plane < end; ++plane, oc = oc + 1 == OC ? (++n, 0) : oc + 1) {
      const int64_t ic = p.multiplier == 1 ? oc : oc / p.multiplier;
      if (!direct && n * p.x.dim(1) + ic != filled) {
        fill_plane(p, l, map, n, ic, buf.input.data(), split);
        filled = n * p.x.dim(1) + ic;
      }
      plane_weights(p.w, oc, weights);
      DwPlane d;
      d.x = buf.input.data();
      d.row = l.row;
      d.tap = tap.data();
      d.taps = KH * KW;
      d.w = weights.data();
      d.oh = OH;
      d.ow = OW;
      static_cast<DwEpilogue&>(d) = dw_epilogue(p, fused_clip);
      d.interleaved = p.accumulation == Fp32Accumulation::interleaved;
      d.has_bias = bias != nullptr;
      d.bias = bias ? bias[oc * bias_step] : 0.0f;
      d.flat = flat;
      d.line_stride = lines || direct ? win.stride_h : 0;
      d.row_phase = l.row_phase;
      d.direct = direct;
      d.in = static_cast<const float*>(p.x.raw()) + n * p.x.stride(0) + ic * p.x.stride(1);
      d.in_row = p.x.stride(2);
      d.next_in = prefetch && oc + 1 < OC && plane + 1 < end ? d.in + p.x.stride(1) : nullptr;
      d.in_h = p.x.dim(2);
      d.in_w = p.x.dim(3);
      d.pad_top = win.pad_top;
      d.pad_left = win.pad_left;
      d.scratch = buf.scratch.data();
      float* yplane = static_cast<float*>(p.y.raw()) + n * p.y.stride(0) + oc * p.y.stride(1);
      if (y_rows_contiguous) {
        d.y = yplane;
        d.y_row = p.y.stride(2);
        kernel(d);
        continue;
      }
      run_through_contiguous(p, kernel, d, yplane, buf.output);
    }
  });
  if (clipped && !fused_clip) ref::clip_f32(p.y, p.y, p.clip);
}

namespace {

void run_reference(const DwconvProblem& p) {
  if (p.accumulation == Fp32Accumulation::interleaved) {
    Depthwise2dParams d{p.window,     p.multiplier,   p.has_bias,
                        p.result_add, p.accumulation, p.flush_denormals};
    ref::depthwise2d_f32_interleaved(p.x, p.w, p.bias, p.y, d);
  } else {
    const Conv2dParams c{p.window,     p.x.dim(1),     p.has_bias,
                         p.result_add, p.accumulation, p.flush_denormals};
    if (mlas_nchwc_block(p.accumulation))
      ref::conv2d_f32_mlas(p.x, p.w, p.bias, p.y, c);
    else
      ref::conv2d_f32(p.x, p.w, p.bias, p.y, c);
  }
  // The fused clip: the unfused Clip, on the finished output.
  if (!clip_is_identity(p.clip)) ref::clip_f32(p.y, p.y, p.clip);
}

void run_avx512(const DwconvProblem& p) {
  run_dwconv(p, f32_dwconv_plane_avx512, 16, split_row_stride2_avx512);
}
void run_avx2(const DwconvProblem& p) {
  run_dwconv(p, f32_dwconv_plane_avx2, 8);
}
void run_portable(const DwconvProblem& p) {
  run_dwconv(p, f32_dwconv_plane_portable, 1);
}

void run_nchwc_avx512(const DwconvProblem& p) {
  run_dwconv_nchwc(p, f32_dwconv_group_avx512, f32_dwconv_nhwc_rows_avx512, 16,
                   f32_dwconv_s2_nhwc_avx512);
}
void run_nchwc_avx2(const DwconvProblem& p) {
  run_dwconv_nchwc(p, f32_dwconv_group_avx2, f32_dwconv_nhwc_rows_avx2, 8);
}

constexpr const char* kNchwcApplies =
    "as f32-dwconv-nchw, sequential or mlas_nchwc accumulation, multiplier 1, no inserted zeros, "
    "dense input and output planes, input planes of at most 28x28 positions, not 3x3 stride 1 "
    "on rows of 12+ outputs; or any plane with channels-last (channels contiguous) x or y";
constexpr const char* kNchwcAvx2Applies =
    "as f32-dwconv-nchw, sequential or mlas_nchwc accumulation, multiplier 1, no inserted zeros, "
    "dense input and output planes, input planes of at most 56x56 positions; or any plane with "
    "channels-last (channels contiguous) x or y";

constexpr const char* kApplies =
    "fp32 NCHW, every accumulation (mlas_nchwc: one chain), any geometry without negative pads; "
    "sequential and mlas_nchwc with padding need finite weights";

}  // namespace

const KernelList<DwconvProblem>& dwconv_kernels() {
  static const KernelList<DwconvProblem> list{
      "dwconv",
      {{"f32-dwconv-nchwc-avx512", Isa::avx512, kNchwcApplies, dwconv_nchwc_declines,
        run_nchwc_avx512},
       {"f32-dwconv-nchwc-avx2", Isa::avx2, kNchwcAvx2Applies, dwconv_nchwc_avx2_declines,
        run_nchwc_avx2},
       {"f32-dwconv-nchw-avx512", Isa::avx512, kApplies, dwconv_declines_fast, run_avx512},
       {"f32-dwconv-nchw-avx2", Isa::avx2, kApplies, dwconv_declines_fast, run_avx2},
       {"f32-dwconv-nchw-portable", Isa::portable, kApplies, dwconv_declines_fast, run_portable},
       {"f32-dwconv-reference", Isa::portable,
        "always (ref::conv2d_f32, ref::conv2d_f32_mlas, ref::depthwise2d_f32_interleaved)", nullptr,
        run_reference, true}}};
  return list;
}

}  // namespace npukit::cpu
