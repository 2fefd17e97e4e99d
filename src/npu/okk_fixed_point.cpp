// okk.h face: fixed-point packed arithmetic on 8-bit (4N mode) and 16-bit (2N
// mode) tensors: add, sub, C_sub, mul, mac, max, min. op_type gives the width
// and sign of each operand; the arithmetic is npukit::fixed_point_binary
// (round-half-up right shift, saturation); this file checks the documented
// rules and unpacks / packs the words.
#include <algorithm>
#include <initializer_list>
#include <string>

#include "cost_instruction.hpp"
#include "npukit/ops/npu_packed_int.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

struct Types {
  FixedType src0, src1, dst;
};

FixedType make(bool is8, bool is_signed) {
  if (is8) return is_signed ? FixedType::s8 : FixedType::u8;
  return is_signed ? FixedType::s16 : FixedType::u16;
}

// op_type bits: 0 = 8-bit sources, 1 / 2 = source signs, 3 = 8-bit result, 4 = signed result.
Types decode(op_type_t t) {
  const unsigned v = static_cast<unsigned>(t);
  return {make(v & 1u, v & 2u), make(v & 1u, v & 4u), make(v & 8u, v & 16u)};
}

std::string op_type_name(op_type_t t) {
  const unsigned v = static_cast<unsigned>(t);
  if (v > 31u) return std::to_string(v);
  auto part = [](bool is8, bool is_signed) {
    return std::string(is_signed ? "S" : "U") + (is8 ? "8" : "16");
  };
  return part(v & 1u, v & 2u) + "_OP_" + part(v & 1u, v & 4u) + "_TO_" + part(v & 8u, v & 16u);
}

using Valid = std::initializer_list<op_type_t>;

const Valid kAdd = {S8_OP_S8_TO_S8,   S8_OP_S8_TO_S16,   S8_OP_U8_TO_S8,   S8_OP_U8_TO_S16,
                    U8_OP_S8_TO_S8,   U8_OP_S8_TO_S16,   U8_OP_U8_TO_U8,   U8_OP_U8_TO_U16,
                    S16_OP_S16_TO_S8, S16_OP_S16_TO_S16, S16_OP_U16_TO_S8, S16_OP_U16_TO_S16,
                    U16_OP_S16_TO_S8, U16_OP_S16_TO_S16, U16_OP_U16_TO_U8, U16_OP_U16_TO_U16};
// Subtraction of unsigned values gives signed results.
const Valid kSub = {S8_OP_S8_TO_S8,   S8_OP_S8_TO_S16,   S8_OP_U8_TO_S8,   S8_OP_U8_TO_S16,
                    U8_OP_S8_TO_S8,   U8_OP_S8_TO_S16,   U8_OP_U8_TO_S8,   U8_OP_U8_TO_S16,
                    S16_OP_S16_TO_S8, S16_OP_S16_TO_S16, S16_OP_U16_TO_S8, S16_OP_U16_TO_S16,
                    U16_OP_S16_TO_S8, U16_OP_S16_TO_S16, U16_OP_U16_TO_S8, U16_OP_U16_TO_S16};
const Valid kMul = {S8_OP_S8_TO_S8, S8_OP_S8_TO_S16, S8_OP_U8_TO_S8, S8_OP_U8_TO_S16,
                    U8_OP_S8_TO_S8, U8_OP_S8_TO_S16, U8_OP_U8_TO_U8, U8_OP_U8_TO_U16};
const Valid kMacSigned = {S8_OP_S8_TO_S16, S8_OP_U8_TO_S16, U8_OP_S8_TO_S16};
const Valid kMacUnsigned = {S8_OP_S8_TO_S16, S8_OP_U8_TO_S16, U8_OP_S8_TO_S16, U8_OP_U8_TO_U16};
const Valid kMaxMin = {S8_OP_S8_TO_S8, U8_OP_U8_TO_U8, S16_OP_S16_TO_S16, U16_OP_U16_TO_U16};

void rule_op_type(const char* fn, op_type_t t, Valid valid) {
  if (std::find(valid.begin(), valid.end(), t) != valid.end()) return;
  std::string allowed = "one of";
  for (op_type_t v : valid) {
    allowed += ' ';  // appended piecewise: GCC 12 warns falsely on " " + string
    allowed += op_type_name(v);
  }
  violation(fn, "op_type", op_type_name(t), allowed);
}

int lane_bytes(FixedType t) {
  return fixed_bits(t) / 8;
}

// The words of a packed tensor (4N for 8-bit, 2N for 16-bit types).
Place packed(const char* fn, const char* name, local_addr_t addr, const dim4& shape,
             const dim4* stride, FixedType t) {
  return packed_place(fn, name, addr, shape, stride, lane_bytes(t));
}

std::vector<int32_t> read(const char* fn, const char* name, const Place& p, const dim4& shape,
                          FixedType t) {
  return gather_packed(fn, name, p, shape.n, lane_bytes(t), fixed_signed(t));
}

// What one call does: operation, allowed op types, shifts.
struct Call {
  const char* fn;
  FixedOp op;
  Valid valid;
  int rshift = 0;
  int lshift = 0;
  const bool* old_signed = nullptr;  // mac: is_origin_dst_signed
};

FixedPointParams params(const Call& k, const Types& t) {
  FixedPointParams p;
  p.a = t.src0;
  p.b = t.src1;
  p.y = t.dst;
  p.rshift = k.rshift;
  p.lshift = k.lshift;
  if (k.old_signed) p.old = *k.old_signed ? FixedType::s16 : FixedType::u16;
  return p;
}

void common_rules(const Call& k, const dim4* shape, op_type_t op_type) {
  need(shape, k.fn, "shape");
  rule_shape(k.fn, *shape);
  rule_op_type(k.fn, op_type, k.valid);
  if (k.op != FixedOp::max && k.op != FixedOp::min) rule_range(k.fn, "rshift", k.rshift, 0, 31);
  if (k.op == FixedOp::mac) rule_range(k.fn, "lshift", k.lshift, 0, 14);
}

void compute(const Call& k, const FixedPointParams& p, const std::vector<int32_t>& a,
             const std::vector<int32_t>& b, const Place& dp, const dim4& shape) {
  std::vector<int32_t> old;
  if (k.op == FixedOp::mac) old = read(k.fn, "dst_addr", dp, shape, p.old);
  std::vector<int32_t> y(a.size());
  fixed_point_binary(k.op, a, b, old, y, p);
  scatter_packed(y, dp, shape.n, lane_bytes(p.y));
  record_cost(bdc_instruction(k.fn, OpClass::fixed_point, dp, k.op == FixedOp::mac ? 2 : 1));
}

void tensor_tensor(const Call& k, local_addr_t dst, local_addr_t src0, local_addr_t src1,
                   const dim4* shape, const dim4* ds, const dim4* s0s, const dim4* s1s,
                   op_type_t op_type) {
  common_rules(k, shape, op_type);
  const Types t = decode(op_type);
  const Place dp = packed(k.fn, "dst_addr", dst, *shape, ds, t.dst);
  const Place p0 = packed(k.fn, "src0_addr", src0, *shape, s0s, t.src0);
  const Place p1 = packed(k.fn, "src1_addr", src1, *shape, s1s, t.src1);
  const auto a = read(k.fn, "src0_addr", p0, *shape, t.src0);
  const auto b = read(k.fn, "src1_addr", p1, *shape, t.src1);
  compute(k, params(k, t), a, b, dp, *shape);
}

// The tensor has src0's type and C src1's; c_first computes C op tensor.
void tensor_constant(const Call& k, bool c_first, local_addr_t dst, local_addr_t src, int C,
                     const dim4* shape, const dim4* ds, const dim4* ss, op_type_t op_type) {
  common_rules(k, shape, op_type);
  const Types t = decode(op_type);
  rule_range(k.fn, "C", C, fixed_min(t.src1), fixed_max(t.src1));
  const Place dp = packed(k.fn, "dst_addr", dst, *shape, ds, t.dst);
  const Place sp = packed(k.fn, "src_addr", src, *shape, ss, t.src0);
  const auto x = read(k.fn, "src_addr", sp, *shape, t.src0);
  const std::vector<int32_t> c(x.size(), C);
  FixedPointParams p = params(k, t);
  if (c_first) {
    std::swap(p.a, p.b);
    compute(k, p, c, x, dp, *shape);
  } else {
    compute(k, p, x, c, dp, *shape);
  }
}

}  // namespace

extern "C" {

void okk_bdc_fixed_point_packed_add(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride, op_type_t op_type, int rshift) {
  tensor_tensor({"okk_bdc_fixed_point_packed_add", FixedOp::add, kAdd, rshift}, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type);
}

void okk_bdc_fixed_point_packed_add_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, op_type_t op_type, int rshift) {
  tensor_constant({"okk_bdc_fixed_point_packed_add_C", FixedOp::add, kAdd, rshift}, false, dst_addr,
                  src_addr, C, shape, dst_stride, src_stride, op_type);
}

void okk_bdc_fixed_point_packed_sub(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride, op_type_t op_type, int rshift) {
  tensor_tensor({"okk_bdc_fixed_point_packed_sub", FixedOp::sub, kSub, rshift}, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type);
}

void okk_bdc_fixed_point_packed_sub_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, op_type_t op_type, int rshift) {
  tensor_constant({"okk_bdc_fixed_point_packed_sub_C", FixedOp::sub, kSub, rshift}, false, dst_addr,
                  src_addr, C, shape, dst_stride, src_stride, op_type);
}

void okk_bdc_fixed_point_packed_C_sub(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, op_type_t op_type, int rshift) {
  tensor_constant({"okk_bdc_fixed_point_packed_C_sub", FixedOp::sub, kSub, rshift}, true, dst_addr,
                  src_addr, C, shape, dst_stride, src_stride, op_type);
}

void okk_bdc_fixed_point_packed_mul(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride, op_type_t op_type, int rshift) {
  tensor_tensor({"okk_bdc_fixed_point_packed_mul", FixedOp::mul, kMul, rshift}, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type);
}

void okk_bdc_fixed_point_packed_mul_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, op_type_t op_type, int rshift) {
  tensor_constant({"okk_bdc_fixed_point_packed_mul_C", FixedOp::mul, kMul, rshift}, false, dst_addr,
                  src_addr, C, shape, dst_stride, src_stride, op_type);
}

void okk_bdc_fixed_point_packed_mac(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride, bool is_origin_dst_signed,
                                    op_type_t op_type, int lshift, int rshift) {
  tensor_tensor(
      {"okk_bdc_fixed_point_packed_mac", FixedOp::mac,
       is_origin_dst_signed ? kMacSigned : kMacUnsigned, rshift, lshift, &is_origin_dst_signed},
      dst_addr, src0_addr, src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type);
}

void okk_bdc_fixed_point_packed_mac_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, bool is_origin_dst_signed,
                                      op_type_t op_type, int lshift, int rshift) {
  tensor_constant(
      {"okk_bdc_fixed_point_packed_mac_C", FixedOp::mac,
       is_origin_dst_signed ? kMacSigned : kMacUnsigned, rshift, lshift, &is_origin_dst_signed},
      false, dst_addr, src_addr, C, shape, dst_stride, src_stride, op_type);
}

void okk_bdc_fixed_point_packed_max(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride, op_type_t op_type) {
  tensor_tensor({"okk_bdc_fixed_point_packed_max", FixedOp::max, kMaxMin}, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type);
}

void okk_bdc_fixed_point_packed_max_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, op_type_t op_type) {
  tensor_constant({"okk_bdc_fixed_point_packed_max_C", FixedOp::max, kMaxMin}, false, dst_addr,
                  src_addr, C, shape, dst_stride, src_stride, op_type);
}

void okk_bdc_fixed_point_packed_min(local_addr_t dst_addr, local_addr_t src0_addr,
                                    local_addr_t src1_addr, const dim4* shape,
                                    const dim4* dst_stride, const dim4* src0_stride,
                                    const dim4* src1_stride, op_type_t op_type) {
  tensor_tensor({"okk_bdc_fixed_point_packed_min", FixedOp::min, kMaxMin}, dst_addr, src0_addr,
                src1_addr, shape, dst_stride, src0_stride, src1_stride, op_type);
}

void okk_bdc_fixed_point_packed_min_C(local_addr_t dst_addr, local_addr_t src_addr, int C,
                                      const dim4* shape, const dim4* dst_stride,
                                      const dim4* src_stride, op_type_t op_type) {
  tensor_constant({"okk_bdc_fixed_point_packed_min_C", FixedOp::min, kMaxMin}, false, dst_addr,
                  src_addr, C, shape, dst_stride, src_stride, op_type);
}

}  // extern "C"
