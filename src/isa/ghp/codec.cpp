// GHP-FPGA instructions <-> bytes, and the testbench's ins.txt lines.
#include <charconv>
#include <fstream>
#include <sstream>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/read_file.hpp"

namespace npukit::ghp {

namespace {

uint64_t width_mask(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

}  // namespace

void check_widths(const Instruction& ins) {
  constexpr const char* fn = "npukit::ghp::check_widths";
  const auto& fs = fields(ins.format());
  check(ins.values.size() == fs.size(), fn, "values", std::to_string(ins.values.size()) + " fields",
        std::to_string(fs.size()) + " for " + op_name(ins.op));
  for (size_t i = 0; i < fs.size(); ++i)
    if (ins.values[i] > width_mask(fs[i].bits))
      fail(fn, std::string(op_name(ins.op)) + "." + fs[i].name, std::to_string(ins.values[i]),
           "[0, " + std::to_string(width_mask(fs[i].bits)) + "] (" + std::to_string(fs[i].bits) +
               "-bit field)");
}

std::vector<uint8_t> encode(const Instruction& ins) {
  check_widths(ins);
  std::vector<uint8_t> out(static_cast<size_t>(instruction_bytes(ins.format())), 0);
  out[0] = static_cast<uint8_t>(ins.op);
  const auto& fs = fields(ins.format());
  for (size_t i = 0; i < fs.size(); ++i) {
    const FieldSpec& f = fs[i];
    if (f.bits < 8) {  // a nibble sharing its byte
      out[static_cast<size_t>(f.byte)] |= static_cast<uint8_t>(ins.values[i] << f.shift);
      continue;
    }
    for (int b = 0; b < f.bits / 8; ++b)
      out[static_cast<size_t>(f.byte + b)] = static_cast<uint8_t>(ins.values[i] >> (8 * b));
  }
  return out;
}

std::vector<uint8_t> encode_stream(const std::vector<Instruction>& program) {
  std::vector<uint8_t> out;
  for (const Instruction& ins : program) {
    const std::vector<uint8_t> b = encode(ins);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

Instruction decode(const uint8_t* data, size_t size, size_t* size_out) {
  constexpr const char* fn = "npukit::ghp::decode";
  check(size >= 1, fn, "size", "0 bytes", "at least 1 (the op_type byte)");
  Instruction ins(op_from_code(data[0]));
  const auto need = static_cast<size_t>(instruction_bytes(ins.format()));
  check(size >= need, fn, "size", std::to_string(size) + " bytes",
        "at least " + std::to_string(need) + " for " + op_name(ins.op));
  const auto& fs = fields(ins.format());
  for (size_t i = 0; i < fs.size(); ++i) {
    const FieldSpec& f = fs[i];
    uint64_t v = 0;
    if (f.bits < 8) {
      v = (data[f.byte] >> f.shift) & width_mask(f.bits);
    } else {
      for (int b = f.bits / 8 - 1; b >= 0; --b) v = (v << 8) | data[f.byte + b];
    }
    ins.values[i] = v;
  }
  if (size_out) *size_out = need;
  return ins;
}

std::vector<Instruction> decode_stream(const std::vector<uint8_t>& bytes) {
  std::vector<Instruction> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t used = 0;
    try {
      out.push_back(decode(bytes.data() + pos, bytes.size() - pos, &used));
    } catch (const Error& e) {
      fail("npukit::ghp::decode_stream", "byte " + std::to_string(pos), e.value(),
           e.allowed() + " (" + e.parameter() + ")");
    }
    pos += used;
  }
  return out;
}

std::string ins_txt_line(const Instruction& ins) {
  check_widths(ins);
  std::string s;
  for (uint64_t v : ins.values) {
    if (!s.empty()) s += ' ';
    s += std::to_string(v);
  }
  return s;
}

Instruction parse_ins_txt_line(const std::string& line, OpCode op) {
  constexpr const char* fn = "npukit::ghp::parse_ins_txt_line";
  std::istringstream in(line);
  std::vector<uint64_t> nums;
  std::string tok;
  while (in >> tok) {
    uint64_t v = 0;
    const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    check(r.ec == std::errc() && r.ptr == tok.data() + tok.size(), fn, "token", "'" + tok + "'",
          "a non-negative decimal number");
    nums.push_back(v);
  }
  if (nums.size() == fields(Format::add).size()) op = OpCode::add;
  if (nums.size() == fields(Format::remap).size()) op = OpCode::remap;
  check(format_of(op) != Format::pool64 || nums.size() == fields(Format::pool64).size(), fn, "line",
        std::to_string(nums.size()) + " numbers", "35 (CONV/MAXP/AVGP/FC), 10 (ADD) or 7 (REMAP)");
  check(format_of(op) != Format::none, fn, "op", op_name(op), "an op with fields");
  Instruction ins(op);
  ins.values = nums;
  check_widths(ins);
  return ins;
}

std::vector<std::string> read_lines(const std::string& path) {
  const std::vector<char> bytes = read_file_bounded("npukit::ghp::read_lines", "path", path,
                                                    kMaxTextFileBytes, "a readable text file");
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace npukit::ghp
