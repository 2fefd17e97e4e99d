// Instructions of the GHP-FPGA CNN accelerator (seed 000, docs/ghp-isa.md, "The arithmetic"):
// field tables, encode/decode, a text form, the testbench's ins.txt lines,
// hardware configurations, lowering from ONNX-level parameters and bit-exact
// execution of AVGP, MAXP and ADD through npukit/quant/ghp.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "npukit/profile.hpp"
#include "npukit/quant/ghp.hpp"
#include "npukit/tensor.hpp"
#include "npukit/window.hpp"

namespace npukit::ghp {

// ---------------------------------------------------------------- op codes ---
enum class OpCode : uint8_t {
  conv = 1,
  maxp = 2,
  avgp = 3,
  add = 4,
  remap = 5,
  fc = 6,
  none = 0xFF
};
const char* op_name(OpCode op);                // "CONV", "MAXP", ..., "NONE"
OpCode op_from_name(const std::string& name);  // case-insensitive; throws naming the choices
OpCode op_from_code(uint64_t code);            // throws unless a known code

// The instruction formats: CONV/MAXP/AVGP/FC share seed 000's 64-byte table.
enum class Format : uint8_t { pool64, add, remap, none };
Format format_of(OpCode op);

// ------------------------------------------------------------ hardware ---
// Build parameters: M (conv columns), P (outputs per round), Q (input words
// per packet), R (rows per RTM word), S (channels per RTM word).
struct HwConfig {
  std::string name;
  int64_t M = 64, P = 64, Q = 16, R = 16, S = 8;
};
// "seed" (M64P64Q16R32S4: seed 000 is written for S = 4, R = 32),
// "M64P64Q16R16S8" (the build whose testbench vectors are public), or any
// "M<m>P<p>Q<q>R<r>S<s>" name with positive numbers.
HwConfig hw_preset(const std::string& name);
std::vector<std::string> hw_preset_names();

// -------------------------------------------------------------- fields ---
// How a field's real value maps to what the instruction stores.
enum class Encoding : uint8_t {
  raw,              // stored as is
  minus_one,        // stored value = real - 1 (KH, KW, xphs_len, n1, len, n)
  div_s_minus_one,  // stored value = real / S - 1 (INC; real must be a multiple of S)
};

struct FieldSpec {
  const char* name;
  int bits;   // width in the instruction
  int byte;   // first byte (little-endian)
  int shift;  // bit offset inside that byte (4 for strideW and padU, else 0)
  Encoding encoding;
  const char* note;
};

// Fields after op_type, in table (and ins.txt) order; op_type is byte 0.
const std::vector<FieldSpec>& fields(Format format);
int instruction_bytes(Format format);                   // 64, 29, 21, 1
int field_index(Format format, std::string_view name);  // throws naming the format's fields

// Field indices of the 64-byte layout (fields(Format::pool64) order).
namespace f64 {
enum : int {
  xphs_addr,
  xphs_len,
  W_addr,
  W_n_bytes,
  B_addr,
  X_addr,
  Y_addr,
  OC,
  INC,
  INW_,
  KH,
  KW,
  strideH,
  strideW,
  padL,
  padU,
  INH2,
  INW2,
  ifm_height,
  ofm_height,
  n_last_batch,
  n_W_round,
  row_bound,
  col_bound,
  vec_size,
  vec_size_minus_1,
  X_z,
  W_z,
  Y_z,
  m1,
  n1,
  obj1,
  obj2,
  obj3,
  obj4,
  count
};
}
// Field indices of the ADD layout.
namespace fadd {
enum : int { A_addr, B_addr, C_addr, len, m1, m2, n, A_z, B_z, C_z, count };
}
// Field indices of the REMAP layout.
namespace fremap {
enum : int { X_addr, Y_addr, len, m1, n1, X_z, Y_z, count };
}

// One instruction: its op code and the stored (encoded) value of every field.
struct Instruction {
  OpCode op = OpCode::none;
  std::vector<uint64_t> values;  // fields(format_of(op)).size() entries

  Instruction() = default;
  explicit Instruction(OpCode op_code);  // all fields 0
  Format format() const { return format_of(op); }
  uint64_t operator[](int i) const { return values.at(static_cast<size_t>(i)); }
  uint64_t& operator[](int i) { return values.at(static_cast<size_t>(i)); }
  uint64_t get(std::string_view name) const;
  void set(std::string_view name, uint64_t value);
  bool operator==(const Instruction&) const = default;
};

// Real value <-> stored value of field i (the S of `hw` is used for INC).
uint64_t encode_field(Format format, int i, int64_t real, const HwConfig& hw);
int64_t real_field(Format format, int i, uint64_t stored, const HwConfig& hw);

// ----------------------------------------------------------------- bytes ---
// Checks every field against its width (npukit::Error naming the field).
void check_widths(const Instruction& ins);
std::vector<uint8_t> encode(const Instruction& ins);
std::vector<uint8_t> encode_stream(const std::vector<Instruction>& program);
// Decodes one instruction at `data`; *size_out receives its length.
Instruction decode(const uint8_t* data, size_t size, size_t* size_out = nullptr);
std::vector<Instruction> decode_stream(const std::vector<uint8_t>& bytes);

// ----------------------------------------------------- testbench ins.txt ---
// One line = the fields after op_type, decimal, space separated, stored values.
std::string ins_txt_line(const Instruction& ins);
// The op is not in the line; 35 numbers need `op` (CONV/MAXP/AVGP/FC), 10 are
// ADD and 7 are REMAP.
Instruction parse_ins_txt_line(const std::string& line, OpCode op);
std::vector<std::string> read_lines(const std::string& path);  // throws if unreadable

// ------------------------------------------------------------------ text ---
// One instruction per line: "AVGP xphs_addr=0 xphs_len=1:0 ... KH=2:1 ...".
// Values are real values; where the stored value differs it follows a colon.
// The assembler accepts name=real or name=real:stored (checked), '#' starts a
// comment. Every field of the op must be named (a line that leaves one out
// is an Error listing the missing names, never a silent 0). Derived facts
// (shapes, N, M) are appended by the disassembler as a comment.
std::string disassemble(const Instruction& ins, const HwConfig& hw);
Instruction assemble_line(const std::string& line, const HwConfig& hw);
std::vector<Instruction> assemble(const std::string& text, const HwConfig& hw);

// ------------------------------------------------------------ validation ---
// Widths plus the meaning of every field the hardware uses: strides 1..15,
// m1 < 2^26, n1 in [1, 64] (6-bit shift port), OC a multiple of S, INH >= 1,
// bounds divisible by the strides, ... Throws npukit::Error naming field, value, limit.
void validate(const Instruction& ins, const HwConfig& hw);
// The derived fields that a compiler must fill consistently (vec_size,
// heights, n_last_batch, xphs_len, obj1/obj2, ...): one message per mismatch.
std::vector<std::string> consistency_problems(const Instruction& ins, const HwConfig& hw);

// What a pool instruction (MAXP/AVGP) means, derived from its fields alone.
struct PoolInstructionGeometry {
  int64_t C = 0, INH = 0, INW = 0, OH = 0, OW = 0;
  int64_t KH = 0, KW = 0, strideH = 0, strideW = 0, padU = 0, padL = 0;
  int64_t neg_NXz = 0;  // signed 16-bit {obj2, obj1}
};
PoolInstructionGeometry pool_instruction_geometry(const Instruction& ins,
                                                  const HwConfig& hw);  // validates

// -------------------------------------------------------------- lowering ---
struct Addresses {
  uint64_t xphs_addr = 0, x_addr = 0, y_addr = 0;
};

// ONNX attributes of an average or max pool (NCHW, N = 1).
struct PoolAttrs {
  std::vector<int64_t> kernel_shape;  // [kh, kw]
  std::vector<int64_t> strides;       // [sh, sw], default 1
  std::vector<int64_t> pads;          // [top, left, bottom, right], default 0
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
  int64_t count_include_pad = 1;   // the hardware supports only 1
  std::vector<int64_t> dilations;  // must be 1
};

struct QuantParams {
  double x_scale = 1.0;
  int x_zp = 0;
  double y_scale = 1.0;
  int y_zp = 0;
};

// x_shape is (1, C, H, W) with C a multiple of S.
Instruction lower_qlinear_average_pool(const Shape& x_shape, const PoolAttrs& attrs,
                                       const QuantParams& q, const Addresses& addr,
                                       const HwConfig& hw);
Instruction lower_qlinear_global_average_pool(const Shape& x_shape, const QuantParams& q,
                                              const Addresses& addr, const HwConfig& hw);
Instruction lower_max_pool(const Shape& x_shape, const PoolAttrs& attrs, const Addresses& addr,
                           const HwConfig& hw);

struct AddAddresses {
  uint64_t a_addr = 0, b_addr = 0, c_addr = 0;
};
struct AddQuant {
  double a_scale = 1.0;
  int a_zp = 0;
  double b_scale = 1.0;
  int b_zp = 0;
  double c_scale = 1.0;
  int c_zp = 0;
};
// `elements` = numel of A (= B = C), a multiple of S*R (one RTM row).
Instruction lower_qlinear_add(int64_t elements, const AddQuant& q, const AddAddresses& addr,
                              const HwConfig& hw);

// The output window of a pool: ONNX shape rule, ceil_mode turned into extra end pads.
Window2d pool_window(const Shape& x_shape, const PoolAttrs& attrs, const char* function);

// ------------------------------------------------------------- execution ---
// Input/output shapes of an instruction (from its fields alone).
Shape input_shape(const Instruction& ins, const HwConfig& hw);  // (1, C, INH, INW) or (elements)
Shape output_shape(const Instruction& ins, const HwConfig& hw);
// AVGP and MAXP: x u8 (1, C, INH, INW) -> y u8 (1, C, OH, OW).
void execute_pool(const Instruction& ins, const TensorView& x, const TensorView& y,
                  const HwConfig& hw, Profile profile = Profile::ghp_rtl);
// ADD: a, b, c u8 vectors of (len + 1) * S * R elements.
void execute_add(const Instruction& ins, const TensorView& a, const TensorView& b,
                 const TensorView& c, const HwConfig& hw, Profile profile = Profile::ghp_rtl);

// --------------------------------------------------------- test vectors ---
// One testbench case: an ONNX-level pool or add plus its data.
struct GoldenCase {
  std::string op = "avgp";      // avgp, gavgp (global), maxp, add
  int64_t C = 8, H = 8, W = 8;  // for add: elements = C*H*W
  PoolAttrs attrs;
  QuantParams q;              // avgp/gavgp
  AddQuant add_q;             // add
  uint64_t seed = 0;          // random data when `data` is empty
  std::vector<uint8_t> data;  // given X (or A followed by B for add)
};
struct GoldenResult {
  Instruction ins;
  std::vector<uint8_t> x, x2, y;  // x2: B of an add
  Shape x_shape, y_shape;
};
// Lowers every case with consecutive addresses (as the public generator does)
// and executes it under `profile`.
std::vector<GoldenResult> make_golden(const std::vector<GoldenCase>& cases, const HwConfig& hw,
                                      Profile profile = Profile::ghp_rtl);

}  // namespace npukit::ghp
