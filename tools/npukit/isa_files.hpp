// File helpers and the YAML-driven vector generator of `npukit isa`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit::cli {
namespace isa_io {

std::vector<uint8_t> read_bytes(const std::string& path);  // npukit::Error if unreadable
std::string read_text(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
void write_text(const std::string& path, const std::string& text);

}  // namespace isa_io
using isa_io::read_bytes;
using isa_io::read_text;
using isa_io::write_bytes;
using isa_io::write_text;

// `npukit isa golden`: cases.yaml -> DIR/{X<k>,Y<k>}.bin (A/B/C<k>.bin for add),
// ins.txt, program.bin, program.asm, manifest.json.
void run_golden(const std::string& config, const std::string& out_dir, const std::string& hw_name,
                const std::string& profile_name);

}  // namespace npukit::cli
