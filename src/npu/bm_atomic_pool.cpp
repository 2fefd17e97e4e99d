// bm_atomic.h face: the BM168x atomic pooling functions (seed 002). fp32
// pools run the core pool2d under Profile::bm1684; the int8 pools read and
// write the 4N layout and run the core's BM168x quantized pooling.
#include <cstring>

#include "cost_instruction.hpp"
#include "npukit/compat/bm_atomic.h"
#include "npukit/ops/bm_pool_quantized.hpp"
#include "npukit/ops/pool2d.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

struct Common {
  unsigned input_addr, output_addr;
  const unsigned* input_shape;
  unsigned kernel_h, kernel_w, stride_h, stride_w, ins_h, ins_w, dilate_h, dilate_w;
  const unsigned* pad;
};

// Checks the documented fields and returns the window; the output size comes
// from the core (its errors become rule violations).
Window2d window_of(const char* fn, const Common& a, Dims& in, Dims& out) {
  rule_range(fn, "input_shape[0]", a.input_shape[0], 1, 65535);
  rule_range(fn, "input_shape[1]", a.input_shape[1], 1, 4095);
  rule_range(fn, "input_shape[2]", a.input_shape[2], 1, 65535);
  rule_range(fn, "input_shape[3]", a.input_shape[3], 1, 65535);
  rule_range(fn, "kernel_h", a.kernel_h, 1, 65535);
  rule_range(fn, "kernel_w", a.kernel_w, 1, 65535);
  rule_range(fn, "stride_h", a.stride_h, 1, 15);
  rule_range(fn, "stride_w", a.stride_w, 1, 15);
  rule_range(fn, "ins_h", a.ins_h, 0, 15);
  rule_range(fn, "ins_w", a.ins_w, 0, 15);
  rule_range(fn, "dilate_h", a.dilate_h, 1, 15);
  rule_range(fn, "dilate_w", a.dilate_w, 1, 15);
  const char* pads[4] = {"pad[0] (top)", "pad[1] (bottom)", "pad[2] (left)", "pad[3] (right)"};
  for (int i = 0; i < 4; ++i) rule_range(fn, pads[i], a.pad[i], 0, 15);
  rule_divisible(fn, "input_addr", a.input_addr, 4);
  rule_divisible(fn, "output_addr", a.output_addr, 4);
  rule_same_npu(fn, "output_addr", a.output_addr, "input_addr", a.input_addr);
  Window2d w;
  w.kernel_h = a.kernel_h;
  w.kernel_w = a.kernel_w;
  w.stride_h = a.stride_h;
  w.stride_w = a.stride_w;
  w.ins_h = a.ins_h;
  w.ins_w = a.ins_w;
  w.dilation_h = a.dilate_h;
  w.dilation_w = a.dilate_w;
  w.pad_top = a.pad[0];
  w.pad_bottom = a.pad[1];
  w.pad_left = a.pad[2];
  w.pad_right = a.pad[3];
  in = Dims{a.input_shape[0], a.input_shape[1], a.input_shape[2], a.input_shape[3]};
  try {
    const int64_t oh = axis_output_size(axis_h(w, in.h), fn, 'h');
    const int64_t ow = axis_output_size(axis_w(w, in.w), fn, 'w');
    out = Dims{in.n, in.c, oh, ow};
  } catch (const npukit::Error& e) {
    violation(fn, e.parameter(), e.value(), e.allowed());
  }
  return w;
}

void fp32_pool(const char* fn, PoolMode mode, const Common& a, float coeff) {
  Dims in, out;
  Pool2dParams p;
  p.mode = mode;
  p.window = window_of(fn, a, in, out);
  apply_profile(p, Profile::bm1684);
  p.coeff = coeff;
  const Place ip = local_place(fn, "input_addr", a.input_addr, in, nullptr, 4);
  const Place op = local_place(fn, "output_addr", a.output_addr, out, nullptr, 4);
  rule_no_overlap(fn, "output_addr", op, "input_addr", ip);
  const Tensor x = gather_f32(fn, "input_addr", ip);
  Tensor y(DType::f32, {out.n, out.c, out.h, out.w});
  pool2d(x, y, p);
  scatter_f32(y, op);
  record_cost(bdc_instruction(fn, OpClass::pool, op,
                              static_cast<int64_t>(p.window.kernel_h) * p.window.kernel_w));
}

// The 4N layout: batches 4m..4m+3 share a 32-bit word, byte k = batch 4m+k.
Place place_4n(const char* fn, const char* name, uint64_t addr, const Dims& d) {
  return local_place(fn, name, addr, Dims{(d.n + 3) / 4, d.c, d.h, d.w}, nullptr, 4);
}

void quant_pool(const char* fn, QuantPoolMode mode, const PoolQuantParam* q) {
  need(q, fn, "param");
  const Common a{q->input_addr, q->output_addr, q->input_shape, q->kernel_h,
                 q->kernel_w,   q->stride_h,    q->stride_w,    q->ins_h,
                 q->ins_w,      q->dilate_h,    q->dilate_w,    q->pad};
  Dims in, out;
  BmPoolQuantParams p;
  p.mode = mode;
  p.window = window_of(fn, a, in, out);
  rule_range(fn, "rshift_bit", q->rshift_bit, 0, 31);
  p.rshift = static_cast<int>(q->rshift_bit);
  p.relu = q->if_relu;
  const Place ip = place_4n(fn, "input_addr", q->input_addr, in);
  const Place op = place_4n(fn, "output_addr", q->output_addr, out);
  rule_no_overlap(fn, "output_addr", op, "input_addr", ip);
  const DType dt = q->input_sign ? DType::s8 : DType::u8;
  const std::vector<uint8_t> words = gather_raw(fn, "input_addr", ip);
  Tensor x(dt, {in.n, in.c, in.h, in.w});
  uint8_t* xb = static_cast<uint8_t*>(x.view().raw());
  const int64_t chw = in.c * in.h * in.w;
  for (int64_t n = 0; n < in.n; ++n)
    for (int64_t i = 0; i < chw; ++i) xb[n * chw + i] = words[((n / 4) * chw + i) * 4 + n % 4];
  Tensor y(dt, {out.n, out.c, out.h, out.w});
  bm_pool_quantized(x, y, p);
  const uint8_t* yb = static_cast<const uint8_t*>(y.view().raw());
  Machine& m = machine();
  for (int64_t n = 0; n < out.n; ++n)
    for (int64_t c = 0; c < out.c; ++c)
      for (int64_t h = 0; h < out.h; ++h)
        for (int64_t w = 0; w < out.w; ++w) {
          uint8_t* word = plane(m, op, n / 4, c) + 4 * (h * op.stride.h + w * op.stride.w);
          word[n % 4] = yb[((n * out.c + c) * out.h + h) * out.w + w];
          std::memset(m.written(0, 0) + (word - m.local(0, 0)), 1, 4);
        }
  // op holds the 4N words: four batches per lane slot.
  record_cost(bdc_instruction(fn, OpClass::pool, op,
                              static_cast<int64_t>(p.window.kernel_h) * p.window.kernel_w));
}

}  // namespace

extern "C" {

void bm_atomic_avg_pool(const PoolParam* q) {
  need(q, "bm_atomic_avg_pool", "param");
  fp32_pool("bm_atomic_avg_pool", PoolMode::avg,
            {q->input_addr, q->output_addr, q->input_shape, q->kernel_h, q->kernel_w, q->stride_h,
             q->stride_w, q->ins_h, q->ins_w, 1, 1, q->pad},
            1.0f);
}

void bm_atomic_max_pool(const PoolParam* q) {
  need(q, "bm_atomic_max_pool", "param");
  fp32_pool("bm_atomic_max_pool", PoolMode::max,
            {q->input_addr, q->output_addr, q->input_shape, q->kernel_h, q->kernel_w, q->stride_h,
             q->stride_w, q->ins_h, q->ins_w, 1, 1, q->pad},
            1.0f);
}

void bm_atomic_sum_pool(const SumPoolParam* q) {
  need(q, "bm_atomic_sum_pool", "param");
  fp32_pool("bm_atomic_sum_pool", PoolMode::sum,
            {q->input_addr, q->output_addr, q->input_shape, q->kernel_h, q->kernel_w, q->stride_h,
             q->stride_w, q->ins_h, q->ins_w, 1, 1, q->pad},
            q->coeff);
}

void bm_atomic_avg_pool_quantized(const PoolQuantParam* q) {
  quant_pool("bm_atomic_avg_pool_quantized", QuantPoolMode::avg, q);
}

void bm_atomic_max_pool_quantized(const PoolQuantParam* q) {
  quant_pool("bm_atomic_max_pool_quantized", QuantPoolMode::max, q);
}

}  // extern "C"
