#include "isa_files.hpp"

#include <fstream>
#include <iterator>
#include <sstream>

#include "npukit/error.hpp"
#include "npukit/read_file.hpp"

namespace npukit::cli::isa_io {

std::vector<uint8_t> read_bytes(const std::string& path) {
  const std::vector<char> b =
      read_file_bounded("npukit isa", "file", path, kMaxTextFileBytes, "a readable file");
  return {b.begin(), b.end()};
}

std::string read_text(const std::string& path) {
  const std::vector<char> b =
      read_file_bounded("npukit isa", "file", path, kMaxTextFileBytes, "a readable file");
  return {b.begin(), b.end()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  if (!out) fail("npukit isa", "output", "'" + path + "'", "a writable file");
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("npukit isa", "output", "'" + path + "'", "a writable file");
}

void write_text(const std::string& path, const std::string& text) {
  write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

}  // namespace npukit::cli::isa_io
