// The text form of GHP-FPGA instructions: "OP name=real[:stored] ... # facts".
#include <charconv>
#include <cstdio>
#include <sstream>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"

namespace npukit::ghp {

namespace {

std::string facts(const Instruction& ins, const HwConfig& hw) {
  char buf[256];
  if (ins.op == OpCode::maxp || ins.op == OpCode::avgp) {
    try {
      const PoolInstructionGeometry g = pool_instruction_geometry(ins, hw);
      std::snprintf(
          buf, sizeof buf, "C=%lld INH=%lld INW=%lld OH=%lld OW=%lld N=%lld -N*X_z=%lld M=%.17g",
          static_cast<long long>(g.C), static_cast<long long>(g.INH), static_cast<long long>(g.INW),
          static_cast<long long>(g.OH), static_cast<long long>(g.OW),
          static_cast<long long>(g.KH * g.KW), static_cast<long long>(g.neg_NXz),
          Multiplier{static_cast<int64_t>(ins[f64::m1]), static_cast<int>(ins[f64::n1]) + 1}
              .value());
      return buf;
    } catch (const Error& e) {
      return std::string("invalid: ") + e.what();
    }
  }
  if (ins.op == OpCode::add) {
    const int n = static_cast<int>(ins[fadd::n]) + 1;
    std::snprintf(buf, sizeof buf, "elements=%lld M1=%.17g M2=%.17g",
                  static_cast<long long>((static_cast<int64_t>(ins[fadd::len]) + 1) * hw.S * hw.R),
                  Multiplier{static_cast<int64_t>(ins[fadd::m1]), n}.value(),
                  Multiplier{static_cast<int64_t>(ins[fadd::m2]), n}.value());
    return buf;
  }
  return "";
}

int64_t parse_int(const std::string& s, const std::string& field) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
    fail("npukit::ghp::assemble_line", field, "'" + s + "'", "a decimal integer");
  return v;
}

}  // namespace

std::string disassemble(const Instruction& ins, const HwConfig& hw) {
  check_widths(ins);
  std::string s = op_name(ins.op);
  const auto& fs = fields(ins.format());
  for (size_t i = 0; i < fs.size(); ++i) {
    const int64_t real = real_field(ins.format(), static_cast<int>(i), ins.values[i], hw);
    s += ' ';
    s += fs[i].name;
    s += '=';
    s += std::to_string(real);
    if (real != static_cast<int64_t>(ins.values[i])) {
      s += ':';
      s += std::to_string(ins.values[i]);
    }
  }
  const std::string f = facts(ins, hw);
  if (!f.empty()) {
    s += "  # ";
    s += f;
  }
  return s;
}

Instruction assemble_line(const std::string& line, const HwConfig& hw) {
  constexpr const char* fn = "npukit::ghp::assemble_line";
  const std::string code = line.substr(0, line.find('#'));
  std::istringstream in(code);
  std::string tok;
  check(static_cast<bool>(in >> tok), fn, "line", "'" + line + "'", "an op name and fields");
  Instruction ins(op_from_name(tok));
  std::vector<bool> seen(ins.values.size(), false);
  while (in >> tok) {
    const size_t eq = tok.find('=');
    check(eq != std::string::npos && eq > 0, fn, "token", "'" + tok + "'", "name=value");
    const std::string name = tok.substr(0, eq), value = tok.substr(eq + 1);
    const int i = field_index(ins.format(), name);
    if (seen[static_cast<size_t>(i)]) fail(fn, name, "given twice", "once");
    seen[static_cast<size_t>(i)] = true;
    const size_t colon = value.find(':');
    const int64_t real = parse_int(value.substr(0, colon), name);
    ins.values[static_cast<size_t>(i)] = encode_field(ins.format(), i, real, hw);
    if (colon != std::string::npos) {
      const int64_t stored = parse_int(value.substr(colon + 1), name);
      if (stored != static_cast<int64_t>(ins.values[static_cast<size_t>(i)]))
        fail(fn, name, value,
             "real:stored with stored = " + std::to_string(ins.values[static_cast<size_t>(i)]));
    }
  }
  // A field left out would silently be 0 (strideH=0, KH=1, ...): the text
  // form names every field of its op, as disassemble writes it.
  const auto& fs = fields(ins.format());
  std::string missing;
  size_t n_missing = 0;
  for (size_t i = 0; i < fs.size(); ++i)
    if (!seen[i]) {
      if (n_missing++) missing += ' ';
      missing += fs[i].name;
    }
  if (n_missing)
    fail(fn, "fields",
         "'" + line + "' (" + std::to_string(n_missing) + " missing: " + missing + ")",
         "all " + std::to_string(fs.size()) + " fields of " + op_name(ins.op) +
             " as name=value, as disassemble writes them");
  return ins;
}

std::vector<Instruction> assemble(const std::string& text, const HwConfig& hw) {
  std::vector<Instruction> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line[line.find_first_not_of(" \t\r")] == '#') continue;
    try {
      out.push_back(assemble_line(line, hw));
    } catch (const Error& e) {
      fail(e.function(), "line " + std::to_string(number) + ": " + e.parameter(), e.value(),
           e.allowed());
    }
  }
  return out;
}

}  // namespace npukit::ghp
