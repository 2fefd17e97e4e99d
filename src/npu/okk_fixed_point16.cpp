// okk.h face: the 16-bit packed (2N) functions: shifts by tensor / constant,
// the split of 16-bit values into high and low bytes (4N), and the product of
// such a split with 8-bit values. Arithmetic: npukit/ops/npu_packed_int.hpp.
#include <string>

#include "cost_instruction.hpp"
#include "npukit/ops/npu_packed_int.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

constexpr int k8 = 1, k16 = 2;  // lane bytes

void rule_common(const char* fn, const dim4* shape) {
  need(shape, fn, "shape");
  rule_shape(fn, *shape);
}

std::vector<int32_t> read(const char* fn, const char* name, const Place& p, const dim4& shape,
                          int lane_bytes, bool is_signed) {
  return gather_packed(fn, name, p, shape.n, lane_bytes, is_signed);
}

// Counts of a 16-bit shift are documented in [-16, 16].
void rule_counts(const char* fn, const char* name, const std::vector<int32_t>& counts,
                 const dim4& s) {
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] < -16 || counts[i] > 16) {
      const int64_t k = static_cast<int64_t>(i), hw = int64_t{s.h} * s.w;
      violation(fn, name,
                "element (" + std::to_string(k / (hw * s.c)) + ", " + std::to_string(k / hw % s.c) +
                    ", " + std::to_string(k / s.w % s.h) + ", " + std::to_string(k % s.w) +
                    ") = " + std::to_string(counts[i]),
                "shift counts in [-16, 16]");
    }
}

// value (type t) shifted by count, element-wise.
void shift(const char* fn, FixedType t, const std::vector<int32_t>& value,
           const std::vector<int32_t>& count, const Place& dp, const dim4& shape) {
  std::vector<int32_t> y(value.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = fixed_shift(t, value[i], count[i]);
  scatter_packed(y, dp, shape.n, k16);
  record_cost(bdc_instruction(fn, OpClass::fixed_point, dp));
}

// dst (type t) = src0 (type t) shifted by src1 (int16).
void shift_tt(const char* fn, FixedType t, local_addr_t dst, local_addr_t src0, local_addr_t src1,
              const dim4* shape, const dim4* ds, const dim4* s0s, const dim4* s1s) {
  rule_common(fn, shape);
  const Place dp = packed_place(fn, "dst_addr", dst, *shape, ds, k16);
  const Place p0 = packed_place(fn, "src0_addr", src0, *shape, s0s, k16);
  const Place p1 = packed_place(fn, "src1_addr", src1, *shape, s1s, k16);
  const auto a = read(fn, "src0_addr", p0, *shape, k16, fixed_signed(t));
  const auto b = read(fn, "src1_addr", p1, *shape, k16, true);
  rule_counts(fn, "src1_addr", b, *shape);
  shift(fn, t, a, b, dp, *shape);
}

// dst = src shifted by C, or (c_first) C shifted by src; src counts are int16.
void shift_tc(const char* fn, FixedType t, bool c_first, local_addr_t dst, local_addr_t src,
              int32_t C, const dim4* shape, const dim4* ds, const dim4* ss) {
  rule_common(fn, shape);
  const Place dp = packed_place(fn, "dst_addr", dst, *shape, ds, k16);
  const Place sp = packed_place(fn, "src_addr", src, *shape, ss, k16);
  if (!c_first) rule_range(fn, "C", C, -16, 16);
  const auto x = read(fn, "src_addr", sp, *shape, k16, c_first || fixed_signed(t));
  const std::vector<int32_t> c(x.size(), C);
  if (c_first) {
    rule_counts(fn, "src_addr", x, *shape);
    shift(fn, t, c, x, dp, *shape);
  } else {
    shift(fn, t, x, c, dp, *shape);
  }
}

void split(const char* fn, bool high, local_addr_t dst, local_addr_t src, const dim4* shape,
           const dim4* ds, const dim4* ss, const Place* work) {
  const Place dp = packed_place(fn, "dst_addr", dst, *shape, ds, k8);
  const Place sp = packed_place(fn, "src_addr", src, *shape, ss, k16);
  if (work) rule_no_overlap(fn, "work_addr", *work, "dst_addr", dp);
  std::vector<int32_t> y = read(fn, "src_addr", sp, *shape, k16, false);
  for (int32_t& v : y) v = high ? (v >> 8) & 0xff : v & 0xff;  // raw bytes
  scatter_packed(y, dp, shape->n, k8);
  record_cost(bdc_instruction(fn, OpClass::fixed_point, dp));
}

// mul_type bits: 0 = src0 signed, 1 = src1 signed, 2 = result signed.
std::string mul_type_name(mul_type_t t) {
  const unsigned v = static_cast<unsigned>(t);
  if (v > 7u) return std::to_string(v);
  std::string s = v & 1u ? "S16" : "U16";
  s += "_MUL_";
  s += v & 2u ? "S8" : "U8";
  s += "_TO_";
  s += v & 4u ? "S16" : "U16";
  return s;
}

// dst = (src0 * src1 + 2^(rshift-1)) >> rshift, saturated to the result type.
void multiply(const char* fn, const std::vector<int32_t>& a, FixedType ta,
              const std::vector<int32_t>& b, FixedType tb, FixedType ty, int rshift,
              const Place& dp, const dim4& shape) {
  FixedPointParams p;
  p.a = ta;
  p.b = tb;
  p.y = ty;
  p.rshift = rshift;
  std::vector<int32_t> y(a.size());
  fixed_point_binary(FixedOp::mul, a, b, {}, y, p);
  scatter_packed(y, dp, shape.n, k16);
  record_cost(bdc_instruction(fn, OpClass::fixed_point, dp, 3));
}

}  // namespace

extern "C" {

void okk_bdc_fixed_point_packed_16bit_arithmetic_shift(
    local_addr_t dst_addr, local_addr_t src0_addr, local_addr_t src1_addr, const dim4* shape,
    const dim4* dst_stride, const dim4* src0_stride, const dim4* src1_stride) {
  shift_tt("okk_bdc_fixed_point_packed_16bit_arithmetic_shift", FixedType::s16, dst_addr, src0_addr,
           src1_addr, shape, dst_stride, src0_stride, src1_stride);
}

void okk_bdc_fixed_point_packed_16bit_logical_shift(local_addr_t dst_addr, local_addr_t src0_addr,
                                                    local_addr_t src1_addr, const dim4* shape,
                                                    const dim4* dst_stride, const dim4* src0_stride,
                                                    const dim4* src1_stride) {
  shift_tt("okk_bdc_fixed_point_packed_16bit_logical_shift", FixedType::u16, dst_addr, src0_addr,
           src1_addr, shape, dst_stride, src0_stride, src1_stride);
}

void okk_bdc_fixed_point_packed_16bit_arithmetic_shift_C(local_addr_t dst_addr,
                                                         local_addr_t src_addr, short C,
                                                         const dim4* shape, const dim4* dst_stride,
                                                         const dim4* src_stride) {
  shift_tc("okk_bdc_fixed_point_packed_16bit_arithmetic_shift_C", FixedType::s16, false, dst_addr,
           src_addr, C, shape, dst_stride, src_stride);
}

void okk_bdc_fixed_point_packed_16bit_logical_shift_C(local_addr_t dst_addr, local_addr_t src_addr,
                                                      short C, const dim4* shape,
                                                      const dim4* dst_stride,
                                                      const dim4* src_stride) {
  shift_tc("okk_bdc_fixed_point_packed_16bit_logical_shift_C", FixedType::u16, false, dst_addr,
           src_addr, C, shape, dst_stride, src_stride);
}

void okk_bdc_fixed_point_packed_16bit_C_arithmetic_shift(local_addr_t dst_addr,
                                                         local_addr_t src_addr, short C,
                                                         const dim4* shape, const dim4* dst_stride,
                                                         const dim4* src_stride) {
  shift_tc("okk_bdc_fixed_point_packed_16bit_C_arithmetic_shift", FixedType::s16, true, dst_addr,
           src_addr, C, shape, dst_stride, src_stride);
}

void okk_bdc_fixed_point_packed_16bit_C_logical_shift(local_addr_t dst_addr, local_addr_t src_addr,
                                                      unsigned short C, const dim4* shape,
                                                      const dim4* dst_stride,
                                                      const dim4* src_stride) {
  shift_tc("okk_bdc_fixed_point_packed_16bit_C_logical_shift", FixedType::u16, true, dst_addr,
           src_addr, C, shape, dst_stride, src_stride);
}

void okk_bdc_fixed_point_packed_16bit_split_high_8bit(local_addr_t dst_addr, local_addr_t src_addr,
                                                      const dim4* shape, const dim4* dst_stride,
                                                      const dim4* src_stride) {
  constexpr const char* fn = "okk_bdc_fixed_point_packed_16bit_split_high_8bit";
  rule_common(fn, shape);
  split(fn, true, dst_addr, src_addr, shape, dst_stride, src_stride, nullptr);
}

void okk_bdc_fixed_point_packed_16bit_split_low_8bit(local_addr_t dst_addr, local_addr_t src_addr,
                                                     local_addr_t work_addr, const dim4* shape,
                                                     const dim4* dst_stride, const dim4* src_stride,
                                                     const dim4* work_stride) {
  constexpr const char* fn = "okk_bdc_fixed_point_packed_16bit_split_low_8bit";
  rule_common(fn, shape);
  const Place wp = packed_place(fn, "work_addr", work_addr, *shape, work_stride, k16);
  split(fn, false, dst_addr, src_addr, shape, dst_stride, src_stride, &wp);
}

void okk_bdc_fixed_point_packed_16bit_mul_8bit(local_addr_t dst_addr, local_addr_t src0_high_addr,
                                               local_addr_t src0_low_addr, local_addr_t src1_addr,
                                               const dim4* shape, const dim4* dst_stride,
                                               const dim4* src0_high_stride,
                                               const dim4* src0_low_stride, const dim4* src1_stride,
                                               mul_type_t mul_type, int rshift) {
  constexpr const char* fn = "okk_bdc_fixed_point_packed_16bit_mul_8bit";
  rule_common(fn, shape);
  // S16_MUL_U8_TO_S16 is documented as unsupported on BM1684.
  rule(mul_type == S16_MUL_S8_TO_S16 || mul_type == U16_MUL_S8_TO_S16 ||
           mul_type == U16_MUL_U8_TO_U16,
       fn, "mul_type", mul_type_name(mul_type),
       "one of S16_MUL_S8_TO_S16 U16_MUL_S8_TO_S16 U16_MUL_U8_TO_U16 (S16_MUL_U8_TO_S16 is "
       "unsupported on BM1684)");
  rule_range(fn, "rshift", rshift, 0, 31);
  const unsigned v = static_cast<unsigned>(mul_type);
  const FixedType ta = v & 1u ? FixedType::s16 : FixedType::u16;
  const FixedType tb = v & 2u ? FixedType::s8 : FixedType::u8;
  const FixedType ty = v & 4u ? FixedType::s16 : FixedType::u16;
  const Place dp = packed_place(fn, "dst_addr", dst_addr, *shape, dst_stride, k16);
  const Place hp = packed_place(fn, "src0_high_addr", src0_high_addr, *shape, src0_high_stride, k8);
  const Place lp = packed_place(fn, "src0_low_addr", src0_low_addr, *shape, src0_low_stride, k8);
  const Place bp = packed_place(fn, "src1_addr", src1_addr, *shape, src1_stride, k8);
  // src0 = high * 256 + low: the high byte carries src0's sign, the low byte is unsigned.
  const auto high = read(fn, "src0_high_addr", hp, *shape, k8, fixed_signed(ta));
  const auto low = read(fn, "src0_low_addr", lp, *shape, k8, false);
  std::vector<int32_t> a(high.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = high[i] * 256 + low[i];
  multiply(fn, a, ta, read(fn, "src1_addr", bp, *shape, k8, fixed_signed(tb)), tb, ty, rshift, dp,
           *shape);
}

void okk_bdc_fixed_point_packed_s16_mul_u8_to_s16(local_addr_t dst_addr, local_addr_t src0_addr,
                                                  local_addr_t src1_addr, local_addr_t work_addr,
                                                  local_addr_t work_high_addr,
                                                  local_addr_t work_low_addr, const dim4* shape,
                                                  const dim4* dst_stride, const dim4* src0_stride,
                                                  const dim4* src1_stride, const dim4* work_stride,
                                                  const dim4* work_high_stride,
                                                  const dim4* work_low_stride, int rshift) {
  constexpr const char* fn = "okk_bdc_fixed_point_packed_s16_mul_u8_to_s16";
  rule_common(fn, shape);
  rule_range(fn, "rshift", rshift, 0, 31);
  const Place dp = packed_place(fn, "dst_addr", dst_addr, *shape, dst_stride, k16);
  const Place ap = packed_place(fn, "src0_addr", src0_addr, *shape, src0_stride, k16);
  const Place bp = packed_place(fn, "src1_addr", src1_addr, *shape, src1_stride, k8);
  // The three work tensors hold the device's intermediate split; none may
  // overlap the destination or a source.
  const Place works[] = {
      packed_place(fn, "work_addr", work_addr, *shape, work_stride, k16),
      packed_place(fn, "work_high_addr", work_high_addr, *shape, work_high_stride, k8),
      packed_place(fn, "work_low_addr", work_low_addr, *shape, work_low_stride, k8)};
  const char* names[] = {"work_addr", "work_high_addr", "work_low_addr"};
  for (int i = 0; i < 3; ++i) {
    rule_no_overlap(fn, names[i], works[i], "dst_addr", dp);
    rule_no_overlap(fn, names[i], works[i], "src0_addr", ap);
    rule_no_overlap(fn, names[i], works[i], "src1_addr", bp);
  }
  multiply(fn, read(fn, "src0_addr", ap, *shape, k16, true), FixedType::s16,
           read(fn, "src1_addr", bp, *shape, k8, false), FixedType::u8, FixedType::s16, rshift, dp,
           *shape);
}

}  // extern "C"
