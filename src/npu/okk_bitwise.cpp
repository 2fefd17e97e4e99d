// okk.h face: 32-bit bitwise AND/OR/XOR and the arithmetic / logical shifts
// (tensor by tensor, tensor by constant, constant by tensor). Arithmetic:
// npukit::int32_binary; this file checks the documented rules.
#include "cost_instruction.hpp"
#include "npukit/ops/int32_bitwise.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

bool is_shift(Int32Op op) {
  return op == Int32Op::arithmetic_shift || op == Int32Op::logical_shift;
}

// Shift counts are documented in [-32, 32].
void rule_counts(const char* fn, const char* name, const std::vector<uint32_t>& counts,
                 const Dims& s) {
  for (size_t i = 0; i < counts.size(); ++i) {
    const int32_t v = static_cast<int32_t>(counts[i]);
    if (v < -32 || v > 32) {
      const int64_t k = static_cast<int64_t>(i);
      violation(fn, name,
                "element (" + std::to_string(k / (s.c * s.h * s.w)) + ", " +
                    std::to_string(k / (s.h * s.w) % s.c) + ", " + std::to_string(k / s.w % s.h) +
                    ", " + std::to_string(k % s.w) + ") = " + std::to_string(v),
                "shift counts in [-32, 32]");
    }
  }
}

void finish(const char* fn, Int32Op op, const std::vector<uint32_t>& a,
            const std::vector<uint32_t>& b, const Place& dp) {
  std::vector<uint32_t> y(a.size());
  int32_binary(op, a, b, y);
  scatter_u32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp));
}

void tensor_tensor(const char* fn, Int32Op op, local_addr_t dst, local_addr_t src0,
                   local_addr_t src1, const dim4* shape, const dim4* ds, const dim4* s0s,
                   const dim4* s1s) {
  const Place dp = word_destination(fn, dst, shape, ds);
  const Place p0 = word_operand(fn, "src0_addr", src0, *shape, s0s, dst);
  const Place p1 = word_operand(fn, "src1_addr", src1, *shape, s1s, dst);
  const std::vector<uint32_t> a = gather_u32(fn, "src0_addr", p0);
  const std::vector<uint32_t> b = gather_u32(fn, "src1_addr", p1);
  if (is_shift(op)) rule_counts(fn, "src1_addr", b, p1.shape);
  finish(fn, op, a, b, dp);
}

// src op C, or C op src when c_first (the constant is shifted by the tensor).
void tensor_constant(const char* fn, Int32Op op, bool c_first, local_addr_t dst, local_addr_t src,
                     uint32_t c, const dim4* shape, const dim4* ds, const dim4* ss) {
  const Place dp = word_destination(fn, dst, shape, ds);
  const Place sp = word_operand(fn, "src_addr", src, *shape, ss, dst);
  if (is_shift(op) && !c_first) rule_range(fn, "C", static_cast<int32_t>(c), -32, 32);
  const std::vector<uint32_t> x = gather_u32(fn, "src_addr", sp);
  const std::vector<uint32_t> cv(x.size(), c);
  if (c_first) {
    rule_counts(fn, "src_addr", x, sp.shape);
    finish(fn, op, cv, x, dp);
  } else {
    finish(fn, op, x, cv, dp);
  }
}

}  // namespace

extern "C" {

#define NPUKIT_BITWISE_DEFINE(name, op)                                                            \
  void okk_bdc_32bit_##name(local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, \
                            const dim4* shape, const dim4* dst_stride, const dim4* src0_stride,    \
                            const dim4* src1_stride) {                                             \
    tensor_tensor("okk_bdc_32bit_" #name, op, dst_addr, src0_addr, src1_addr, shape, dst_stride,   \
                  src0_stride, src1_stride);                                                       \
  }                                                                                                \
  void okk_bdc_32bit_##name##_C(local_addr_t dst_addr, local_addr_t src_addr, x32 C,               \
                                const dim4* shape, const dim4* dst_stride,                         \
                                const dim4* src_stride) {                                          \
    tensor_constant("okk_bdc_32bit_" #name "_C", op, false, dst_addr, src_addr, C.u32, shape,      \
                    dst_stride, src_stride);                                                       \
  }
NPUKIT_BITWISE_DEFINE(and, Int32Op::bit_and)
NPUKIT_BITWISE_DEFINE(or, Int32Op::bit_or)
NPUKIT_BITWISE_DEFINE(xor, Int32Op::bit_xor)

void okk_bdc_32bit_arithmetic_shift(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride) {
  tensor_tensor("okk_bdc_32bit_arithmetic_shift", Int32Op::arithmetic_shift, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride);
}

void okk_bdc_32bit_logical_shift(local_addr_t dst_addr, local_addr_t src0_addr,
                                 local_addr_t src1_addr, const dim4* shape, const dim4* dst_stride,
                                 const dim4* src0_stride, const dim4* src1_stride) {
  tensor_tensor("okk_bdc_32bit_logical_shift", Int32Op::logical_shift, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride);
}

void okk_bdc_32bit_arithmetic_shift_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride) {
  tensor_constant("okk_bdc_32bit_arithmetic_shift_C", Int32Op::arithmetic_shift, false, dst_addr,
                  src_addr, static_cast<uint32_t>(C), shape, dst_stride, src_stride);
}

void okk_bdc_32bit_logical_shift_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                   const dim4* shape, const dim4* dst_stride,
                                   const dim4* src_stride) {
  tensor_constant("okk_bdc_32bit_logical_shift_C", Int32Op::logical_shift, false, dst_addr,
                  src_addr, static_cast<uint32_t>(C), shape, dst_stride, src_stride);
}

void okk_bdc_32bit_C_arithmetic_shift(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride) {
  tensor_constant("okk_bdc_32bit_C_arithmetic_shift", Int32Op::arithmetic_shift, true, dst_addr,
                  src_addr, static_cast<uint32_t>(C), shape, dst_stride, src_stride);
}

void okk_bdc_32bit_C_logical_shift(local_addr_t dst_addr, local_addr_t src_addr, unsigned int C,
                                   const dim4* shape, const dim4* dst_stride,
                                   const dim4* src_stride) {
  tensor_constant("okk_bdc_32bit_C_logical_shift", Int32Op::logical_shift, true, dst_addr, src_addr,
                  C, shape, dst_stride, src_stride);
}

}  // extern "C"
