#include "isa_files.hpp"

#include <fstream>
#include <iterator>
#include <sstream>

#include "npukit/error.hpp"

namespace npukit::cli::isa_io {

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("npukit isa", "file", "'" + path + "'", "a readable file");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("npukit isa", "file", "'" + path + "'", "a readable file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
