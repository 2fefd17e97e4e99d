// okk.h face: fp32 compare-and-select. greater compares fp32 values (denormals
// flushed, as everywhere on the BDC); equal compares the 32-bit words (the
// atomic BM_SE operation's documented bit equality); the selected values are
// raw 32-bit words of any type. Arithmetic: npukit::fp32_compare_select.
#include "cost_instruction.hpp"
#include "npukit/ops/fp32_series.hpp"
#include "okk_face.hpp"

using namespace npukit;
using namespace npukit::npu;
using namespace npukit::npu::face;

namespace {

void run(const char* fn, Fp32Compare cmp, const std::vector<float>& a, const std::vector<float>& b,
         const std::vector<uint32_t>& s0, const std::vector<uint32_t>& s1, const Place& dp) {
  std::vector<uint32_t> y(a.size());
  fp32_compare_select(cmp, a, b, s0, s1, y, true);
  scatter_u32(y, dp);
  record_cost(bdc_instruction(fn, OpClass::arith, dp, 2));
}

// dst = src0 cmp src1 ? select_val : 0.
void select_value_tt(const char* fn, Fp32Compare cmp, local_addr_t dst, local_addr_t src0,
                     local_addr_t src1, x32 select_val, const dim4* shape, const dim4* ds,
                     const dim4* s0s, const dim4* s1s) {
  const Place dp = word_destination(fn, dst, shape, ds);
  const auto a =
      as_f32(gather_u32(fn, "src0_addr", word_operand(fn, "src0_addr", src0, *shape, s0s, dst)));
  const auto b =
      as_f32(gather_u32(fn, "src1_addr", word_operand(fn, "src1_addr", src1, *shape, s1s, dst)));
  run(fn, cmp, a, b, std::vector<uint32_t>(a.size(), select_val.u32),
      std::vector<uint32_t>(a.size(), 0u), dp);
}

// dst = (c_first ? C cmp src : src cmp C) ? select_val : 0.
void select_value_tc(const char* fn, Fp32Compare cmp, bool c_first, local_addr_t dst,
                     local_addr_t src, float C, x32 select_val, const dim4* shape, const dim4* ds,
                     const dim4* ss) {
  const Place dp = word_destination(fn, dst, shape, ds);
  const auto x =
      as_f32(gather_u32(fn, "src_addr", word_operand(fn, "src_addr", src, *shape, ss, dst)));
  const std::vector<float> c(x.size(), C);
  const std::vector<uint32_t> sv(x.size(), select_val.u32), zero(x.size(), 0u);
  if (c_first)
    run(fn, cmp, c, x, sv, zero, dp);
  else
    run(fn, cmp, x, c, sv, zero, dp);
}

// An fp32 operand given as a constant or as a tensor in the aligned layout.
std::vector<float> fp32_operand(const char* fn, const char* name, const fp32_or_addr_t* op,
                                const dim4& shape, local_addr_t dst) {
  need(op, fn, name);
  const size_t count =
      static_cast<size_t>(dims(shape).n * dims(shape).c * dims(shape).h * dims(shape).w);
  if (!op->is_addr) return std::vector<float>(count, op->context.val);
  return as_f32(
      gather_u32(fn, name, word_operand(fn, name, op->context.addr, shape, nullptr, dst)));
}

std::vector<uint32_t> x32_operand(const char* fn, const char* name, const x32_or_addr_t* op,
                                  const dim4& shape, local_addr_t dst) {
  need(op, fn, name);
  const size_t count =
      static_cast<size_t>(dims(shape).n * dims(shape).c * dims(shape).h * dims(shape).w);
  if (!op->is_addr) return std::vector<uint32_t>(count, op->context.val.u32);
  return gather_u32(fn, name, word_operand(fn, name, op->context.addr, shape, nullptr, dst));
}

// dst = src0 cmp src1 ? select0 : select1, every operand a constant or a tensor.
void select_general(const char* fn, Fp32Compare cmp, local_addr_t dst, const fp32_or_addr_t* src0,
                    const fp32_or_addr_t* src1, const x32_or_addr_t* select0,
                    const x32_or_addr_t* select1, const dim4* shape) {
  const Place dp = word_destination(fn, dst, shape, nullptr);
  const auto a = fp32_operand(fn, "src0", src0, *shape, dst);
  const auto b = fp32_operand(fn, "src1", src1, *shape, dst);
  const auto s0 = x32_operand(fn, "select0", select0, *shape, dst);
  const auto s1 = x32_operand(fn, "select1", select1, *shape, dst);
  run(fn, cmp, a, b, s0, s1, dp);
}

}  // namespace

extern "C" {

void okk_bdc_greater_select_value(local_addr_t dst_addr, local_addr_t src0_addr,
                                  local_addr_t src1_addr, x32 select_val, const dim4* shape,
                                  const dim4* dst_stride, const dim4* src0_stride,
                                  const dim4* src1_stride) {
  select_value_tt("okk_bdc_greater_select_value", Fp32Compare::greater, dst_addr, src0_addr,
                  src1_addr, select_val, shape, dst_stride, src0_stride, src1_stride);
}

void okk_bdc_greater_C_select_value(local_addr_t dst_addr, local_addr_t src_addr, float C,
                                    x32 select_val, const dim4* shape, const dim4* dst_stride,
                                    const dim4* src_stride) {
  select_value_tc("okk_bdc_greater_C_select_value", Fp32Compare::greater, false, dst_addr, src_addr,
                  C, select_val, shape, dst_stride, src_stride);
}

void okk_bdc_C_greater_select_value(local_addr_t dst_addr, local_addr_t src_addr, float C,
                                    x32 select_val, const dim4* shape, const dim4* dst_stride,
                                    const dim4* src_stride) {
  select_value_tc("okk_bdc_C_greater_select_value", Fp32Compare::greater, true, dst_addr, src_addr,
                  C, select_val, shape, dst_stride, src_stride);
}

void okk_bdc_equal_select_value(local_addr_t dst_addr, local_addr_t src0_addr,
                                local_addr_t src1_addr, x32 select_val, const dim4* shape,
                                const dim4* dst_stride, const dim4* src0_stride,
                                const dim4* src1_stride) {
  select_value_tt("okk_bdc_equal_select_value", Fp32Compare::equal, dst_addr, src0_addr, src1_addr,
                  select_val, shape, dst_stride, src0_stride, src1_stride);
}

void okk_bdc_equal_C_select_value(local_addr_t dst_addr, local_addr_t src_addr, float C,
                                  x32 select_val, const dim4* shape, const dim4* dst_stride,
                                  const dim4* src_stride) {
  select_value_tc("okk_bdc_equal_C_select_value", Fp32Compare::equal, false, dst_addr, src_addr, C,
                  select_val, shape, dst_stride, src_stride);
}

void okk_bdc_greater_select(local_addr_t dst_addr, const fp32_or_addr_t* src0,
                            const fp32_or_addr_t* src1, const x32_or_addr_t* select0,
                            const x32_or_addr_t* select1, const dim4* shape) {
  select_general("okk_bdc_greater_select", Fp32Compare::greater, dst_addr, src0, src1, select0,
                 select1, shape);
}

void okk_bdc_equal_select(local_addr_t dst_addr, const fp32_or_addr_t* src0,
                          const fp32_or_addr_t* src1, const x32_or_addr_t* select0,
                          const x32_or_addr_t* select1, const dim4* shape) {
  select_general("okk_bdc_equal_select", Fp32Compare::equal, dst_addr, src0, src1, select0, select1,
                 shape);
}

}  // extern "C"
