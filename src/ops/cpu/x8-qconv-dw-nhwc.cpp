// Depthwise integer convolution on channels-last tensors (qconv_dw_nhwc.hpp):
// the padded copy of x', the per-call weights, the task split (one output
// row each, so results do not depend on the thread count) and the portable
// pixel kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_dw_cols.hpp"
#include "ops/cpu/qconv_dw_nhwc.hpp"
#include "ops/cpu/qconv_nhwc.hpp"
#include "ops/quantized_common.hpp"

namespace npukit::qconv {

namespace {
uint32_t u32(int64_t v) {
  return static_cast<uint32_t>(static_cast<uint64_t>(v));
}
}  // namespace

const char* dw_nhwc_declines(const QConvProblem& p) {
  if (!p.depthwise) return "not depthwise";
  if (!p.requantize) return "int32 outputs (ConvInteger)";
  if (!is_channels_last(p.x) || !is_channels_last(p.y)) return "x or y is not channels-last";
  if (p.w.dim(2) * p.w.dim(3) > kDwNhwcMaxTaps) return "window larger than 64 taps";
  const Window2d& w = p.window;
  if (w.pad_top < 0 || w.pad_bottom < 0 || w.pad_left < 0 || w.pad_right < 0)
    return "negative pads";
  if (p.rounding != Rounding::half_to_even) return "rounding is not half_to_even";
  if (!qconv_multipliers_finite(p)) return "a requantization multiplier is not finite";
  return nullptr;
}

const char* dw_nhwc_quads_declines(const QConvProblem& p) {
  if (const char* why = dw_nhwc_declines(p)) return why;
  // Below 64 channels most of a chunk's lanes would be padding (bench_qconv:
  // 32 channels at 112x112 run slower than on the pair kernel).
  if (p.x.dim(1) < kDwQuadChunk) return "fewer than 64 channels";
  if (!weights_symmetric(p)) return "a weight zero point is not 0 (s8) or 128 (u8)";
  return nullptr;
}

void dw_nhwc_portable(const DwNhwcRow& r) {
  const detail::CodeRange range = r.y_s8 ? detail::CodeRange{-128, 127} : detail::CodeRange{0, 255};
  for (int64_t i = 0; i < r.n; ++i) {
    const uint8_t* x = r.x + i * r.x_step;
    for (int64_t c = 0; c < r.C; ++c) {
      uint32_t s = u32(r.offset[c]);  // wrapping, as the SIMD lanes
      for (int64_t t = 0; t < 2 * r.pairs; ++t) {
        const uint32_t pair = u32(r.w[t / 2 * r.Cp + c]);
        const auto w = static_cast<int16_t>(static_cast<uint16_t>(pair >> (t % 2 * 16)));
        const uint8_t* tap = r.tap_ptr ? r.tap_ptr[t] : x + r.tap_off[t];
        s += u32(int32_t{tap[c]} * w);
      }
      const int32_t v = detail::requantize_float(static_cast<int32_t>(s), r.multiplier[c], r.y_zp,
                                                 range, Rounding::half_to_even);
      r.y[i * r.y_step + c] = static_cast<uint8_t>(v);  // s8 codes as their bits
    }
  }
}

DwNhwcWeights pack_dw_nhwc(const TensorView& w, const QuantParams& wq) {
  const int64_t C = w.dim(0), KW = w.dim(3), taps = w.dim(2) * KW;
  const int64_t Cp = (C + kDwNhwcLanes - 1) / kDwNhwcLanes * kDwNhwcLanes;
  DwNhwcWeights d;
  d.pairs.assign(static_cast<size_t>((taps + 1) / 2 * Cp), 0);
  d.sum.assign(static_cast<size_t>(C), 0);
  for (int64_t c = 0; c < C; ++c) {
    const int32_t zp = wq.zero_point_at(c);
    d.zero_point.push_back(zp);
    uint32_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t at = c * w.stride(0) + t / KW * w.stride(2) + t % KW * w.stride(3);
      const int32_t v = w.dtype() == DType::s8 ? int32_t{static_cast<const int8_t*>(w.raw())[at]}
                                               : int32_t{static_cast<const uint8_t*>(w.raw())[at]};
      const uint32_t half = static_cast<uint16_t>(static_cast<int16_t>(v - zp));
      d.pairs[static_cast<size_t>(t / 2 * Cp + c)] |= static_cast<int32_t>(half << (t % 2 * 16));
      sum += u32(v - zp);
    }
    d.sum[static_cast<size_t>(c)] = static_cast<int32_t>(sum);
  }
  // The quad layout, when every w' fits s8.
  bool fits = true;
  for (int64_t t = 0; t < taps && fits; ++t)
    for (int64_t c = 0; c < C && fits; ++c) {
      const auto v = static_cast<int16_t>(
          static_cast<uint16_t>(u32(d.pairs[static_cast<size_t>(t / 2 * Cp + c)]) >> (t % 2 * 16)));
      fits = v >= -128 && v <= 127;
    }
  if (!fits) return d;
  d.cols = pack_dw_cols(d, C, w.dim(2), KW, 0);
  if (w.dim(2) < kDwColsMaxRows) d.cols_lower = pack_dw_cols(d, C, w.dim(2), KW, 1);
  const int64_t quads = (taps + 3) / 4, chunks = (C + kDwQuadChunk - 1) / kDwQuadChunk;
  d.quads.assign(static_cast<size_t>(quads * chunks * kDwQuadChunk * 4), 0);
  for (int64_t q = 0; q < quads; ++q)
    for (int64_t ch = 0; ch < chunks; ++ch)
      for (int64_t i = 0; i < kDwQuadChunk; ++i) {  // i = 16 * j + d
        const int64_t c = ch * kDwQuadChunk + dw_quad_channel(i);
        for (int64_t k = 0; k < 4; ++k) {
          const int64_t t = 4 * q + k;
          if (c >= C || t >= taps) continue;
          const auto v = static_cast<int16_t>(static_cast<uint16_t>(
              u32(d.pairs[static_cast<size_t>(t / 2 * Cp + c)]) >> (t % 2 * 16)));
          d.quads[static_cast<size_t>(((q * chunks + ch) * kDwQuadChunk + i) * 4 + k)] =
              static_cast<int8_t>(v);
        }
      }
  return d;
}

bool dw_nhwc_weights_match(const DwNhwcWeights& d, const QuantParams& wq, int64_t C) {
  if (static_cast<int64_t>(d.zero_point.size()) != C) return false;
  for (int64_t c = 0; c < C; ++c)
    if (d.zero_point[static_cast<size_t>(c)] != wq.zero_point_at(c)) return false;
  return true;
}

namespace {

// What the taps read: x itself (u8 with channels a multiple of 16) or x' in
// a padded NHWC copy with x_zp' in the padding: a padding tap adds x_zp' * w',
// which the offset takes back, as it does for every tap.
struct DwInput {
  uint8_t flip = 0;  // 0x80 for s8 x: x' = x ^ 0x80 as u8
  int32_t xz = 0;    // x_zp'
  bool in_place = false;
  const uint8_t* copy = nullptr;  // the padded copy [N][Hp][Wp][Cp] (not in place)
  int64_t sH = 0, sW = 0;         // a tap's row and column steps in what is read
};

DwInput padded_input(const QConvProblem& p, int64_t Hp, int64_t Wp, int64_t Cp) {
  const int64_t N = p.x.dim(0), C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const Window2d& win = p.window;
  DwInput in;
  in.flip = p.x.dtype() == DType::s8 ? 0x80 : 0;
  in.xz = p.x_zp + (in.flip ? 128 : 0);
  in.in_place = in.flip == 0 && C == Cp;
  in.sH = in.in_place ? p.x.stride(2) : Wp * Cp;
  in.sW = in.in_place ? p.x.stride(3) : Cp;
  if (in.in_place) return in;
  thread_local std::vector<uint8_t> xn;  // per calling thread: runs may overlap
  xn.resize(static_cast<size_t>(N * Hp * Wp * Cp));
  uint8_t* xw = xn.data();  // (the workers' own thread_local copies are other vectors)
  in.copy = xw;
  const auto* x0 = static_cast<const uint8_t*>(p.x.raw());
  const uint8_t flip = in.flip;
  const int32_t xz = in.xz;
  parallel_for(N * Hp, [&](int64_t nh) {
    const int64_t n = nh / Hp, h = nh % Hp - win.pad_top;
    uint8_t* row = xw + nh * Wp * Cp;
    if (h < 0 || h >= H) {
      std::memset(row, xz, static_cast<size_t>(Wp * Cp));
      return;
    }
    std::memset(row, xz, static_cast<size_t>(win.pad_left * Cp));
    std::memset(row + (win.pad_left + W) * Cp, xz, static_cast<size_t>(win.pad_right * Cp));
    const uint8_t* src = x0 + n * p.x.stride(0) + h * p.x.stride(2);
    uint8_t* dst = row + win.pad_left * Cp;
    for (int64_t w = 0; w < W; ++w, dst += Cp, src += p.x.stride(3)) {
      if (flip == 0)
        std::memcpy(dst, src, static_cast<size_t>(C));
      else
        for (int64_t c = 0; c < C; ++c) dst[c] = src[c] ^ flip;
      std::memset(dst + C, xz, static_cast<size_t>(Cp - C));  // meets w' = 0
    }
  });
  return in;
}

}  // namespace

// w' in tap pairs and its sums: packed with the weights when their zero
// points were these, else made here. Then the offsets and multipliers: the
// load-time epilogue's when it was built for these parameters (its offsets
// b - x_zp' * sum(w - w_zp) are these, x_zp' by the pack's x dtype, which
// qconv_packed_matches compares), else made here.
void dw_constants(const QConvProblem& p, int32_t xz, int64_t Cp, DwConstants& k, bool quad_order) {
  const int64_t C = p.x.dim(1);
  const QConvEpilogue* epi =
      p.packed && qconv_packed_matches(*p.packed, p) ? qconv_packed_epilogue(p.packed, p) : nullptr;
  if (epi && p.packed->dw_nhwc.pairs.empty()) epi = nullptr;
  k.dw = p.packed ? &p.packed->dw_nhwc : nullptr;
  // (The epilogue's zero points are the call's, so are the pack's then.)
  if (epi == nullptr &&
      (k.dw == nullptr || k.dw->pairs.empty() || !dw_nhwc_weights_match(*k.dw, p.wq, C))) {
    k.own = pack_dw_nhwc(p.w, p.wq);
    k.dw = &k.own;
  }
  if (epi == nullptr) {
    k.offset_here.assign(static_cast<size_t>(Cp), 0);
    k.mult_here.assign(static_cast<size_t>(Cp), 1.0f);
    for (int64_t c = 0; c < C; ++c) {
      const int64_t b =
          p.bias.raw() ? static_cast<const int32_t*>(p.bias.raw())[c * p.bias.stride(0)] : 0;
      k.offset_here[static_cast<size_t>(c)] =
          static_cast<int32_t>(u32(b) - u32(xz) * u32(k.dw->sum[static_cast<size_t>(c)]));
      k.mult_here[static_cast<size_t>(c)] = p.multiplier(c);
    }
  }
  // (The epilogue's arrays are padded to 64 channels, offset 0 and multiplier 1, past Cp.)
  k.offset = epi ? epi->offset.data() : k.offset_here.data();
  k.mult = epi ? epi->mult.data() : k.mult_here.data();
  k.epi = epi;
  if (k.dw->quads.empty() || !quad_order) return;
  const int64_t chunks = (C + kDwQuadChunk - 1) / kDwQuadChunk;
  k.offset_q.assign(static_cast<size_t>(chunks * kDwQuadChunk), 0);
  k.mult_q.assign(static_cast<size_t>(chunks * kDwQuadChunk), 1.0f);
  for (int64_t i = 0; i < chunks * kDwQuadChunk; ++i) {
    const int64_t c = i / kDwQuadChunk * kDwQuadChunk + dw_quad_channel(i % kDwQuadChunk);
    if (c >= C) continue;
    k.offset_q[static_cast<size_t>(i)] = k.offset[c];
    k.mult_q[static_cast<size_t>(i)] = k.mult[c];
  }
}

namespace {

// Byte offsets of the taps from a pixel's first in what is read (row step sH,
// column step sW); taps past the window's last read its last (w' = 0 there).
std::vector<int64_t> tap_offsets(const QConvProblem& p, int64_t ntaps, int64_t sH, int64_t sW) {
  const int64_t KW = p.w.dim(3), taps = p.w.dim(2) * KW;
  std::vector<int64_t> off(static_cast<size_t>(ntaps));
  for (int64_t t = 0; t < ntaps; ++t) {
    const int64_t tap = std::min(t, taps - 1);
    off[static_cast<size_t>(t)] =
        tap / KW * p.window.dilation_h * sH + tap % KW * p.window.dilation_w * sW;
  }
  return off;
}

// In place, the pixels whose window lies inside x: rows [oh_lo, oh_hi),
// columns [ow_lo, ow_hi); the others take their taps one by one.
struct InsideRange {
  int64_t oh_lo, oh_hi, ow_lo, ow_hi;
};

InsideRange inside_range(const QConvProblem& p) {
  const Window2d& win = p.window;
  auto first_inside = [](int64_t pad, int64_t stride) { return (pad + stride - 1) / stride; };
  auto end_inside = [](int64_t pad, int64_t stride, int64_t span, int64_t size, int64_t out) {
    const int64_t last = size - span + pad;  // largest o * stride inside
    return last < 0 ? int64_t{0} : std::min(out, last / stride + 1);
  };
  const int64_t span_h = (p.w.dim(2) - 1) * win.dilation_h + 1;
  const int64_t span_w = (p.w.dim(3) - 1) * win.dilation_w + 1;
  return {first_inside(win.pad_top, win.stride_h),
          end_inside(win.pad_top, win.stride_h, span_h, p.x.dim(2), p.y.dim(2)),
          first_inside(win.pad_left, win.stride_w),
          end_inside(win.pad_left, win.stride_w, span_w, p.x.dim(3), p.y.dim(3))};
}

}  // namespace

// Rows, cut into column parts when there are few rows (7x7, 14x14 maps): 7
// whole rows on two threads would leave one waiting for a fourth. Each pixel
// is computed alone, so the cut does not change any result.
DwRowTasks::DwRowTasks(int64_t N, int64_t OH, int64_t OW) : rows_(N * OH), OH_(OH) {
  const int64_t want = 4 * std::max(1, num_threads());
  parts_ = rows_ >= want ? 1 : std::min(OW, (want + rows_ - 1) / rows_);
  cols_ = OW / parts_, wider_ = OW % parts_;
}

// Part-major order, the longer parts (one column more) first: threads taking
// tasks in turn then end together.
DwRowTask DwRowTasks::at(int64_t task) const {
  const int64_t part = task / rows_;
  DwRowTask t;
  t.n = task % rows_ / OH_, t.oh = task % rows_ % OH_;
  t.ow0 = part * cols_ + std::min(part, wider_);
  t.ow1 = t.ow0 + cols_ + (part < wider_ ? 1 : 0);
  return t;
}

void run_dw_nhwc(const QConvProblem& p, DwNhwcFn fn) {
  const int64_t C = p.x.dim(1), H = p.x.dim(2), W = p.x.dim(3);
  const int64_t KH = p.w.dim(2), KW = p.w.dim(3), taps = KH * KW;
  const int64_t OH = p.y.dim(2), OW = p.y.dim(3);
  const Window2d& win = p.window;
  const int64_t Cp = (C + kDwNhwcLanes - 1) / kDwNhwcLanes * kDwNhwcLanes;
  const int64_t Hp = H + win.pad_top + win.pad_bottom, Wp = W + win.pad_left + win.pad_right;
  const DwInput in = padded_input(p, Hp, Wp, Cp);
  DwConstants k;
  dw_constants(p, in.xz, Cp, k);
  const auto* x0 = static_cast<const uint8_t*>(p.x.raw());
  const int64_t sH = in.sH, sW = in.sW;
  // 4 * quads taps (>= 2 * pairs): the quad kernel's too.
  const int64_t pairs = (taps + 1) / 2, quads = (taps + 3) / 4, ntaps = 4 * quads;
  const std::vector<int64_t> tap_off = tap_offsets(p, ntaps, sH, sW);
  const std::vector<uint8_t> zp_row(static_cast<size_t>(Cp), static_cast<uint8_t>(in.xz));
  const InsideRange inside = inside_range(p);

  const DwRowTasks tasks(p.x.dim(0), OH, OW);
  parallel_for(tasks.count(), [&](int64_t task) {
    const DwRowTask t = tasks.at(task);
    const int64_t n = t.n, oh = t.oh, ow0 = t.ow0, ow1 = t.ow1;
    DwNhwcRow r;
    // (in place, r.x is set per run of pixels below)
    r.x = in.in_place ? nullptr : in.copy + (n * Hp + oh * win.stride_h) * Wp * Cp;
    r.x_step = win.stride_w * Cp, r.n = OW;
    r.tap_off = tap_off.data();
    r.pairs = pairs, r.C = C, r.Cp = Cp;
    r.w = k.dw->pairs.data();
    r.offset = k.offset;
    r.multiplier = k.mult;
    if (!k.dw->quads.empty()) {
      r.quads = quads, r.wq = k.dw->quads.data();
      r.offset_q = k.offset_q.data(), r.multiplier_q = k.mult_q.data();
    }
    r.y_zp = p.y_zp, r.y_s8 = p.y.dtype() == DType::s8;
    r.y = static_cast<uint8_t*>(p.y.raw()) + n * p.y.stride(0) + oh * p.y.stride(2);
    r.y_step = p.y.stride(3);
    if (!in.in_place) {
      r.x += ow0 * r.x_step, r.y += ow0 * r.y_step, r.n = ow1 - ow0;
      return fn(r);
    }
    uint8_t* const y_row = r.y;
    const uint8_t* x_img = x0 + n * p.x.stride(0);
    const int64_t ih0 = oh * win.stride_h - win.pad_top;
    // A pixel with taps in the padding: each tap's address.
    auto border = [&](int64_t ow) {
      const uint8_t* ptr[kDwNhwcMaxTaps];
      const int64_t iw0 = ow * win.stride_w - win.pad_left;
      for (int64_t t = 0; t < ntaps; ++t) {
        const int64_t tap = std::min(t, taps - 1);
        const int64_t ih = ih0 + tap / KW * win.dilation_h, iw = iw0 + tap % KW * win.dilation_w;
        ptr[t] = ih >= 0 && ih < H && iw >= 0 && iw < W ? x_img + ih * sH + iw * sW : zp_row.data();
      }
      DwNhwcRow b = r;
      b.tap_ptr = ptr, b.n = 1;
      b.y = y_row + ow * r.y_step;
      fn(b);
    };
    const bool rows_inside = oh >= inside.oh_lo && oh < inside.oh_hi;
    const int64_t lo = rows_inside ? std::min(inside.ow_lo, OW) : OW;
    const int64_t hi = rows_inside ? std::max(lo, inside.ow_hi) : OW;
    // This part's columns [ow0, ow1): borders, the run inside x, borders.
    const int64_t in0 = std::clamp(lo, ow0, ow1), in1 = std::clamp(hi, in0, ow1);
    for (int64_t ow = ow0; ow < in0; ++ow) border(ow);
    if (in1 > in0) {
      r.x = x_img + ih0 * sH + (in0 * win.stride_w - win.pad_left) * sW;
      r.x_step = win.stride_w * sW, r.n = in1 - in0;
      r.y = y_row + in0 * r.y_step;
      fn(r);
    }
    for (int64_t ow = in1; ow < ow1; ++ow) border(ow);
  });
}

}  // namespace npukit::qconv
