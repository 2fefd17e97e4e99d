// The column-quad depthwise kernel's set-up (qconv_dw_cols.hpp): its weight
// layout, the offsets and multipliers in its channel order, and the tasks
// (one output row or part of one each, as the other channels-last depthwise
// kernels: results do not depend on the thread count).
#include <algorithm>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_dw_cols.hpp"

namespace npukit::qconv {

const char* dw_cols_declines(const QConvProblem& p) {
  if (const char* why = dw_nhwc_declines(p)) return why;
  if (p.w.dim(2) > kDwColsMaxRows) return "window taller than 4 rows";
  if (p.w.dim(3) > kDwColsMaxCols) return "window wider than 4 columns";
  if (!weights_symmetric(p)) return "a weight zero point is not 0 (s8) or 128 (u8)";
  return nullptr;
}

std::vector<int8_t> pack_dw_cols(const DwNhwcWeights& d, int64_t C, int64_t KH, int64_t KW,
                                 int64_t shift) {
  if (KH + shift > kDwColsMaxRows || KW > kDwColsMaxCols) return {};
  const int64_t Cp = (C + kDwNhwcLanes - 1) / kDwNhwcLanes * kDwNhwcLanes;
  std::vector<int8_t> out(static_cast<size_t>(Cp * 4 * KW), 0);
  for (int64_t c0 = 0; c0 < Cp; c0 += dw_cols_chunk(Cp, c0)) {
    const int64_t n = dw_cols_chunk(Cp, c0);
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t i = 0; i < n; ++i) {  // i = n / 4 * j + d
        const int64_t c = c0 + dw_cols_channel(n, i), j = i / (n / 4), dword = i % (n / 4);
        for (int64_t k = 0; k < KH && c < C; ++k) {
          const int64_t t = k * KW + kw;
          const auto pair = static_cast<uint32_t>(d.pairs[static_cast<size_t>(t / 2 * Cp + c)]);
          const auto v = static_cast<int16_t>(static_cast<uint16_t>(pair >> (t % 2 * 16)));
          out[static_cast<size_t>(4 * KW * c0 + ((kw * 4 + j) * (n / 4) + dword) * 4 + shift + k)] =
              static_cast<int8_t>(v);  // fits: checked by pack_dw_nhwc
        }
      }
  }
  return out;
}

void dw_cols_order(const int32_t* offset, const float* mult, int64_t C, std::vector<int32_t>& o,
                   std::vector<float>& m) {
  const int64_t Cp = (C + kDwNhwcLanes - 1) / kDwNhwcLanes * kDwNhwcLanes;
  o.assign(static_cast<size_t>(Cp), 0);
  m.assign(static_cast<size_t>(Cp), 1.0f);
  for (int64_t c0 = 0; c0 < Cp; c0 += dw_cols_chunk(Cp, c0)) {
    const int64_t per = dw_cols_chunk(Cp, c0) / 4;  // dwords per vector
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t d = 0; d < per; ++d) {
        const int64_t c = c0 + 16 * (d / 4) + 4 * j + d % 4;  // dw_cols_channel
        if (c >= C) continue;
        o[static_cast<size_t>(c0 + j * per + d)] = offset[c];
        m[static_cast<size_t>(c0 + j * per + d)] = mult[c];
      }
  }
}

void run_dw_cols(const QConvProblem& p, DwColsFn fn, DwNhwcFn fallback) {
  const int64_t C = p.x.dim(1), H = p.x.dim(2), KH = p.w.dim(2);
  const int64_t Cp = (C + kDwNhwcLanes - 1) / kDwNhwcLanes * kDwNhwcLanes;
  const uint8_t flip = p.x.dtype() == DType::s8 ? 0x80 : 0;
  const int32_t xz = p.x_zp + (flip ? 128 : 0);
  DwConstants k;
  dw_constants(p, xz, Cp, k, false);
  if (k.dw->cols.empty()) return run_dw_nhwc(p, fallback);
  // Offsets and multipliers in the chunks' channel order: the load-time
  // epilogue's, else made here.
  std::vector<int32_t> offset_here;
  std::vector<float> mult_here;
  const bool packed = k.epi && !k.epi->dw_cols_offset.empty();
  if (!packed) dw_cols_order(k.offset, k.mult, C, offset_here, mult_here);
  const int32_t* offset = packed ? k.epi->dw_cols_offset.data() : offset_here.data();
  const float* mult = packed ? k.epi->dw_cols_mult.data() : mult_here.data();
  // The padding rows' codes, flipped back to x_zp' by the kernel.
  const std::vector<uint8_t> zp_row(static_cast<size_t>(Cp), static_cast<uint8_t>(xz ^ flip));
  const Window2d& win = p.window;
  const auto* x0 = static_cast<const uint8_t*>(p.x.raw());
  auto* y0 = static_cast<uint8_t*>(p.y.raw());
  // Output rows in pairs sharing one scratch row when the second's window is
  // the first's one row lower.
  const int64_t OH = p.y.dim(2);
  const bool pairs = win.stride_h == 1 && win.dilation_h == 1 && !k.dw->cols_lower.empty();
  const int64_t per_task = pairs ? 2 : 1, rows_read = KH + per_task - 1;
  const DwRowTasks tasks(p.x.dim(0), (OH + per_task - 1) / per_task, p.y.dim(3));
  parallel_for(tasks.count(), [&](int64_t task) {
    const DwRowTask t = tasks.at(task);
    const int64_t oh = t.oh * per_task;
    DwColsRow r;
    for (int64_t kh = 0; kh < kDwColsMaxRows; ++kh) {
      const int64_t ih = oh * win.stride_h - win.pad_top + kh * win.dilation_h;
      const bool inside = kh < rows_read && ih >= 0 && ih < H;
      r.row[kh] = inside ? x0 + t.n * p.x.stride(0) + ih * p.x.stride(2) : zp_row.data();
      r.row_step[kh] = inside ? p.x.stride(3) : 0;
    }
    r.KW = p.w.dim(3), r.C = C, r.Cp = Cp;
    r.W = p.x.dim(3), r.pad_left = win.pad_left;
    r.stride_w = win.stride_w, r.dilation_w = win.dilation_w;
    r.ow0 = t.ow0, r.ow1 = t.ow1;
    r.flip = flip, r.xz = static_cast<uint8_t>(xz);
    r.w = k.dw->cols.data(), r.offset = offset, r.multiplier = mult;
    r.y_zp = p.y_zp, r.y_s8 = p.y.dtype() == DType::s8;
    r.y = y0 + t.n * p.y.stride(0) + oh * p.y.stride(2);
    r.y_step = p.y.stride(3);
    if (pairs && oh + 1 < OH) r.w2 = k.dw->cols_lower.data(), r.y2 = r.y + p.y.stride(2);
    fn(r);
  });
}

}  // namespace npukit::qconv
