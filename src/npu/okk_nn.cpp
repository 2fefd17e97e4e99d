// okk.h face: the fp32 NN functions of seed 004. Each call checks the
// documented rules, gathers its operands from local memory into tensors,
// runs the operator core under Profile::bm1684 and scatters the result.
#include <cstring>

#include "cost_instruction.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/ops/elementwise.hpp"
#include "npukit/ops/matmul.hpp"
#include "npukit/ops/pool2d.hpp"
#include "okk_face.hpp"
#include "operand_scratch.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

ElementwiseParams bm1684_elementwise(bool result_add) {
  ElementwiseParams p;
  apply_profile(p, Profile::bm1684);
  p.result_add = result_add;
  return p;
}

// Per-channel operand (1, C, 1, 1) in the compact layout, as a (1, C, 1, 1) tensor.
Tensor channel_vector(const char* fn, const char* name, uint64_t addr, int64_t c) {
  rule_divisible(fn, name, addr, 4);
  const Place p = local_place(fn, name, addr, Dims{1, c, 1, 1}, nullptr, 4, DefaultLayout::compact);
  return gather_f32(fn, name, p);
}

// The place of a per-channel vector (already checked by channel_vector).
Place bias_place(uint64_t addr, int64_t c) {
  return Place{Space::local, addr, Dims{1, c, 1, 1},
               compact_stride(cfg(), start_npu(cfg(), addr), Dims{1, c, 1, 1}), 4};
}

// An fp32 operand in this thread's reused buffer for `slot`, dense NCHW.
TensorView scratch_f32(Slot slot, const char* fn, const Dims& d) {
  void* p = operand_scratch(slot, static_cast<size_t>(d.n * d.c * d.h * d.w) * 4, fn);
  return TensorView::contiguous(p, DType::f32, {d.n, d.c, d.h, d.w});
}
TensorView gathered_f32(Slot slot, const char* fn, const char* name, const Place& p) {
  TensorView t = scratch_f32(slot, fn, p.shape);
  gather_f32_into(fn, name, p, t.data<float>());
  return t;
}
TensorView gathered_matrix(Slot slot, const char* fn, const char* name, const Place& p,
                           int64_t rows, int64_t cols, int64_t cpc) {
  void* buf = operand_scratch(slot, static_cast<size_t>(rows * cols) * 4, fn);
  gather_matrix_into(fn, name, p, rows, cols, cpc, static_cast<float*>(buf));
  return TensorView::contiguous(buf, DType::f32, {rows, cols});
}

enum class ChannelKind : uint8_t { bias, scale, scale_bias };

void channel_function(const char* fn, ChannelKind kind, local_addr_t dst, local_addr_t src,
                      local_addr_t scale_addr, local_addr_t bias_addr, const dim4* shape,
                      const dim4* dst_stride, const dim4* src_stride, bool result_add) {
  need(shape, fn, "shape");
  rule_shape(fn, *shape);
  rule_divisible(fn, "dst_addr", dst, 4);
  rule_divisible(fn, "src_addr", src, 4);
  rule_same_npu(fn, "dst_addr", dst, "src_addr", src);
  const Dims s = dims(*shape);
  const Place dp = local_place(fn, "dst_addr", dst, s, dst_stride, 4);
  const Place sp = local_place(fn, "src_addr", src, s, src_stride, 4);
  const Tensor x = gather_f32(fn, "src_addr", sp);
  Tensor y = result_add ? gather_f32(fn, "dst_addr", dp) : Tensor(DType::f32, x.shape());
  const ElementwiseParams p = bm1684_elementwise(result_add);
  Tensor sc, bi;
  if (kind != ChannelKind::bias) {
    rule_same_npu(fn, "dst_addr", dst, "scale_addr", scale_addr);
    sc = channel_vector(fn, "scale_addr", scale_addr, s.c);
  }
  if (kind != ChannelKind::scale) {
    rule_same_npu(fn, "dst_addr", dst, "bias_addr", bias_addr);
    bi = channel_vector(fn, "bias_addr", bias_addr, s.c);
  }
  switch (kind) {
    case ChannelKind::bias:
      npukit::bias(x, bi, y, p);
      break;
    case ChannelKind::scale:
      npukit::scale(x, sc, y, p);
      break;
    case ChannelKind::scale_bias:
      npukit::scale_bias(x, sc, bi, y, p);
      break;
  }
  scatter_f32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp, kind == ChannelKind::scale_bias ? 2 : 1));
}

// The window rules shared by conv2d, depthwise2d and the pools (seed 004).
struct WindowArgs {
  const dim4* input_shape;
  int kernel_h, kernel_w;
  const Padding* padding;
  const dim2* stride;
  const dim2* dilation;
  // Pools: the vendor's simulator accepts more than 4095 channels (probed up
  // to 131072) and pools every channel; conv and depthwise reject them.
  bool channels_warn = false;
  // conv2d: the vendor's simulator does not check dilation <= 15 (probed
  // before); depthwise keeps the documented limit as an error.
  bool dilation_warn = false;
};

Window2d window_of(const char* fn, const WindowArgs& a, int64_t& oh, int64_t& ow) {
  need(a.input_shape, fn, "input_shape");
  const dim4& s = *a.input_shape;
  rule_range(fn, "input_shape->n", s.n, 1, 65535);
  if (a.channels_warn) {
    rule_range_warn_above(fn, "input_shape->c", s.c, 1, 4095, INT32_MAX);
  } else {
    rule_range(fn, "input_shape->c", s.c, 1, 4095);
  }
  rule_range(fn, "input_shape->h", s.h, 1, 2047);
  rule_range(fn, "input_shape->w", s.w, 1, 2047);
  Window2d w;
  w.kernel_h = a.kernel_h;
  w.kernel_w = a.kernel_w;
  rule_range(fn, "kernel_h", a.kernel_h, 1, 2047);
  rule_range(fn, "kernel_w", a.kernel_w, 1, 2047);
  if (a.padding) {
    rule_range(fn, "padding->top", a.padding->top, 0, 15);
    rule_range(fn, "padding->bottom", a.padding->bottom, 0, 15);
    rule_range(fn, "padding->left", a.padding->left, 0, 15);
    rule_range(fn, "padding->right", a.padding->right, 0, 15);
    w.pad_top = a.padding->top;
    w.pad_bottom = a.padding->bottom;
    w.pad_left = a.padding->left;
    w.pad_right = a.padding->right;
  }
  if (a.stride) {
    rule_range(fn, "stride->h", a.stride->h, 1, 15);
    rule_range(fn, "stride->w", a.stride->w, 1, 15);
    w.stride_h = a.stride->h;
    w.stride_w = a.stride->w;
  }
  if (a.dilation) {
    const int dmax = a.dilation_warn ? 2047 : 15;
    rule_range_warn_above(fn, "dilation->h", a.dilation->h, 1, 15, dmax);
    rule_range_warn_above(fn, "dilation->w", a.dilation->w, 1, 15, dmax);
    w.dilation_h = a.dilation->h;
    w.dilation_w = a.dilation->w;
  }
  const int64_t ph = s.h + w.pad_top + w.pad_bottom, pw = s.w + w.pad_left + w.pad_right;
  rule_range(fn, "input_shape->h + padding->top + padding->bottom", ph, 1, 2047);
  rule_range(fn, "input_shape->w + padding->left + padding->right", pw, 1, 2047);
  const int64_t kh = (w.kernel_h - 1) * w.dilation_h + 1, kw = (w.kernel_w - 1) * w.dilation_w + 1;
  rule(kh <= ph, fn, "kernel_h",
       std::to_string(a.kernel_h) + " (extent " + std::to_string(kh) + ")",
       "an extent no larger than the padded input height " + std::to_string(ph));
  rule(kw <= pw, fn, "kernel_w",
       std::to_string(a.kernel_w) + " (extent " + std::to_string(kw) + ")",
       "an extent no larger than the padded input width " + std::to_string(pw));
  oh = (ph - kh) / w.stride_h + 1;
  ow = (pw - kw) / w.stride_w + 1;
  rule_range(fn, "output_h", oh, 1, 2047);
  rule_range(fn, "output_w", ow, 1, 2047);
  return w;
}

int64_t cpn_of(uint64_t addr, int64_t c) {
  return channels_per_npu(cfg(), start_npu(cfg(), addr), c);
}

void pool(const char* fn, PoolMode mode, local_addr_t output_addr, local_addr_t input_addr,
          const dim4* input_shape, int kernel_h, int kernel_w, const Padding* padding,
          const dim2* stride) {
  int64_t oh = 0, ow = 0;
  Pool2dParams p;
  p.mode = mode;
  p.window =
      window_of(fn, {input_shape, kernel_h, kernel_w, padding, stride, nullptr, true}, oh, ow);
  apply_profile(p, Profile::bm1684);
  rule_divisible(fn, "output_addr", output_addr, 128);
  rule_divisible(fn, "input_addr", input_addr, 128);
  rule_same_npu(fn, "output_addr", output_addr, "input_addr", input_addr);
  const dim4& s = *input_shape;
  const Place ip = local_place(fn, "input_addr", input_addr, dims(s), nullptr, 4);
  const Place op = local_place(fn, "output_addr", output_addr, Dims{s.n, s.c, oh, ow}, nullptr, 4);
  rule_no_overlap(fn, "output_addr", op, "input_addr", ip);
  const Tensor x = gather_f32(fn, "input_addr", ip);
  Tensor y(DType::f32, {s.n, s.c, oh, ow});
  pool2d(x, y, p);
  scatter_f32(y, op);
  record_cost(bdc_window_instruction(fn, OpClass::pool, op, 1, kernel_h, kernel_w,
                                     p.window.stride_h, p.window.stride_w));
}

}  // namespace

extern "C" {

void okk_bdc_relu(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape,
                  const dim4* dst_stride, const dim4* src_stride) {
  constexpr const char* fn = "okk_bdc_relu";
  need(shape, fn, "shape");
  rule_shape(fn, *shape);
  rule_divisible(fn, "dst_addr", dst_addr, 4);
  rule_divisible(fn, "src_addr", src_addr, 4);
  rule_same_npu(fn, "dst_addr", dst_addr, "src_addr", src_addr);
  const Place dp = local_place(fn, "dst_addr", dst_addr, dims(*shape), dst_stride, 4);
  const Place sp = local_place(fn, "src_addr", src_addr, dims(*shape), src_stride, 4);
  const Tensor x = gather_f32(fn, "src_addr", sp);
  Tensor y(DType::f32, x.shape());
  relu(x, y, bm1684_elementwise(false));
  scatter_f32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

void okk_bdc_bias(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t bias_addr,
                  const dim4* shape, const dim4* dst_stride, const dim4* src_stride) {
  channel_function("okk_bdc_bias", ChannelKind::bias, dst_addr, src_addr, 0, bias_addr, shape,
                   dst_stride, src_stride, false);
}

void okk_bdc_scale(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t scale_addr,
                   const dim4* shape, const dim4* dst_stride, const dim4* src_stride) {
  channel_function("okk_bdc_scale", ChannelKind::scale, dst_addr, src_addr, scale_addr, 0, shape,
                   dst_stride, src_stride, false);
}

void okk_bdc_scale_bias(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t scale_addr,
                        local_addr_t bias_addr, const dim4* shape, const dim4* dst_stride,
                        const dim4* src_stride) {
  channel_function("okk_bdc_scale_bias", ChannelKind::scale_bias, dst_addr, src_addr, scale_addr,
                   bias_addr, shape, dst_stride, src_stride, false);
}

void okk_bdc_scale_ra(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t scale_addr,
                      const dim4* shape, const dim4* dst_stride, const dim4* src_stride,
                      bool result_add) {
  channel_function("okk_bdc_scale_ra", ChannelKind::scale, dst_addr, src_addr, scale_addr, 0, shape,
                   dst_stride, src_stride, result_add);
}

void okk_bdc_scale_bias_ra(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t scale_addr,
                           local_addr_t bias_addr, const dim4* shape, const dim4* dst_stride,
                           const dim4* src_stride, bool result_add) {
  channel_function("okk_bdc_scale_bias_ra", ChannelKind::scale_bias, dst_addr, src_addr, scale_addr,
                   bias_addr, shape, dst_stride, src_stride, result_add);
}

void okk_bdc_conv2d(local_addr_t output_addr, local_addr_t input_addr, local_addr_t weight_addr,
                    local_addr_t bias_addr, const dim4* input_shape, int output_c, int kernel_h,
                    int kernel_w, const dim4* input_stride, const dim4* kernel_stride,
                    bool using_bias, bool result_add, const Padding* padding, const dim2* stride,
                    const dim2* dilation) {
  constexpr const char* fn = "okk_bdc_conv2d";
  int64_t oh = 0, ow = 0;
  Conv2dParams p;
  p.window = window_of(
      fn, {input_shape, kernel_h, kernel_w, padding, stride, dilation, false, true}, oh, ow);
  p.has_bias = using_bias;
  p.result_add = result_add;
  apply_profile(p, Profile::bm1684);
  rule_range(fn, "output_c", output_c, 1, 4095);
  rule_divisible(fn, "output_addr", output_addr, 128);
  rule_divisible(fn, "input_addr", input_addr, 4);
  rule_divisible(fn, "weight_addr", weight_addr, 4);
  rule_same_npu(fn, "output_addr", output_addr, "weight_addr", weight_addr);
  const dim4& s = *input_shape;
  const int64_t IC = s.c, OC = output_c, KH = kernel_h, KW = kernel_w, ICn = (IC + 1) / 2;
  const Place ip = local_place(fn, "input_addr", input_addr, dims(s), input_stride, 4);
  const Place op = local_place(fn, "output_addr", output_addr, Dims{s.n, OC, oh, ow}, nullptr, 4);
  // 2IC weights: (ceil(IC/2), OC, KH, KW) elements of fp32 pairs, strides in pairs.
  const Place wp = local_place(fn, "weight_addr", weight_addr, Dims{ICn, OC, KH, KW}, kernel_stride,
                               8, DefaultLayout::compact);
  rule_no_overlap(fn, "output_addr", op, "input_addr", ip);
  rule_no_overlap(fn, "output_addr", op, "weight_addr", wp);
  const TensorView x = gathered_f32(Slot::input, fn, "input_addr", ip);
  uint8_t* raw = static_cast<uint8_t*>(
      operand_scratch(Slot::weight_raw, static_cast<size_t>(ICn * OC * KH * KW * 8), fn));
  gather_raw_into(fn, "weight_addr", wp, raw);
  const TensorView w = scratch_f32(Slot::weight, fn, Dims{OC, IC, KH, KW});
  float* wd = w.data<float>();
  const int64_t K = KH * KW;
  for (int64_t j = 0; j < ICn; ++j)
    for (int64_t oc = 0; oc < OC; ++oc) {
      const uint8_t* pairs = raw + (j * OC + oc) * K * 8;
      for (int64_t e = 0; e < 2 && 2 * j + e < IC; ++e) {  // the dummy partner is dropped
        float* dst = wd + (oc * IC + 2 * j + e) * K;
        for (int64_t k = 0; k < K; ++k) std::memcpy(dst + k, pairs + (k * 2 + e) * 4, 4);
      }
    }
  Tensor b;
  if (using_bias) {
    rule_same_npu(fn, "output_addr", output_addr, "bias_addr", bias_addr);
    b = channel_vector(fn, "bias_addr", bias_addr, OC);
    rule_no_overlap(fn, "output_addr", op, "bias_addr", bias_place(bias_addr, OC));
  }
  // The output is computed where it lies in local memory, one run of
  // channels on consecutive NPUs at a time (it overlaps none of the gathered
  // operands, so nothing it reads changes under it). result_add reads it
  // there: checked as a gather would, and already marked written when the
  // check passes.
  const bool all_written = result_add && check_written(fn, "output_addr", op);
  const float* bias_data = using_bias ? b.data<float>() : nullptr;
  for (const LocalRun& r : local_runs(machine(), op)) {
    const TensorView wr =
        TensorView::contiguous(wd + r.c0 * IC * K, DType::f32, {r.channels, IC, KH, KW});
    const TensorView br = using_bias ? TensorView::contiguous(const_cast<float*>(bias_data) + r.c0,
                                                              DType::f32, {1, r.channels, 1, 1})
                                     : TensorView();
    conv2d(x, wr, br, r.view, p);
  }
  if (!all_written) mark_written(op);
  // The cost counts IC in 2IC pairs and applies the vendor's IC factors.
  record_cost(bdc_window_instruction(fn, OpClass::conv, op, IC, KH, KW, p.window.stride_h,
                                     p.window.stride_w));
}

void okk_bdc_depthwise2d(local_addr_t output_addr, local_addr_t input_addr,
                         local_addr_t weight_addr, local_addr_t bias_addr, const dim4* input_shape,
                         int kernel_h, int kernel_w, bool using_bias, const Padding* padding,
                         const dim2* stride, const dim2* dilation) {
  constexpr const char* fn = "okk_bdc_depthwise2d";
  int64_t oh = 0, ow = 0;
  Depthwise2dParams p;
  p.window = window_of(fn, {input_shape, kernel_h, kernel_w, padding, stride, dilation}, oh, ow);
  p.has_bias = using_bias;
  apply_profile(p, Profile::bm1684);
  rule_divisible(fn, "output_addr", output_addr, 128);
  rule_divisible(fn, "input_addr", input_addr, 128);
  rule_divisible(fn, "weight_addr", weight_addr, 4);
  rule_same_npu(fn, "output_addr", output_addr, "input_addr", input_addr);
  rule_same_npu(fn, "output_addr", output_addr, "weight_addr", weight_addr);
  const dim4& s = *input_shape;
  const Place ip = local_place(fn, "input_addr", input_addr, dims(s), nullptr, 4);
  const Place op = local_place(fn, "output_addr", output_addr, Dims{s.n, s.c, oh, ow}, nullptr, 4);
  const Place wp = local_place(fn, "weight_addr", weight_addr, Dims{1, s.c, kernel_h, kernel_w},
                               nullptr, 4, DefaultLayout::compact);
  rule_no_overlap(fn, "output_addr", op, "input_addr", ip);
  rule_no_overlap(fn, "output_addr", op, "weight_addr", wp);
  const TensorView x = gathered_f32(Slot::input, fn, "input_addr", ip);
  const TensorView w4 = gathered_f32(Slot::weight, fn, "weight_addr", wp);
  const TensorView w(w4.raw(), DType::f32, {s.c, 1, kernel_h, kernel_w},
                     {static_cast<int64_t>(kernel_h) * kernel_w, 0, kernel_w, 1});
  Tensor b;
  if (using_bias) {
    rule_same_npu(fn, "output_addr", output_addr, "bias_addr", bias_addr);
    b = channel_vector(fn, "bias_addr", bias_addr, s.c);
    rule_no_overlap(fn, "output_addr", op, "bias_addr", bias_place(bias_addr, s.c));
  }
  const TensorView y = scratch_f32(Slot::output, fn, op.shape);  // every element written
  depthwise2d(x, w, b, y, p);
  scatter_f32(y, op);
  record_cost(bdc_window_instruction(fn, OpClass::depthwise, op, 1, kernel_h, kernel_w,
                                     p.window.stride_h, p.window.stride_w));
}

void okk_bdc_avg_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4* input_shape,
                        int kernel_h, int kernel_w, const Padding* padding, const dim2* stride) {
  pool("okk_bdc_avg_pool2d", PoolMode::avg, output_addr, input_addr, input_shape, kernel_h,
       kernel_w, padding, stride);
}

void okk_bdc_max_pool2d(local_addr_t output_addr, local_addr_t input_addr, const dim4* input_shape,
                        int kernel_h, int kernel_w, const Padding* padding, const dim2* stride) {
  pool("okk_bdc_max_pool2d", PoolMode::max, output_addr, input_addr, input_shape, kernel_h,
       kernel_w, padding, stride);
}

void okk_bdc_matmul(local_addr_t output_addr, local_addr_t left_addr, local_addr_t right_addr,
                    local_addr_t bias_addr, int left_rows, int left_cols, int right_cols,
                    int left_cols_per_channel, int right_cols_per_channel, bool using_bias,
                    bool result_add) {
  constexpr const char* fn = "okk_bdc_matmul";
  rule_range(fn, "left_rows", left_rows, 1, 65535);
  rule_range(fn, "left_cols", left_cols, 1, 4095 * 128);
  rule_range(fn, "right_cols", right_cols, 1, 4095 * 128);
  // Documented [1, min(128, cols)]; the vendor's simulator accepts wider
  // channels (probed: 200 of 300 columns): a warning up to the tensor width
  // limit 65535.
  rule_range_warn_above(fn, "left_cols_per_channel", left_cols_per_channel, 1,
                        std::min(128, left_cols), 65535);
  rule_range_warn_above(fn, "right_cols_per_channel", right_cols_per_channel, 1,
                        std::min(128, right_cols), 65535);
  const int64_t lch = (left_cols + left_cols_per_channel - 1) / left_cols_per_channel;
  const int64_t rch = (right_cols + right_cols_per_channel - 1) / right_cols_per_channel;
  rule_range(fn, "ceil(left_cols / left_cols_per_channel)", lch, 1, 4095);
  rule_range(fn, "ceil(right_cols / right_cols_per_channel)", rch, 1, 4095);
  rule_divisible(fn, "output_addr", output_addr, 128);
  rule_divisible(fn, "left_addr", left_addr, 128);
  rule_divisible(fn, "right_addr", right_addr, 128);
  rule_same_npu(fn, "output_addr", output_addr, "right_addr", right_addr);
  const Place op = local_place(fn, "output_addr", output_addr,
                               Dims{left_rows, rch, 1, right_cols_per_channel}, nullptr, 4);
  const Place lp = local_place(fn, "left_addr", left_addr,
                               Dims{left_rows, lch, 1, left_cols_per_channel}, nullptr, 4);
  const Place rp = local_place(fn, "right_addr", right_addr,
                               Dims{left_cols, rch, 1, right_cols_per_channel}, nullptr, 4);
  rule_no_overlap(fn, "output_addr", op, "left_addr", lp);
  rule_no_overlap(fn, "output_addr", op, "right_addr", rp);
  const TensorView a = gathered_matrix(Slot::input, fn, "left_addr", lp, left_rows, left_cols,
                                       left_cols_per_channel);
  const TensorView bm = gathered_matrix(Slot::weight, fn, "right_addr", rp, left_cols, right_cols,
                                        right_cols_per_channel);
  Tensor bias;
  MatmulParams p;
  p.has_bias = using_bias;
  p.result_add = result_add;
  apply_profile(p, Profile::bm1684);
  if (using_bias) {
    rule_divisible(fn, "bias_addr", bias_addr, 128);
    rule_same_npu(fn, "output_addr", output_addr, "bias_addr", bias_addr);
    const Place bp = local_place(fn, "bias_addr", bias_addr,
                                 Dims{1, rch, 1, right_cols_per_channel}, nullptr, 4);
    bias = gather_matrix(fn, "bias_addr", bp, 1, right_cols, right_cols_per_channel);
    rule_no_overlap(fn, "output_addr", op, "bias_addr", bp);
  }
  // Without result_add the product writes every output element.
  const TensorView y =
      result_add ? gathered_matrix(Slot::output, fn, "output_addr", op, left_rows, right_cols,
                                   right_cols_per_channel)
                 : TensorView::contiguous(operand_scratch(Slot::output,
                                                          static_cast<size_t>(left_rows) *
                                                              static_cast<size_t>(right_cols) * 4,
                                                          fn),
                                          DType::f32, {left_rows, right_cols});
  matmul(a, bm, bias, y, p);
  scatter_matrix(y, op, right_cols_per_channel);
  record_cost(bdc_slots_instruction(
      fn, OpClass::matmul, cpn_of(output_addr, rch) * left_rows, right_cols_per_channel, left_cols,
      "out " + std::to_string(left_rows) + "x" + std::to_string(right_cols)));
}

}  // extern "C"
