// GHP-FPGA instructions: packing, round trips, limits, lowering formulas and
// execution. Expected values are hand-computed from docs/ghp-isa.md, "The arithmetic" or
// taken from the public testbench (wkid-neu/GHP-FPGA-CNN, tb/sim_avgp/ins.txt).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "npukit/isa/ghp.hpp"

namespace npukit::ghp {
namespace test_ghp_isa {
namespace {

const HwConfig kPublic = hw_preset("M64P64Q16R16S8");
const HwConfig kSeed = hw_preset("seed");
// The six public avgp lines; their xphs_len/n_last_batch fit P = 96 (see docs).
const char* kTbLines[] = {
    "0 0 0 0 0 0 1 8 0 2 1 1 1 1 0 0 2 2 1 1 1 0 0 0 4 3 138 0 155 53270447 25 216 253 0 0",
    "1 0 0 0 0 2 9 8 0 10 1 1 2 2 0 0 10 10 7 2 2 0 8 8 4 3 138 0 132 37191739 25 216 253 0 0",
    "2 0 0 0 0 11 20 8 0 12 1 1 2 2 0 0 12 12 9 3 3 0 10 10 4 3 124 0 122 39785584 25 16 254 0 0",
    "3 0 0 0 0 23 30 8 0 10 1 1 2 2 0 0 10 10 7 2 2 0 8 8 4 3 122 0 121 46856268 25 24 254 0 0",
    "4 2 0 0 0 32 84 32 3 14 2 2 1 1 1 1 15 15 13 13 1 0 13 13 9 8 136 0 130 50294988 26 56 251 0 "
    "0",
    "7 2 0 0 0 136 1160 128 15 32 1 1 2 2 0 0 32 32 64 16 4 0 30 30 4 3 132 0 129 36500560 25 240 "
    "253 0 0",
};

// The hand-written lines below name only the fields that matter; the
// assembler wants every field, so the rest are taken from the disassembly of
// an all-zero instruction (stored 0, as the hardware reads an unset field).
std::string with_zero_fields(const std::string& partial, const HwConfig& hw) {
  std::istringstream in(partial.substr(0, partial.find('#')));
  std::string op, tok;
  in >> op;
  std::map<std::string, std::string> given;
  while (in >> tok) given[tok.substr(0, tok.find('='))] = tok;
  const std::string zero = disassemble(Instruction(op_from_name(op)), hw);
  std::istringstream z(zero.substr(0, zero.find('#')));
  std::string out;
  z >> out;
  while (z >> tok) {
    const auto it = given.find(tok.substr(0, tok.find('=')));
    out += ' ' + (it == given.end() ? tok : it->second);
    if (it != given.end()) given.erase(it);
  }
  EXPECT_TRUE(given.empty()) << "unknown field in '" << partial << "'";
  return out;
}

TEST(GhpIsaFields, TablesCoverEveryByteOnce) {
  for (Format f : {Format::pool64, Format::add, Format::remap}) {
    std::vector<int> bits(static_cast<size_t>(instruction_bytes(f)), 0);
    bits[0] = 8;  // op_type
    for (const FieldSpec& s : fields(f)) {
      if (s.bits < 8) {
        bits[static_cast<size_t>(s.byte)] += s.bits;
        continue;
      }
      ASSERT_EQ(s.bits % 8, 0) << s.name;
      for (int b = 0; b < s.bits / 8; ++b) bits[static_cast<size_t>(s.byte + b)] += 8;
    }
    for (size_t b = 0; b < bits.size(); ++b) EXPECT_EQ(bits[b], 8) << "byte " << b;
  }
  EXPECT_EQ(instruction_bytes(Format::pool64) * 8, 512);
  EXPECT_EQ(fields(Format::pool64).size(), 35u);  // ins.txt has 35 numbers after op_type
  EXPECT_EQ(fields(Format::add).size(), 10u);
  EXPECT_EQ(fields(Format::remap).size(), 7u);
  EXPECT_EQ(instruction_bytes(Format::add), 29);
  EXPECT_EQ(instruction_bytes(Format::remap), 21);
}

TEST(GhpIsaFields, OpCodes) {
  EXPECT_EQ(static_cast<int>(OpCode::conv), 1);
  EXPECT_EQ(static_cast<int>(OpCode::maxp), 2);
  EXPECT_EQ(static_cast<int>(OpCode::avgp), 3);
  EXPECT_EQ(static_cast<int>(OpCode::add), 4);
  EXPECT_EQ(static_cast<int>(OpCode::remap), 5);
  EXPECT_EQ(static_cast<int>(OpCode::fc), 6);
  EXPECT_EQ(static_cast<int>(OpCode::none), 0xFF);
  EXPECT_EQ(op_from_name("avgp"), OpCode::avgp);
  EXPECT_THROW(op_from_name("pool"), Error);
  EXPECT_THROW(op_from_code(0), Error);
  EXPECT_THROW(op_from_code(7), Error);
}

TEST(GhpIsaBytes, WorkedExampleBytes) {
  const Instruction ins = parse_ins_txt_line(kTbLines[0], OpCode::avgp);
  const std::vector<uint8_t> b = encode(ins);
  ASSERT_EQ(b.size(), 64u);
  EXPECT_EQ(b[0], 3);      // AVGP
  EXPECT_EQ(b[19], 1);     // Y_addr = 1, little-endian 32 bits at 19..22
  EXPECT_EQ(b[23], 8);     // OC
  EXPECT_EQ(b[29], 1);     // KH - 1
  EXPECT_EQ(b[31], 0x11);  // (strideW << 4) | strideH
  EXPECT_EQ(b[52], 138);   // X_z
  EXPECT_EQ(b[54], 155);   // Y_z
  EXPECT_EQ(b[55], 0xAF);  // m1 = 53270447 = 0x032CD7AF
  EXPECT_EQ(b[56], 0xD7);
  EXPECT_EQ(b[57], 0x2C);
  EXPECT_EQ(b[58], 0x03);
  EXPECT_EQ(b[59], 25);   // n1 - 1
  EXPECT_EQ(b[60], 216);  // -552 = 0xFDD8
  EXPECT_EQ(b[61], 253);
  EXPECT_EQ(decode(b.data(), b.size()), ins);
}

TEST(GhpIsaBytes, NibblesShareBytes31And32) {
  Instruction ins(OpCode::maxp);
  ins[f64::strideH] = 2;
  ins[f64::strideW] = 3;
  ins[f64::padL] = 1;
  ins[f64::padU] = 4;
  const std::vector<uint8_t> b = encode(ins);
  EXPECT_EQ(b[31], 0x32);
  EXPECT_EQ(b[32], 0x41);
  EXPECT_EQ(decode(b.data(), b.size()), ins);
}

Instruction random_instruction(std::mt19937_64& rng) {
  static const OpCode ops[] = {OpCode::conv,  OpCode::maxp, OpCode::avgp, OpCode::add,
                               OpCode::remap, OpCode::fc,   OpCode::none};
  Instruction ins(ops[rng() % 7]);
  const auto& fs = fields(ins.format());
  for (size_t i = 0; i < fs.size(); ++i) {
    const uint64_t mask = fs[i].bits >= 64 ? ~0ull : (1ull << fs[i].bits) - 1;
    // Mix extremes and random values.
    const uint64_t pick = rng() % 4;
    ins.values[i] = pick == 0 ? 0 : pick == 1 ? mask : rng() & mask;
  }
  return ins;
}

TEST(GhpIsaRoundTrip, RandomInstructionsThroughEveryForm) {
  std::mt19937_64 rng(5);  // seed 5: reproducible
  std::vector<Instruction> program;
  for (int k = 0; k < 2000; ++k) {
    const Instruction ins = random_instruction(rng);
    const std::vector<uint8_t> b = encode(ins);
    size_t used = 0;
    ASSERT_EQ(decode(b.data(), b.size(), &used), ins) << "case " << k;
    ASSERT_EQ(used, b.size());
    for (const HwConfig& hw : {kPublic, kSeed})
      ASSERT_EQ(assemble_line(disassemble(ins, hw), hw), ins) << disassemble(ins, hw);
    if (ins.op != OpCode::none) {
      const OpCode hint = ins.format() == Format::pool64 ? ins.op : OpCode::avgp;
      ASSERT_EQ(parse_ins_txt_line(ins_txt_line(ins), hint), ins) << ins_txt_line(ins);
    }
    program.push_back(ins);
  }
  EXPECT_EQ(decode_stream(encode_stream(program)), program);
}

TEST(GhpIsaLimits, EveryFieldWidthRejectedAtItsBoundary) {
  for (Format f : {Format::pool64, Format::add, Format::remap}) {
    const OpCode op = f == Format::pool64 ? OpCode::avgp
                      : f == Format::add  ? OpCode::add
                                          : OpCode::remap;
    const auto& fs = fields(f);
    for (size_t i = 0; i < fs.size(); ++i) {
      Instruction ins(op);
      const uint64_t max = (1ull << fs[i].bits) - 1;
      ins.values[i] = max;
      EXPECT_NO_THROW(check_widths(ins)) << fs[i].name;
      ins.values[i] = max + 1;
      try {
        check_widths(ins);
        ADD_FAILURE() << fs[i].name << " accepted " << max + 1;
      } catch (const Error& e) {
        EXPECT_EQ(e.parameter(), std::string(op_name(op)) + "." + fs[i].name);
        EXPECT_EQ(e.value(), std::to_string(max + 1));
      }
    }
  }
}

TEST(GhpIsaLimits, RealValueEncodings) {
  const int kh = field_index(Format::pool64, "KH");
  EXPECT_EQ(encode_field(Format::pool64, kh, 256, kPublic), 255u);
  EXPECT_THROW(encode_field(Format::pool64, kh, 257, kPublic), Error);
  EXPECT_THROW(encode_field(Format::pool64, kh, 0, kPublic), Error);
  const int inc = field_index(Format::pool64, "INC");
  EXPECT_EQ(encode_field(Format::pool64, inc, 32, kPublic), 3u);  // 32/8 - 1
  EXPECT_EQ(encode_field(Format::pool64, inc, 32, kSeed), 7u);    // 32/4 - 1
  EXPECT_THROW(encode_field(Format::pool64, inc, 12, kPublic), Error);
  EXPECT_EQ(encode_field(Format::pool64, inc, 12, kSeed), 2u);
  EXPECT_THROW(encode_field(Format::pool64, inc, 0, kSeed), Error);
  EXPECT_EQ(real_field(Format::pool64, inc, 15, kPublic), 128);
  const int n1 = field_index(Format::pool64, "n1");
  EXPECT_EQ(encode_field(Format::pool64, n1, 26, kPublic), 25u);
  EXPECT_EQ(encode_field(Format::pool64, field_index(Format::pool64, "strideW"), 15, kPublic), 15u);
  EXPECT_THROW(encode_field(Format::pool64, field_index(Format::pool64, "strideW"), 16, kPublic),
               Error);
  EXPECT_THROW(encode_field(Format::pool64, field_index(Format::pool64, "padU"), 16, kPublic),
               Error);
}

Instruction valid_avgp() {
  return parse_ins_txt_line(kTbLines[4], OpCode::avgp);
}

void expect_invalid(const Instruction& ins, const std::string& field,
                    const HwConfig& hw = kPublic) {
  try {
    validate(ins, hw);
    ADD_FAILURE() << field << " accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), field) << e.what();
  }
}

TEST(GhpIsaLimits, ValidateMeaning) {
  EXPECT_NO_THROW(validate(valid_avgp(), kPublic));
  Instruction i = valid_avgp();
  i[f64::strideH] = 0;
  expect_invalid(i, "AVGP.strideH");
  i = valid_avgp();
  i[f64::m1] = kM1Max;
  EXPECT_NO_THROW(validate(i, kPublic));
  i[f64::m1] = kM1Max + 1;
  expect_invalid(i, "AVGP.m1");
  i = valid_avgp();
  i[f64::n1] = 63;  // n1 = 64
  EXPECT_NO_THROW(validate(i, kPublic));
  i[f64::n1] = 64;
  expect_invalid(i, "AVGP.n1");
  i = valid_avgp();
  i[f64::OC] = 33;
  expect_invalid(i, "AVGP.OC");
  i[f64::OC] = 40;  // multiple of S but not INC
  expect_invalid(i, "AVGP.OC");
  i = valid_avgp();
  i[f64::INH2] = 1;  // = padU: INH = 0
  expect_invalid(i, "AVGP.INH2");
  i = valid_avgp();
  i[f64::row_bound] = 13;
  i[f64::strideH] = 2;
  expect_invalid(i, "AVGP.row_bound");
  i = valid_avgp();
  i[f64::padU] = 3;  // = KH
  expect_invalid(i, "AVGP.padU");
  Instruction a(OpCode::add);
  a[fadd::m1] = kM1Max + 1;
  expect_invalid(a, "ADD.m1");
  a[fadd::m1] = 1;
  a[fadd::m2] = kM1Max + 1;
  expect_invalid(a, "ADD.m2");
}

TEST(GhpIsaLimits, HardwarePresets) {
  EXPECT_EQ(kSeed.S, 4);
  EXPECT_EQ(kSeed.R, 32);
  EXPECT_EQ(kPublic.P, 64);
  EXPECT_EQ(kPublic.R, 16);
  EXPECT_EQ(kPublic.S, 8);
  const HwConfig p96 = hw_preset("M32P96Q16R16S8");
  EXPECT_EQ(p96.M, 32);
  EXPECT_EQ(p96.P, 96);
  EXPECT_THROW(hw_preset("M64P64"), Error);
  EXPECT_THROW(hw_preset("M64P0Q16R16S8"), Error);
}

// --- lowering ---------------------------------------------------------------

QuantParams tb_quant(int k) {
  // Scales recomputed from the public generator's recipe (numpy seed 2023).
  static const double xs[] = {0.022650742800256075, 0.022176593491342402, 0.022455867174840678,
                              0.02495847000891963,  0.0298676057531964,   0.03647366451633136};
  static const double ys[] = {0.007133719091750501, 0.010003874708141016, 0.009469433410543081,
                              0.008936555540113002, 0.008856111454303811, 0.016764853732146343};
  static const int xz[] = {138, 138, 124, 122, 136, 132}, yz[] = {155, 132, 122, 121, 130, 129};
  return {xs[k], xz[k], ys[k], yz[k]};
}

TEST(GhpIsaLower, ReproducesThePublicInsTxt) {
  // cfg_avgp.yaml: (C, H, W, K, stride, pad).
  const int64_t cfg[6][6] = {{8, 2, 2, 2, 1, 0},   {8, 10, 10, 2, 2, 0},  {8, 12, 12, 2, 2, 0},
                             {8, 10, 10, 2, 2, 0}, {32, 14, 14, 3, 1, 1}, {128, 32, 32, 2, 2, 0}};
  std::vector<GoldenCase> cases;
  for (int k = 0; k < 6; ++k) {
    GoldenCase c;
    c.C = cfg[k][0];
    c.H = cfg[k][1];
    c.W = cfg[k][2];
    c.attrs.kernel_shape = {cfg[k][3], cfg[k][3]};
    c.attrs.strides = {cfg[k][4], cfg[k][4]};
    c.attrs.pads = {cfg[k][5], cfg[k][5], cfg[k][5], cfg[k][5]};
    c.q = tb_quant(k);
    c.seed = static_cast<uint64_t>(k);
    cases.push_back(c);
  }
  // P = 96 is what the published xphs_len / n_last_batch fit.
  const std::vector<GoldenResult> r = make_golden(cases, hw_preset("M32P96Q16R16S8"));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(ins_txt_line(r[static_cast<size_t>(k)].ins), kTbLines[k]);
}

TEST(GhpIsaLower, FormulasOnBothBuilds) {
  // Case 4 of the testbench: 32x14x14, k3 s1 p1 -> 14x14 = 196 outputs, N = 9.
  const Shape x{1, 32, 14, 14};
  PoolAttrs a;
  a.kernel_shape = {3, 3};
  a.pads = {1, 1, 1, 1};
  const QuantParams q = tb_quant(4);
  Instruction i = lower_qlinear_average_pool(x, a, q, {}, kPublic);
  EXPECT_EQ(i[f64::INC], 3u);          // 32/8 - 1
  EXPECT_EQ(i[f64::ifm_height], 13u);  // ceil(196/16)
  EXPECT_EQ(i[f64::ofm_height], 13u);
  EXPECT_EQ(i[f64::xphs_len], 3u);      // ceil(196/64) - 1
  EXPECT_EQ(i[f64::n_last_batch], 1u);  // ceil((196 - 3*64)/16)
  EXPECT_EQ(i[f64::INH2], 15u);
  EXPECT_EQ(i[f64::row_bound], 13u);
  EXPECT_EQ(i[f64::vec_size], 9u);
  EXPECT_EQ(i[f64::obj1], 56u);  // -9*136 = -1224 = 0xFB38
  EXPECT_EQ(i[f64::obj2], 251u);
  EXPECT_EQ(i[f64::m1], 50294988u);
  EXPECT_EQ(i[f64::n1], 26u);
  EXPECT_TRUE(consistency_problems(i, kPublic).empty());
  i = lower_qlinear_average_pool(x, a, q, {}, kSeed);
  EXPECT_EQ(i[f64::INC], 7u);         // 32/4 - 1
  EXPECT_EQ(i[f64::ifm_height], 7u);  // ceil(196/32)
  EXPECT_EQ(i[f64::ofm_height], 7u);
  EXPECT_EQ(i[f64::n_last_batch], 1u);  // ceil(4/32)
  // 16x16 -> 8x8 = 64 outputs: one round; 128 outputs (16x8 after stride 1x2 on 16x16): two.
  PoolAttrs b;
  b.kernel_shape = {1, 2};
  b.strides = {1, 2};
  i = lower_qlinear_average_pool({1, 8, 16, 16}, b, q, {}, kPublic);
  EXPECT_EQ(i[f64::xphs_len], 1u);
  EXPECT_EQ(i[f64::n_last_batch], 4u);  // ceil((128 - 64)/16)
  EXPECT_EQ(i[f64::col_bound], 14u);    // (8 - 1)*2
  i = lower_qlinear_average_pool({1, 8, 16, 16}, b, q, {}, kSeed);
  EXPECT_EQ(i[f64::n_last_batch], 2u);  // ceil(64/32)
}

TEST(GhpIsaLower, CeilModeBecomesEndPadding) {
  PoolAttrs a;
  a.kernel_shape = {2, 2};
  a.strides = {2, 2};
  a.ceil_mode = true;
  const Window2d w = pool_window({1, 8, 5, 5}, a, "t");
  EXPECT_FALSE(w.ceil_mode);
  EXPECT_EQ(w.pad_bottom, 1);  // OH = 3: windows at 0, 2, 4 need rows up to 5
  EXPECT_EQ(w.pad_right, 1);
  const Instruction i =
      lower_qlinear_average_pool({1, 8, 5, 5}, a, {0.02, 100, 0.01, 90}, {}, kPublic);
  EXPECT_EQ(i[f64::row_bound], 4u);
  EXPECT_EQ(output_shape(i, kPublic), (Shape{1, 8, 3, 3}));
}

void expect_lower_error(const std::function<void()>& f, const std::string& parameter) {
  try {
    f();
    ADD_FAILURE() << parameter << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), parameter) << e.what();
  }
}

TEST(GhpIsaLower, RejectsWhatTheHardwareCannotDo) {
  const Shape x{1, 8, 10, 10};
  PoolAttrs a;
  a.kernel_shape = {2, 2};
  const QuantParams q{0.02, 10, 0.01, 20};
  auto lower = [&](PoolAttrs at, QuantParams qq = {0.02, 10, 0.01, 20}, Shape xs = {1, 8, 10, 10}) {
    return [=] { lower_qlinear_average_pool(xs, at, qq, {}, kPublic); };
  };
  PoolAttrs b = a;
  b.count_include_pad = 0;
  expect_lower_error(lower(b), "count_include_pad");
  b = a;
  b.strides = {16, 1};
  expect_lower_error(lower(b, q, {1, 8, 40, 10}), "strides[0]");
  b.strides = {15, 1};
  EXPECT_NO_THROW(lower(b, q, {1, 8, 40, 10})());
  b = a;
  b.dilations = {2, 2};
  expect_lower_error(lower(b), "dilations");
  b = a;
  b.kernel_shape = {9, 8};  // N = 72 > 64
  expect_lower_error(lower(b), "kernel_shape");
  b.kernel_shape = {8, 8};
  EXPECT_NO_THROW(lower(b)());
  expect_lower_error(lower(a, {1e9, 10, 1.0, 20}), "M1 = x_scale/(N*y_scale)");
  expect_lower_error(lower(a, {1e-14, 10, 1.0, 20}), "M1 = x_scale/(N*y_scale)");  // n1 > 64
  expect_lower_error(lower(a, {0.02, 256, 0.01, 20}), "x_zero_point");
  expect_lower_error(lower(a, {-0.02, 10, 0.01, 20}), "x_scale");
  expect_lower_error(lower(a, q, {2, 8, 10, 10}), "x_shape[0] (N)");
  expect_lower_error(lower(a, q, {1, 12, 10, 10}), "x_shape[1] (C)");
  expect_lower_error([&] { lower_qlinear_add(100, {}, {}, kPublic); }, "elements");
  expect_lower_error(
      [&] {
        lower_qlinear_add(128, {1e9, 0, 1.0, 0, 1.0, 0}, {}, kPublic);
      },
      "max(a_scale, b_scale)/c_scale");
}

TEST(GhpIsaLower, MaxPoolAndAddFields) {
  PoolAttrs a;
  a.kernel_shape = {3, 3};
  a.strides = {2, 2};
  const Instruction m = lower_max_pool({1, 16, 9, 9}, a, {}, kPublic);
  EXPECT_EQ(m.op, OpCode::maxp);
  EXPECT_EQ(m[f64::m1], 1024u);
  EXPECT_EQ(m[f64::n1], 9u);
  EXPECT_EQ(m[f64::X_z], 0u);
  EXPECT_TRUE(consistency_problems(m, kPublic).empty());
  const Instruction g =
      lower_qlinear_global_average_pool({1, 8, 7, 7}, {0.1, 3, 0.05, 4}, {}, kPublic);
  EXPECT_EQ(g[f64::vec_size], 49u);
  EXPECT_EQ(output_shape(g, kPublic), (Shape{1, 8, 1, 1}));
  // a/c = 0.75, b/c = 0.375 on 256 elements = 2 rows of S*R = 128.
  const Instruction d = lower_qlinear_add(256, {0.75, 1, 0.375, 2, 1.0, 3}, {0, 2, 4}, kPublic);
  EXPECT_EQ(ins_txt_line(d), "0 2 4 1 50331648 25165824 25 1 2 3");
}

// --- execution --------------------------------------------------------------

TEST(GhpIsaExec, HandComputedAvgpWithPadding) {
  // 4 channels of [10 20; 30 41], k2 s2 pad 1, X_z 5, Y_z 3, M = 1/4 (m1 2^25, n1 27).
  // -N*X_z = -20 = 0xFFEC.
  const Instruction ins = assemble_line(
      with_zero_fields(
          "AVGP OC=4 INC=4 INW_=2 KH=2 KW=2 strideH=2 strideW=2 padL=1 padU=1 INH2=3 INW2=3 "
          "row_bound=2 col_bound=2 X_z=5 Y_z=3 m1=33554432 n1=27 obj1=236 obj2=255",
          kSeed),
      kSeed);
  const uint8_t one[4] = {10, 20, 30, 41};
  std::vector<uint8_t> xs(16);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = one[i % 4];
  Tensor x = Tensor::from<uint8_t>({1, 4, 2, 2}, xs);
  Tensor y(DType::u8, output_shape(ins, kSeed));
  execute_pool(ins, x, y, kSeed);
  for (int c = 0; c < 4; ++c)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(y.data<uint8_t>()[c * 4 + j], (std::vector<uint8_t>{4, 7, 9, 12})[j]);
}

TEST(GhpIsaExec, TenBitWrapSeparatesTheProfiles) {
  // All 255, X_z = 0, M = 0.5: acc = 1020 -> t = 1020 wraps to -4 -> r = -2 -> 0 (RTL);
  // the golden model gives 510 -> 255.
  const Instruction ins = assemble_line(
      with_zero_fields(
          "AVGP OC=4 INC=4 INW_=2 KH=2 KW=2 strideH=1 strideW=1 INH2=2 INW2=2 m1=33554432 n1=26",
          kSeed),
      kSeed);
  Tensor x(DType::u8, {1, 4, 2, 2});
  std::fill_n(x.data<uint8_t>(), 16, uint8_t{255});
  Tensor y(DType::u8, {1, 4, 1, 1});
  execute_pool(ins, x, y, kSeed, Profile::ghp_rtl);
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  execute_pool(ins, x, y, kSeed, Profile::ghp_golden);
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{255, 255, 255, 255}));
  EXPECT_THROW(execute_pool(ins, x, y, kSeed, Profile::onnxruntime), Error);
}

TEST(GhpIsaExec, OutputsPrefixOfWindowsAndMaxPool) {
  // MAXP over a 1x4x5x5 ramp, k2 s2, row_bound 0 (one output row), col_bound 2 (two columns).
  const Instruction ins = assemble_line(
      with_zero_fields(
          "MAXP OC=4 INC=4 INW_=5 KH=2 KW=2 strideH=2 strideW=2 INH2=5 INW2=5 row_bound=0 "
          "col_bound=2 m1=1024 n1=10",
          kSeed),
      kSeed);
  EXPECT_EQ(output_shape(ins, kSeed), (Shape{1, 4, 1, 2}));
  std::vector<uint8_t> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i);
  Tensor x = Tensor::from<uint8_t>({1, 4, 5, 5}, v);
  Tensor y(DType::u8, {1, 4, 1, 2});
  execute_pool(ins, x, y, kSeed);
  // channel c: max of rows 0-1 at cols 0-1 = 25c + 6, cols 2-3 = 25c + 8.
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{6, 8, 31, 33, 56, 58, 81, 83}));
}

TEST(GhpIsaExec, AddFromFields) {
  // m1 = m2 = 2^25, n = 26 (0.5 each); 128 elements = one row of S*R.
  const Instruction ins = assemble_line(
      with_zero_fields("ADD len=1 m1=33554432 m2=33554432 n=26 A_z=20 B_z=20 C_z=100", kPublic),
      kPublic);
  std::vector<uint8_t> a(128, 10), b(128, 21), c(128);
  const Shape s{128};
  execute_add(ins, TensorView::contiguous(a.data(), DType::u8, s),
              TensorView::contiguous(b.data(), DType::u8, s),
              TensorView::contiguous(c.data(), DType::u8, s), kPublic);
  EXPECT_EQ(c[0], 96);  // 100 + round_half_up(-4.5)
  execute_add(ins, TensorView::contiguous(a.data(), DType::u8, s),
              TensorView::contiguous(b.data(), DType::u8, s),
              TensorView::contiguous(c.data(), DType::u8, s), kPublic, Profile::ghp_golden);
  EXPECT_EQ(c[127], 95);
}

TEST(GhpIsaExec, RejectsWrongShapes) {
  const Instruction ins = parse_ins_txt_line(kTbLines[0], OpCode::avgp);
  Tensor x(DType::u8, {1, 8, 2, 3});
  Tensor y(DType::u8, {1, 8, 1, 1});
  EXPECT_THROW(execute_pool(ins, x, y, kPublic), Error);
  Tensor x2(DType::u8, {1, 8, 2, 2});
  Tensor y2(DType::u8, {1, 8, 1, 2});
  EXPECT_THROW(execute_pool(ins, x2, y2, kPublic), Error);
  EXPECT_NO_THROW(execute_pool(ins, x2, y, kPublic));
}

// Runs f, which must throw an Error whose parameter contains `parameter`.
void expect_error(const std::function<void()>& f, const std::string& parameter,
                  const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_NE(e.parameter().find(parameter), std::string::npos) << what << ": " << e.what();
  }
}

TEST(GhpIsaText, AssemblerErrors) {
  const std::string full = with_zero_fields("AVGP KH=2", kPublic);
  const auto line = [&](const std::string& extra) {
    return [&, extra] { (void)assemble_line(full + extra, kPublic); };
  };
  EXPECT_NE(full.find(" KH=2 KW=1:0 "), std::string::npos) << full;
  expect_error([] { (void)assemble_line("POOL KH=2", kPublic); }, "op", "unknown op");
  expect_error(line(" KH"), "token", "no '='");
  expect_error([&] { (void)assemble_line(with_zero_fields("AVGP KH=2:0", kPublic), kPublic); },
               "KH", "stored must be 1");
  EXPECT_NO_THROW(assemble_line(full + "  # comment", kPublic));
  expect_error(line(" KH=3"), "KH", "given twice");
  expect_error(line(" XX=2"), "field", "unknown field");
  expect_error([&] { (void)assemble_line(with_zero_fields("AVGP KH=x", kPublic), kPublic); }, "KH",
               "not a number");
  const std::string bad = with_zero_fields("AVGP KH=300", kPublic);
  try {
    assemble("# header\n" + full + "\n" + bad + "\n", kPublic);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.parameter().find("line 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_ins_txt_line("1 2 3", OpCode::avgp), Error);
  EXPECT_THROW(parse_ins_txt_line("1 2 x 4 5 6 7", OpCode::avgp), Error);
  EXPECT_EQ(parse_ins_txt_line("0 1 2 0 51528330 45064676 25 138 124 133", OpCode::avgp).op,
            OpCode::add);
  const uint8_t truncated[10] = {3};
  EXPECT_THROW(decode(truncated, sizeof truncated), Error);
  const uint8_t bad_op[1] = {9};
  EXPECT_THROW(decode(bad_op, 1), Error);
}

// Issue #11: a line that leaves fields out used to assemble with them 0
// ("AVGP" alone gave strideH = 0). Every field left out is now named.
TEST(GhpIsaText, EveryFieldMustBeNamed) {
  int cases = 0;
  for (OpCode op : {OpCode::conv, OpCode::maxp, OpCode::avgp, OpCode::add, OpCode::remap,
                    OpCode::fc, OpCode::none})
    for (const HwConfig& hw : {kPublic, kSeed}) {
      const std::string full = disassemble(Instruction(op), hw);
      ASSERT_EQ(assemble_line(full, hw), Instruction(op)) << full;
      const auto& fs = fields(format_of(op));
      // Drop each field in turn: the error names the line and exactly that field.
      for (size_t i = 0; i < fs.size(); ++i, ++cases) {
        std::istringstream in(full.substr(0, full.find('#')));
        std::string tok, partial;
        in >> partial;
        for (size_t k = 0; in >> tok; ++k)
          if (k != i) partial += ' ' + tok;
        try {
          (void)assemble_line(partial, hw);
          ADD_FAILURE() << "no error for " << partial;
        } catch (const Error& e) {
          EXPECT_EQ(e.parameter(), "fields") << e.what();
          EXPECT_NE(e.value().find("'" + partial + "'"), std::string::npos) << e.what();
          EXPECT_NE(e.value().find("1 missing: " + std::string(fs[i].name) + ")"),
                    std::string::npos)
              << e.what();
        }
      }
    }
  EXPECT_GT(cases, 100);
  // The op alone: all fields listed, and assemble() adds the line number.
  try {
    assemble("# header\n\nAVGP\n", kPublic);
    FAIL() << "AVGP alone assembled";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "line 3: fields") << e.what();
    const size_t n = fields(Format::pool64).size();
    EXPECT_NE(e.value().find(std::to_string(n) + " missing: xphs_addr xphs_len"), std::string::npos)
        << e.what();
    EXPECT_NE(e.value().find(" strideH strideW "), std::string::npos) << e.what();
  }
  // An op without fields needs none.
  EXPECT_EQ(assemble_line("NONE", kPublic), Instruction(OpCode::none));
}

}  // namespace
}  // namespace test_ghp_isa
}  // namespace npukit::ghp
