#include "npukit/read_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "npukit/error.hpp"
#include "npukit/memory_budget.hpp"

namespace npukit {

namespace {
struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Paths are shown quoted, with control bytes (a NUL would cut the message) escaped.
std::string quoted(const std::string& path) {
  std::string s = "'";
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      s += buf;
    } else {
      s += static_cast<char>(c);
    }
  }
  return s + "'";
}
}  // namespace

std::vector<char> read_file_bounded(const char* function, const char* parameter,
                                    const std::string& path, uint64_t max_bytes,
                                    const std::string& what) {
  check(path.find('\0') == std::string::npos && !path.empty(), function, parameter, quoted(path),
        what + " (a non-empty path without NUL bytes)");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail(function, parameter, quoted(path) + " (" + std::strerror(errno) + ")", what);
  check(!S_ISDIR(st.st_mode), function, parameter, quoted(path) + " (a directory)", what);
  uint64_t cap = std::min(max_bytes, memory_budget());
  // Devices and pipes have no size to check first: read at most kMaxStreamBytes.
  if (!S_ISREG(st.st_mode)) cap = std::min(cap, kMaxStreamBytes);
  if (S_ISREG(st.st_mode))
    check(static_cast<uint64_t>(st.st_size) <= cap, function, parameter,
          quoted(path) + " (" + std::to_string(st.st_size) + " bytes)",
          what + " of at most " + std::to_string(cap) + " bytes");
  std::unique_ptr<std::FILE, CloseFile> f(std::fopen(path.c_str(), "rb"));
  if (!f) fail(function, parameter, quoted(path) + " (" + std::strerror(errno) + ")", what);
  // Read in chunks up to the cap: devices and pipes have no size to trust.
  std::vector<char> bytes;
  char chunk[1 << 16];
  for (;;) {
    const size_t n = std::fread(chunk, 1, sizeof chunk, f.get());
    if (n == 0) break;
    check(bytes.size() + n <= cap, function, parameter,
          quoted(path) + " (more than " + std::to_string(cap) + " bytes)",
          what + " of at most " + std::to_string(cap) + " bytes");
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  check(!std::ferror(f.get()), function, parameter, quoted(path) + " (read error)", what);
  return bytes;
}

}  // namespace npukit
