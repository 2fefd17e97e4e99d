// GHP-FPGA instruction formats: op codes, field tables, hardware presets and
// the real <-> stored value of each field.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"

namespace npukit::ghp {

namespace {

constexpr Encoding raw = Encoding::raw;
constexpr Encoding m1e = Encoding::minus_one;

// Seed 000's table. Byte offsets follow from the widths (byte 0 is op_type);
// strideH/strideW share byte 31 and padL/padU byte 32 (high nibble second).
const std::vector<FieldSpec> kPool64 = {
    {"xphs_addr", 16, 1, 0, raw, "X packet headers address"},
    {"xphs_len", 16, 3, 0, m1e, "number of X packet headers (rounds of P outputs)"},
    {"W_addr", 32, 5, 0, raw, "not used by pooling"},
    {"W_n_bytes", 32, 9, 0, raw, "not used by pooling"},
    {"B_addr", 16, 13, 0, raw, "not used by pooling"},
    {"X_addr", 32, 15, 0, raw, "input tensor address (RTM rows)"},
    {"Y_addr", 32, 19, 0, raw, "output tensor address (RTM rows)"},
    {"OC", 16, 23, 0, raw, "output channels"},
    {"INC", 16, 25, 0, Encoding::div_s_minus_one, "input channels, stored INC/S - 1"},
    {"INW_", 16, 27, 0, raw, "input width"},
    {"KH", 8, 29, 0, m1e, "kernel height"},
    {"KW", 8, 30, 0, m1e, "kernel width"},
    {"strideH", 4, 31, 0, raw, "vertical stride"},
    {"strideW", 4, 31, 4, raw, "horizontal stride"},
    {"padL", 4, 32, 0, raw, "left padding"},
    {"padU", 4, 32, 4, raw, "top padding"},
    {"INH2", 16, 33, 0, raw, "INH + padU"},
    {"INW2", 16, 35, 0, raw, "INW + padL"},
    {"ifm_height", 16, 37, 0, raw, "ceil(INH*INW / R)"},
    {"ofm_height", 16, 39, 0, raw, "ceil(OH*OW / R)"},
    {"n_last_batch", 8, 41, 0, raw, "ceil((OH*OW - (ceil(OH*OW/P) - 1)*P) / R)"},
    {"n_W_round", 16, 42, 0, raw, "not used by pooling"},
    {"row_bound", 16, 44, 0, raw, "(OH - 1) * strideH"},
    {"col_bound", 16, 46, 0, raw, "(OW - 1) * strideW"},
    {"vec_size", 16, 48, 0, raw, "KH*KW"},
    {"vec_size_minus_1", 16, 50, 0, raw, "KH*KW - 1"},
    {"X_z", 8, 52, 0, raw, "input zero point (what padding reads)"},
    {"W_z", 8, 53, 0, raw, "not used by pooling"},
    {"Y_z", 8, 54, 0, raw, "output zero point"},
    {"m1", 32, 55, 0, raw, "multiplier, M = m1 * 2^-n1 (26 bits used)"},
    {"n1", 8, 59, 0, m1e, "shift, stored n1 - 1"},
    {"obj1", 8, 60, 0, raw, "low byte of -N*X_z"},
    {"obj2", 8, 61, 0, raw, "high byte of -N*X_z"},
    {"obj3", 8, 62, 0, raw, "not used by pooling"},
    {"obj4", 8, 63, 0, raw, "not used by pooling"},
};

// The compiler's Add instruction (Python/be/ins.py of the public repository).
const std::vector<FieldSpec> kAdd = {
    {"A_addr", 32, 1, 0, raw, "first input address (RTM rows)"},
    {"B_addr", 32, 5, 0, raw, "second input address (RTM rows)"},
    {"C_addr", 32, 9, 0, raw, "output address (RTM rows)"},
    {"len", 32, 13, 0, m1e, "RTM rows of S*R elements"},
    {"m1", 32, 17, 0, raw, "multiplier of A - A_z (26 bits used)"},
    {"m2", 32, 21, 0, raw, "multiplier of B - B_z (26 bits used)"},
    {"n", 8, 25, 0, m1e, "shared shift, stored n - 1"},
    {"A_z", 8, 26, 0, raw, "zero point of A"},
    {"B_z", 8, 27, 0, raw, "zero point of B"},
    {"C_z", 8, 28, 0, raw, "zero point of C"},
};

// The compiler's Remap instruction (QLinearConcat requantization).
const std::vector<FieldSpec> kRemap = {
    {"X_addr", 32, 1, 0, raw, "input address (RTM rows)"},
    {"Y_addr", 32, 5, 0, raw, "output address (RTM rows)"},
    {"len", 32, 9, 0, m1e, "RTM rows of S*R elements"},
    {"m1", 32, 13, 0, raw, "multiplier (26 bits used)"},
    {"n1", 8, 17, 0, m1e, "shift, stored n1 - 1"},
    {"X_z", 16, 18, 0, raw, "input zero point (the compiler stores -X_z, the testbench X_z)"},
    {"Y_z", 8, 20, 0, raw, "output zero point"},
};

const std::vector<FieldSpec> kNone = {};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* op_name(OpCode op) {
  switch (op) {
    case OpCode::conv:
      return "CONV";
    case OpCode::maxp:
      return "MAXP";
    case OpCode::avgp:
      return "AVGP";
    case OpCode::add:
      return "ADD";
    case OpCode::remap:
      return "REMAP";
    case OpCode::fc:
      return "FC";
    case OpCode::none:
      return "NONE";
  }
  return "INVALID";
}

OpCode op_from_name(const std::string& name) {
  for (OpCode op : {OpCode::conv, OpCode::maxp, OpCode::avgp, OpCode::add, OpCode::remap,
                    OpCode::fc, OpCode::none})
    if (lower(name) == lower(op_name(op))) return op;
  fail("npukit::ghp::op_from_name", "op", "'" + name + "'",
       "CONV, MAXP, AVGP, ADD, REMAP, FC, NONE");
}

OpCode op_from_code(uint64_t code) {
  if ((code >= 1 && code <= 6) || code == 0xFF) return static_cast<OpCode>(code);
  fail("npukit::ghp::op_from_code", "op_type", std::to_string(code),
       "1 (CONV), 2 (MAXP), 3 (AVGP), 4 (ADD), 5 (REMAP), 6 (FC), 255 (NONE)");
}

Format format_of(OpCode op) {
  switch (op) {
    case OpCode::add:
      return Format::add;
    case OpCode::remap:
      return Format::remap;
    case OpCode::none:
      return Format::none;
    default:
      return Format::pool64;
  }
}

const std::vector<FieldSpec>& fields(Format format) {
  switch (format) {
    case Format::pool64:
      return kPool64;
    case Format::add:
      return kAdd;
    case Format::remap:
      return kRemap;
    case Format::none:
      return kNone;
  }
  return kNone;
}

int instruction_bytes(Format format) {
  switch (format) {
    case Format::pool64:
      return 64;
    case Format::add:
      return 29;
    case Format::remap:
      return 21;
    case Format::none:
      return 1;
  }
  return 1;
}

int field_index(Format format, std::string_view name) {
  const auto& fs = fields(format);
  for (size_t i = 0; i < fs.size(); ++i)
    if (name == fs[i].name) return static_cast<int>(i);
  std::string names;
  for (const auto& f : fs) {
    if (!names.empty()) names += ", ";
    names += f.name;
  }
  std::string quoted(1, '\'');
  quoted.append(name).push_back('\'');
  fail("npukit::ghp::field_index", "field", quoted,
       names.empty() ? "none (this op has no fields)" : names);
}

Instruction::Instruction(OpCode op_code)
    : op(op_code), values(fields(format_of(op_code)).size(), 0) {}

uint64_t Instruction::get(std::string_view name) const {
  return (*this)[field_index(format(), name)];
}

void Instruction::set(std::string_view name, uint64_t value) {
  (*this)[field_index(format(), name)] = value;
}

HwConfig hw_preset(const std::string& name) {
  constexpr const char* fn = "npukit::ghp::hw_preset";
  if (name == "seed") return {"seed", 64, 64, 16, 32, 4};
  static const std::regex pattern("M([0-9]+)P([0-9]+)Q([0-9]+)R([0-9]+)S([0-9]+)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern))
    fail(fn, "name", "'" + name + "'", "seed, M64P64Q16R16S8 or M<m>P<p>Q<q>R<r>S<s>");
  auto num = [&](int i, const char* what) {
    const std::string s = m[i].str();
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || v < 1 || v > 4096)
      fail(fn, what, s + " in '" + name + "'", "[1, 4096]");
    return v;
  };
  HwConfig hw{name, num(1, "M"), num(2, "P"), num(3, "Q"), num(4, "R"), num(5, "S")};
  return hw;
}

std::vector<std::string> hw_preset_names() {
  return {"seed", "M64P64Q16R16S8"};
}

uint64_t encode_field(Format format, int i, int64_t real, const HwConfig& hw) {
  constexpr const char* fn = "npukit::ghp::encode_field";
  const FieldSpec& f = fields(format).at(static_cast<size_t>(i));
  const int64_t max_stored = f.bits >= 63 ? INT64_MAX : (int64_t{1} << f.bits) - 1;
  switch (f.encoding) {
    case Encoding::raw:
      check_range(fn, f.name, real, 0, max_stored);
      return static_cast<uint64_t>(real);
    case Encoding::minus_one:
      check_range(fn, f.name, real, 1, max_stored + 1);
      return static_cast<uint64_t>(real - 1);
    case Encoding::div_s_minus_one:
      check(real >= hw.S && real % hw.S == 0, fn, f.name, std::to_string(real),
            "a positive multiple of S = " + std::to_string(hw.S) + " (stored INC/S - 1)");
      check_range(fn, f.name, real / hw.S - 1, 0, max_stored);
      return static_cast<uint64_t>(real / hw.S - 1);
  }
  return 0;
}

int64_t real_field(Format format, int i, uint64_t stored, const HwConfig& hw) {
  const FieldSpec& f = fields(format).at(static_cast<size_t>(i));
  const auto v = static_cast<int64_t>(stored);
  switch (f.encoding) {
    case Encoding::raw:
      return v;
    case Encoding::minus_one:
      return v + 1;
    case Encoding::div_s_minus_one:
      return (v + 1) * hw.S;
  }
  return v;
}

}  // namespace npukit::ghp
