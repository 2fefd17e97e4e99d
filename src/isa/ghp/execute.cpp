// Executing GHP-FPGA instructions: the fields become the parameters of the
// pool engine and add references of npukit/quant/ghp.hpp (no arithmetic here).
#include <algorithm>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/ops/ghp_pool.hpp"

namespace npukit::ghp {

namespace {

int sum_bits_for(Profile profile) {
  // The RTL's window sum register is 14 bits; the golden model sums exactly.
  return post_rounding_for(profile) == PostRounding::rtl_wrap10_half_up ? kPoolSumBits : 0;
}

}  // namespace

Shape input_shape(const Instruction& ins, const HwConfig& hw) {
  if (ins.op == OpCode::add) {
    validate(ins, hw);
    return {(static_cast<int64_t>(ins[fadd::len]) + 1) * hw.S * hw.R};
  }
  const PoolInstructionGeometry g = pool_instruction_geometry(ins, hw);
  return {1, g.C, g.INH, g.INW};
}

Shape output_shape(const Instruction& ins, const HwConfig& hw) {
  if (ins.op == OpCode::add) return input_shape(ins, hw);
  const PoolInstructionGeometry g = pool_instruction_geometry(ins, hw);
  return {1, g.C, g.OH, g.OW};
}

void execute_pool(const Instruction& ins, const TensorView& x, const TensorView& y,
                  const HwConfig& hw, Profile profile) {
  constexpr const char* fn = "npukit::ghp::execute_pool";
  const PoolInstructionGeometry g = pool_instruction_geometry(ins, hw);
  x.expect_shape({1, g.C, g.INH, g.INW}, fn, "x");
  y.expect_shape({1, g.C, g.OH, g.OW}, fn, "y");
  // Rows/columns past the last window are never read: crop them so that the
  // end padding (implicit in the instruction) is >= 0 and yields OH x OW.
  const int64_t used_h = std::min(g.INH, (g.OH - 1) * g.strideH + g.KH - g.padU);
  const int64_t used_w = std::min(g.INW, (g.OW - 1) * g.strideW + g.KW - g.padL);
  const TensorView xc(x.raw(), x.dtype(), {1, g.C, used_h, used_w}, x.strides(), fn);
  PoolEngineParams p;
  p.max = ins.op == OpCode::maxp;
  p.window.kernel_h = g.KH;
  p.window.kernel_w = g.KW;
  p.window.stride_h = g.strideH;
  p.window.stride_w = g.strideW;
  p.window.pad_top = g.padU;
  p.window.pad_left = g.padL;
  p.window.pad_bottom = (g.OH - 1) * g.strideH + g.KH - g.padU - used_h;
  p.window.pad_right = (g.OW - 1) * g.strideW + g.KW - g.padL - used_w;
  p.pad_value = static_cast<int>(ins[f64::X_z]);
  p.offset = g.neg_NXz;
  p.sum_bits = sum_bits_for(profile);
  p.post = PostProc{static_cast<int64_t>(ins[f64::m1]), static_cast<int>(ins[f64::n1]) + 1,
                    static_cast<int>(ins[f64::Y_z]), post_rounding_for(profile)};
  ghp_pool_engine_u8(xc, y, p);
}

void execute_add(const Instruction& ins, const TensorView& a, const TensorView& b,
                 const TensorView& c, const HwConfig& hw, Profile profile) {
  constexpr const char* fn = "npukit::ghp::execute_add";
  check(ins.op == OpCode::add, fn, "op", op_name(ins.op), "ADD");
  const Shape shape = input_shape(ins, hw);
  a.expect_shape(shape, fn, "a");
  b.expect_shape(shape, fn, "b");
  c.expect_shape(shape, fn, "c");
  AddParams p;
  p.m1 = static_cast<int64_t>(ins[fadd::m1]);
  p.m2 = static_cast<int64_t>(ins[fadd::m2]);
  p.n = static_cast<int>(ins[fadd::n]) + 1;
  p.a_zp = static_cast<int>(ins[fadd::A_z]);
  p.b_zp = static_cast<int>(ins[fadd::B_z]);
  p.c_zp = static_cast<int>(ins[fadd::C_z]);
  p.rounding = post_rounding_for(profile);
  ghp_add_u8(a, b, c, p);
}

}  // namespace npukit::ghp
