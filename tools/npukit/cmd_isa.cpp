// `npukit isa ...`: GHP-FPGA instructions from the command line (a face: it
// reads files, calls npukit::ghp and writes files; no arithmetic here).
#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "commands.hpp"
#include "isa_files.hpp"
#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/memory_budget.hpp"

namespace npukit::cli {

namespace {

using namespace npukit::ghp;

struct ProgramSource {
  std::string ins_txt, asm_file, bin_file, op = "avgp";
};

void add_source_options(CLI::App* cmd, ProgramSource& src) {
  cmd->add_option("--ins-txt", src.ins_txt,
                  "Testbench ins.txt (fields after op_type, one line each)");
  cmd->add_option("--asm", src.asm_file, "Text form (one 'OP name=value ...' line each)");
  cmd->add_option("--bin", src.bin_file, "Binary instruction stream");
  cmd->add_option("--op", src.op,
                  "Op of 35-number ins.txt lines: avgp (default), maxp, conv, fc "
                  "(10 numbers are ADD, 7 are REMAP)");
}

std::vector<Instruction> load_program(const ProgramSource& src, const HwConfig& hw) {
  const int given = !src.ins_txt.empty() + !src.asm_file.empty() + !src.bin_file.empty();
  if (given != 1)
    fail("npukit isa", "input", std::to_string(given) + " of --ins-txt/--asm/--bin", "exactly one");
  std::vector<Instruction> program;
  if (!src.ins_txt.empty()) {
    const OpCode op = op_from_name(src.op);
    int number = 0;
    for (const std::string& line : read_lines(src.ins_txt)) {
      ++number;
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      try {
        program.push_back(parse_ins_txt_line(line, op));
      } catch (const Error& e) {
        fail(e.function(), src.ins_txt + " line " + std::to_string(number) + ": " + e.parameter(),
             e.value(), e.allowed());
      }
    }
  } else if (!src.asm_file.empty()) {
    program = assemble(read_text(src.asm_file), hw);
  } else {
    program = decode_stream(read_bytes(src.bin_file));
  }
  return program;
}

void run_exec(const ProgramSource& src, int64_t line, const std::string& input,
              const std::string& input_b, const std::string& output, const std::string& hw_name,
              const std::string& profile_name_) {
  const HwConfig hw = hw_preset(hw_name);
  const Profile profile = profile_from_name(profile_name_);
  post_rounding_for(profile);  // only ghp_rtl and ghp_golden
  const std::vector<Instruction> program = load_program(src, hw);
  if (line < 0 || line >= static_cast<int64_t>(program.size()))
    fail("npukit isa exec", "--line", std::to_string(line),
         range_text(0, static_cast<int64_t>(program.size()) - 1) + " (0-based, " +
             std::to_string(program.size()) + " instructions)");
  const Instruction& ins = program[static_cast<size_t>(line)];
  const Shape xs = input_shape(ins, hw), ys = output_shape(ins, hw);
  std::vector<uint8_t> x = read_bytes(input);
  if (static_cast<int64_t>(x.size()) != shape_numel(xs))
    fail("npukit isa exec", "--input", input + " (" + std::to_string(x.size()) + " bytes)",
         std::to_string(shape_numel(xs)) + " bytes: uint8 " + shape_text(xs) +
             " from the instruction's fields");
  // The fields (pads, strides) can describe an output far larger than the
  // input: bound it before allocating and writing it.
  const uint64_t y_bytes = static_cast<uint64_t>(shape_numel(ys));
  const uint64_t y_max = 256 * static_cast<uint64_t>(x.size()) + (uint64_t{1} << 20);
  if (y_bytes > y_max)
    fail("npukit isa exec", "--line",
         std::to_string(line) + " (output uint8 " + shape_text(ys) + ": " +
             std::to_string(y_bytes) + " bytes)",
         "an instruction whose output is at most 256 x its input + 1 MiB (" +
             std::to_string(y_max) + " bytes)");
  check_allocation("npukit isa exec", "--line", "output uint8 " + shape_text(ys), y_bytes, 1);
  std::vector<uint8_t> y(static_cast<size_t>(y_bytes));
  if (ins.op == OpCode::add) {
    if (input_b.empty())
      fail("npukit isa exec", "--input-b", "missing", "the B operand of an ADD instruction");
    std::vector<uint8_t> b = read_bytes(input_b);
    if (b.size() != x.size())
      fail("npukit isa exec", "--input-b", input_b + " (" + std::to_string(b.size()) + " bytes)",
           std::to_string(x.size()) + " bytes");
    execute_add(ins, TensorView::contiguous(x.data(), DType::u8, xs),
                TensorView::contiguous(b.data(), DType::u8, xs),
                TensorView::contiguous(y.data(), DType::u8, ys), hw, profile);
  } else if (ins.op == OpCode::avgp || ins.op == OpCode::maxp) {
    execute_pool(ins, TensorView::contiguous(x.data(), DType::u8, xs),
                 TensorView::contiguous(y.data(), DType::u8, ys), hw, profile);
  } else {
    fail("npukit isa exec", "op", op_name(ins.op), "AVGP, MAXP or ADD");
  }
  write_bytes(output, y);
  fmt::print("{} {} -> {} ({}, {})\n", op_name(ins.op), shape_text(xs), shape_text(ys),
             profile_name(profile), hw.name);
}

void run_encode(const ProgramSource& src, const std::string& output, const std::string& hw_name) {
  const HwConfig hw = hw_preset(hw_name);
  const std::vector<Instruction> program = load_program(src, hw);
  for (const Instruction& ins : program) validate(ins, hw);
  write_bytes(output, encode_stream(program));
  fmt::print("{} instructions, {} bytes -> {}\n", program.size(), encode_stream(program).size(),
             output);
}

// Writes every instruction, then reports the invalid ones on stderr and
// returns 1 if there were any (scripts rely on the status, as with info).
int run_decode(const ProgramSource& src, const std::string& output, const std::string& format,
               const std::string& hw_name) {
  const HwConfig hw = hw_preset(hw_name);
  if (format != "asm" && format != "ins-txt")
    fail("npukit isa decode", "--format", "'" + format + "'", "asm or ins-txt");
  std::string text;
  std::vector<std::string> invalid;
  const std::vector<Instruction> program = load_program(src, hw);
  for (size_t k = 0; k < program.size(); ++k) {
    const Instruction& ins = program[k];
    text += format == "asm" ? disassemble(ins, hw) : ins_txt_line(ins);
    text += '\n';
    try {
      validate(ins, hw);
    } catch (const Error& e) {
      invalid.push_back(fmt::format("instruction {} ({}): {}", k, op_name(ins.op), e.what()));
    }
  }
  if (output.empty() || output == "-")
    fmt::print("{}", text);
  else
    write_text(output, text);
  for (const std::string& p : invalid) fmt::print(stderr, "npukit isa decode: invalid {}\n", p);
  if (!invalid.empty())
    fmt::print(stderr, "npukit isa decode: {} of {} instructions invalid (hardware {})\n",
               invalid.size(), program.size(), hw.name);
  return invalid.empty() ? 0 : 1;
}

int run_disasm(const ProgramSource& src, const std::string& hw_name) {
  const HwConfig hw = hw_preset(hw_name);
  const std::vector<Instruction> program = load_program(src, hw);
  int problems = 0;
  size_t offset = 0;
  for (size_t k = 0; k < program.size(); ++k) {
    const Instruction& ins = program[k];
    fmt::print("# [{}] byte {} ({} bytes): {}\n", k, offset, instruction_bytes(ins.format()),
               ins_txt_line(ins));
    fmt::print("{}\n", disassemble(ins, hw));
    try {
      validate(ins, hw);
      for (const std::string& p : consistency_problems(ins, hw)) {
        fmt::print("#   warning: {}\n", p);
        ++problems;
      }
    } catch (const Error& e) {
      fmt::print("#   error: {}\n", e.what());
      ++problems;
    }
    offset += static_cast<size_t>(instruction_bytes(ins.format()));
  }
  fmt::print("# {} instructions, {} problems (hardware {})\n", program.size(), problems, hw.name);
  // Like decode: the listing is complete, the status tells scripts it has problems.
  if (problems > 0)
    fmt::print(stderr, "npukit isa disasm: {} problems in {} instructions (hardware {})\n",
               problems, program.size(), hw.name);
  return problems > 0 ? 1 : 0;
}

}  // namespace

void add_isa_command(CLI::App& app) {
  auto* isa = app.add_subcommand("isa", "GHP-FPGA accelerator instructions (seed 000)");
  isa->require_subcommand(1);
  static const std::string hw_help =
      "Hardware build: seed (S=4, R=32), M64P64Q16R16S8 (default) "
      "or any M<m>P<p>Q<q>R<r>S<s>";

  {
    static ProgramSource src;
    static int64_t line = 0;
    static std::string input, input_b, output, hw = "M64P64Q16R16S8", profile = "ghp_rtl";
    auto* cmd = isa->add_subcommand(
        "exec", "Execute one AVGP/MAXP/ADD instruction on a raw uint8 NCHW input file");
    add_source_options(cmd, src);
    cmd->add_option("--line", line, "Instruction to run (0-based)")->required();
    cmd->add_option("--input", input, "Raw uint8 input (A of an ADD)")->required();
    cmd->add_option("--input-b", input_b, "Raw uint8 B operand of an ADD");
    cmd->add_option("--output", output, "Raw uint8 output")->required();
    cmd->add_option("--hw", hw, hw_help);
    cmd->add_option("--profile", profile, "ghp_rtl (default) or ghp_golden");
    add_threads_option(cmd);
    cmd->callback([] { run_exec(src, line, input, input_b, output, hw, profile); });
  }
  {
    static std::string config, out, hw, profile = "ghp_rtl";
    auto* cmd = isa->add_subcommand(
        "golden",
        "Write testbench vectors: X<k>.bin/Y<k>.bin, ins.txt, program.bin/.asm and "
        "manifest.json from a YAML list of cases");
    cmd->add_option("--config", config, "cases.yaml")->required();
    cmd->add_option("--out", out, "Output directory (created)")->required();
    cmd->add_option("--hw", hw, hw_help + " (overrides the file's hw:)");
    cmd->add_option("--profile", profile, "ghp_rtl (default) or ghp_golden");
    add_threads_option(cmd);
    cmd->callback([] { run_golden(config, out, hw, profile); });
  }
  {
    static ProgramSource src;
    static std::string output, hw = "M64P64Q16R16S8";
    auto* cmd = isa->add_subcommand("encode", "Text form or ins.txt -> binary instruction stream");
    add_source_options(cmd, src);
    cmd->add_option("--out", output, "Binary output")->required();
    cmd->add_option("--hw", hw, hw_help);
    cmd->callback([] { run_encode(src, output, hw); });
  }
  {
    static ProgramSource src;
    static std::string output = "-", format = "asm", hw = "M64P64Q16R16S8";
    auto* cmd = isa->add_subcommand(
        "decode",
        "Binary stream or ins.txt -> text form or ins.txt (exit 1 if an instruction is invalid)");
    add_source_options(cmd, src);
    cmd->add_option("--out", output, "Output file (default stdout)");
    cmd->add_option("--format", format, "asm (default) or ins-txt");
    cmd->add_option("--hw", hw, hw_help);
    cmd->callback([] {
      if (const int rc = run_decode(src, output, format, hw)) throw CLI::RuntimeError(rc);
    });
  }
  {
    static ProgramSource src;
    static std::string hw = "M64P64Q16R16S8";
    auto* cmd = isa->add_subcommand(
        "disasm",
        "List instructions with real and stored values, derived shapes and warnings (exit 1 if "
        "an instruction is invalid or inconsistent)");
    add_source_options(cmd, src);
    cmd->add_option("--hw", hw, hw_help);
    cmd->callback([] {
      if (const int rc = run_disasm(src, hw)) throw CLI::RuntimeError(rc);
    });
  }
}

}  // namespace npukit::cli
