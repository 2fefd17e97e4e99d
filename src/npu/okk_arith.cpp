// okk.h face: BDC copies and the fp32 unary / binary families. Operands are
// gathered from local memory, computed by the core's binary/unary operators
// under Profile::bm1684 (denormals flushed) and scattered back.
#include <cstring>

#include "cost_instruction.hpp"
#include "npukit/ops/fp32_arith.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

ElementwiseParams bm1684() {
  ElementwiseParams p;
  apply_profile(p, Profile::bm1684);
  return p;
}

// A constant as a stride-0 view of one float.
TensorView constant_view(const float* c, const Dims& s) {
  return TensorView(const_cast<float*>(c), DType::f32, {s.n, s.c, s.h, s.w}, {0, 0, 0, 0});
}

void binary_tt(const char* fn, ArithOp op, local_addr_t dst, local_addr_t a, local_addr_t b,
               const dim4* shape, const dim4* ds, const dim4* as, const dim4* bs) {
  const Place dp = word_destination(fn, dst, shape, ds, ds || as || bs);
  const Tensor x0 = gather_f32(fn, "src0_addr", word_operand(fn, "src0_addr", a, *shape, as, dst));
  const Tensor x1 = gather_f32(fn, "src1_addr", word_operand(fn, "src1_addr", b, *shape, bs, dst));
  Tensor y = op == ArithOp::mac ? gather_f32(fn, "dst_addr", dp) : Tensor(DType::f32, x0.shape());
  arith_binary(op, x0, x1, y, bm1684());
  scatter_f32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

// tensor op C (or C op tensor when c_first).
void binary_tc(const char* fn, ArithOp op, bool c_first, local_addr_t dst, local_addr_t a, float c,
               const dim4* shape, const dim4* ds, const dim4* as) {
  const Place dp = word_destination(fn, dst, shape, ds, ds || as);
  const Tensor x = gather_f32(fn, "src_addr", word_operand(fn, "src_addr", a, *shape, as, dst));
  const TensorView cv = constant_view(&c, dims(*shape));
  Tensor y = op == ArithOp::mac ? gather_f32(fn, "dst_addr", dp) : Tensor(DType::f32, x.shape());
  if (c_first)
    arith_binary(op, cv, x, y, bm1684());
  else
    arith_binary(op, x, cv, y, bm1684());
  scatter_f32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

void unary_op(const char* fn, ArithUnaryOp op, local_addr_t dst, local_addr_t src,
              const dim4* shape, const dim4* ds, const dim4* ss) {
  const Place dp = word_destination(fn, dst, shape, ds);
  const Tensor x = gather_f32(fn, "src_addr", word_operand(fn, "src_addr", src, *shape, ss, dst));
  Tensor y(DType::f32, x.shape());
  arith_unary(op, x, y, bm1684());
  scatter_f32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

}  // namespace

extern "C" {

void okk_bdc_32bit_cpy(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape,
                       const dim4* dst_stride, const dim4* src_stride) {
  constexpr const char* fn = "okk_bdc_32bit_cpy";
  const Place dp = word_destination(fn, dst_addr, shape, dst_stride);
  const Place sp = word_operand(fn, "src_addr", src_addr, *shape, src_stride, dst_addr);
  copy_place(fn, "src_addr", sp, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

void okk_bdc_32bit_set_C(local_addr_t dst_addr, x32 C, const dim4* shape, const dim4* dst_stride) {
  constexpr const char* fn = "okk_bdc_32bit_set_C";
  const Place dp = word_destination(fn, dst_addr, shape, dst_stride);
  fill_place(dp, &C);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

#define NPUKIT_BINARY_DEFINE(name, op)                                                         \
  void okk_bdc_##name(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr,   \
                      const dim4* shape, const dim4* dst_stride, const dim4* src0_stride,      \
                      const dim4* src1_stride) {                                               \
    binary_tt("okk_bdc_" #name, op, dst_addr, src0_addr, src1_addr, shape, dst_stride,         \
              src0_stride, src1_stride);                                                       \
  }                                                                                            \
  void okk_bdc_##name##_C(local_addr_t dst_addr, local_addr_t src_addr, float C,               \
                          const dim4* shape, const dim4* dst_stride, const dim4* src_stride) { \
    binary_tc("okk_bdc_" #name "_C", op, false, dst_addr, src_addr, C, shape, dst_stride,      \
              src_stride);                                                                     \
  }
NPUKIT_BINARY_DEFINE(add, ArithOp::add)
NPUKIT_BINARY_DEFINE(sub, ArithOp::sub)
NPUKIT_BINARY_DEFINE(mul, ArithOp::mul)
NPUKIT_BINARY_DEFINE(div, ArithOp::div)
NPUKIT_BINARY_DEFINE(mac, ArithOp::mac)
NPUKIT_BINARY_DEFINE(max, ArithOp::max)
NPUKIT_BINARY_DEFINE(min, ArithOp::min)

void okk_bdc_C_sub(local_addr_t dst_addr, local_addr_t src_addr, float C, const dim4* shape,
                   const dim4* dst_stride, const dim4* src_stride) {
  binary_tc("okk_bdc_C_sub", ArithOp::sub, true, dst_addr, src_addr, C, shape, dst_stride,
            src_stride);
}

void okk_bdc_C_div(local_addr_t dst_addr, local_addr_t src_addr, float C, const dim4* shape,
                   const dim4* dst_stride, const dim4* src_stride) {
  binary_tc("okk_bdc_C_div", ArithOp::div, true, dst_addr, src_addr, C, shape, dst_stride,
            src_stride);
}

void okk_bdc_neg(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape,
                 const dim4* dst_stride, const dim4* src_stride) {
  unary_op("okk_bdc_neg", ArithUnaryOp::neg, dst_addr, src_addr, shape, dst_stride, src_stride);
}

void okk_bdc_reciprocal(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape,
                        const dim4* dst_stride, const dim4* src_stride) {
  unary_op("okk_bdc_reciprocal", ArithUnaryOp::reciprocal, dst_addr, src_addr, shape, dst_stride,
           src_stride);
}

// sqrt and rsqrt take no strides: both tensors are in the aligned layout and
// their addresses are divisible by 128 (documented).
void okk_bdc_sqrt(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape) {
  rule_divisible("okk_bdc_sqrt", "dst_addr", dst_addr, 128);
  rule_divisible("okk_bdc_sqrt", "src_addr", src_addr, 128);
  unary_op("okk_bdc_sqrt", ArithUnaryOp::sqrt, dst_addr, src_addr, shape, nullptr, nullptr);
}

void okk_bdc_rsqrt(local_addr_t dst_addr, local_addr_t src_addr, const dim4* shape) {
  rule_divisible("okk_bdc_rsqrt", "dst_addr", dst_addr, 128);
  rule_divisible("okk_bdc_rsqrt", "src_addr", src_addr, 128);
  unary_op("okk_bdc_rsqrt", ArithUnaryOp::rsqrt, dst_addr, src_addr, shape, nullptr, nullptr);
}

}  // extern "C"
