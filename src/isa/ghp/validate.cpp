// What the hardware requires of each field, and what a compiler must fill
// consistently.
#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"

namespace npukit::ghp {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string fname(const Instruction& ins, int i) {
  return std::string(op_name(ins.op)) + "." + fields(ins.format())[static_cast<size_t>(i)].name;
}

void in_range(const Instruction& ins, int i, int64_t v, int64_t lo, int64_t hi,
              const std::string& why) {
  if (v < lo || v > hi)
    fail("npukit::ghp::validate", fname(ins, i), std::to_string(v), range_text(lo, hi) + " " + why);
}

void check_multiplier(const Instruction& ins, int m_index, int n_index) {
  in_range(ins, m_index, static_cast<int64_t>(ins[m_index]), 0, kM1Max,
           "(the PPU's m1 port is 26 bits)");
  in_range(ins, n_index, static_cast<int64_t>(ins[n_index]) + 1, kN1Min, kN1MaxRtl,
           "(real n1; the PPU's shift port is 6 bits, stored n1 - 1 <= 63)");
}

void require(bool cond, const char* fn, const std::string& parameter, const std::string& value,
             const std::string& allowed) {
  if (!cond) fail(fn, parameter, value, allowed);
}

}  // namespace

void validate(const Instruction& ins, const HwConfig& hw) {
  check_widths(ins);
  switch (ins.format()) {
    case Format::none:
      return;
    case Format::add:
      check_multiplier(ins, fadd::m1, fadd::n);
      in_range(ins, fadd::m2, static_cast<int64_t>(ins[fadd::m2]), 0, kM1Max,
               "(the PPU's m2 port is 26 bits)");
      return;
    case Format::remap:
      check_multiplier(ins, fremap::m1, fremap::n1);
      return;
    case Format::pool64:
      break;
  }
  namespace f = f64;
  in_range(ins, f::strideH, static_cast<int64_t>(ins[f::strideH]), 1, 15, "(4-bit, nonzero)");
  in_range(ins, f::strideW, static_cast<int64_t>(ins[f::strideW]), 1, 15, "(4-bit, nonzero)");
  check_multiplier(ins, f::m1, f::n1);
  if (ins.op != OpCode::maxp && ins.op != OpCode::avgp) return;
  const auto v = [&](int i) { return static_cast<int64_t>(ins[i]); };
  const int64_t inc = real_field(Format::pool64, f::INC, ins[f::INC], hw);
  require(v(f::OC) >= hw.S && v(f::OC) % hw.S == 0, "npukit::ghp::validate", fname(ins, f::OC),
          std::to_string(v(f::OC)), "a positive multiple of S = " + std::to_string(hw.S));
  require(v(f::OC) == inc, "npukit::ghp::validate", fname(ins, f::OC), std::to_string(v(f::OC)),
          "INC = " + std::to_string(inc) + " (pooling keeps the channels)");
  in_range(ins, f::INW_, v(f::INW_), 1, 65535, "(input width)");
  in_range(ins, f::INH2, v(f::INH2), v(f::padU) + 1, 65535, "(INH2 = INH + padU with INH >= 1)");
  const int64_t kh = v(f::KH) + 1, kw = v(f::KW) + 1;
  in_range(ins, f::padU, v(f::padU), 0, kh - 1, "(windows must reach the input: padU < KH)");
  in_range(ins, f::padL, v(f::padL), 0, kw - 1, "(windows must reach the input: padL < KW)");
  require(v(f::row_bound) % v(f::strideH) == 0, "npukit::ghp::validate", fname(ins, f::row_bound),
          std::to_string(v(f::row_bound)),
          "a multiple of strideH = " + std::to_string(v(f::strideH)));
  require(v(f::col_bound) % v(f::strideW) == 0, "npukit::ghp::validate", fname(ins, f::col_bound),
          std::to_string(v(f::col_bound)),
          "a multiple of strideW = " + std::to_string(v(f::strideW)));
}

PoolInstructionGeometry pool_instruction_geometry(const Instruction& ins, const HwConfig& hw) {
  check(ins.op == OpCode::maxp || ins.op == OpCode::avgp, "npukit::ghp::pool_geometry", "op",
        op_name(ins.op), "MAXP or AVGP");
  validate(ins, hw);
  namespace f = f64;
  const auto v = [&](int i) { return static_cast<int64_t>(ins[i]); };
  PoolInstructionGeometry g;
  g.C = v(f::OC);
  g.INW = v(f::INW_);
  g.INH = v(f::INH2) - v(f::padU);
  g.KH = v(f::KH) + 1;
  g.KW = v(f::KW) + 1;
  g.strideH = v(f::strideH);
  g.strideW = v(f::strideW);
  g.padU = v(f::padU);
  g.padL = v(f::padL);
  g.OH = v(f::row_bound) / g.strideH + 1;
  g.OW = v(f::col_bound) / g.strideW + 1;
  g.neg_NXz = static_cast<int16_t>(static_cast<uint16_t>((v(f::obj2) << 8) | v(f::obj1)));
  return g;
}

std::vector<std::string> consistency_problems(const Instruction& ins, const HwConfig& hw) {
  std::vector<std::string> out;
  if (ins.op != OpCode::maxp && ins.op != OpCode::avgp) return out;
  const PoolInstructionGeometry g = pool_instruction_geometry(ins, hw);
  namespace f = f64;
  auto expect = [&](int i, int64_t want, const std::string& formula) {
    const auto have = static_cast<int64_t>(ins[i]);
    if (have != want)
      out.push_back(fname(ins, i) + ": stored " + std::to_string(have) + ", expected " +
                    std::to_string(want) + " (" + formula + ")");
  };
  const int64_t outs = g.OH * g.OW;
  const int64_t rounds = ceil_div(outs, hw.P);
  const std::string P = std::to_string(hw.P), R = std::to_string(hw.R);
  expect(f::xphs_len, rounds - 1, "ceil(OH*OW/P) - 1 with P = " + P);
  expect(f::INW2, g.INW + g.padL, "INW + padL");
  expect(f::ifm_height, ceil_div(g.INH * g.INW, hw.R), "ceil(INH*INW/R) with R = " + R);
  expect(f::ofm_height, ceil_div(outs, hw.R), "ceil(OH*OW/R) with R = " + R);
  expect(f::n_last_batch, ceil_div(outs - (rounds - 1) * hw.P, hw.R),
         "ceil((OH*OW - (ceil(OH*OW/P) - 1)*P)/R) with P = " + P + ", R = " + R);
  expect(f::vec_size, g.KH * g.KW, "KH*KW");
  expect(f::vec_size_minus_1, g.KH * g.KW - 1, "KH*KW - 1");
  for (int i : {f::W_addr, f::W_n_bytes, f::B_addr, f::n_W_round, f::W_z, f::obj3, f::obj4})
    expect(i, 0, "not used by pooling");
  if (ins.op == OpCode::avgp) {
    const int64_t neg = -g.KH * g.KW * static_cast<int64_t>(ins[f::X_z]);
    expect(f::obj1, neg & 0xFF, "(-N*X_z) & 0xFF");
    expect(f::obj2, (neg >> 8) & 0xFF, "((-N*X_z) >> 8) & 0xFF");
  } else {
    expect(f::m1, 1024, "MaxPool runs the PPU with m1 = 1024");
    expect(f::n1, 9, "n1 = 10, stored 9");
    for (int i : {f::X_z, f::Y_z, f::obj1, f::obj2}) expect(i, 0, "MaxPool zero points are 0");
  }
  return out;
}

}  // namespace npukit::ghp
