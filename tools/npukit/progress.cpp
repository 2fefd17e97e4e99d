#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace npukit::cli {

Progress::Progress(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  finish();
}

void Progress::update(int64_t done) {
  if (!enabled_ || total_ <= 0) return;
  const int pct = static_cast<int>(100 * done / total_);
  if (pct == last_) return;
  last_ = pct;
  constexpr int width = 30;
  const int fill = pct * width / 100;
  std::fprintf(stderr, "\r%-28s [%.*s%*s] %3d%%", label_.c_str(), fill,
               "==============================", width - fill, "", pct);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || last_ < 0) return;
  std::fprintf(stderr, "\r%*s\r", 28 + 40, "");  // erase the bar
  std::fflush(stderr);
  last_ = -1;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace npukit::cli
