// libFuzzer target for the GHP instruction readers: the binary decoder
// (program.bin), the assembler text and the testbench's ins.txt lines. The
// first byte picks the reader; the rest is its input. Each either succeeds
// or fails with npukit::Error; a decoded program re-encodes and decodes to
// the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "npukit/error.hpp"
#include "npukit/isa/ghp.hpp"
#include "npukit/memory_budget.hpp"

using namespace npukit::ghp;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  npukit::set_memory_budget(uint64_t{64} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  const std::vector<uint8_t> bytes(data + 1, data + size);
  const std::string text(bytes.begin(), bytes.end());
  try {
    if (mode == 0) {
      const std::vector<Instruction> program = decode_stream(bytes);
      const std::vector<uint8_t> again = encode_stream(program);
      if (encode_stream(decode_stream(again)) != again) std::abort();
    } else if (mode == 1) {
      (void)assemble(text, hw_preset("M64P64Q16R16S8"));
    } else {
      for (OpCode op : {OpCode::conv, OpCode::avgp, OpCode::add}) try {
          (void)ins_txt_line(parse_ins_txt_line(text, op));
        } catch (const npukit::Error&) {
        }
    }
  } catch (const npukit::Error&) {
  }
  return 0;
}
