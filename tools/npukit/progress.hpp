// A one-line progress bar on stderr, drawn only when stderr is a terminal
// (so piped or logged output stays clean).
#pragma once

#include <cstdint>
#include <string>

namespace npukit::cli {

class Progress {
 public:
  Progress(std::string label, int64_t total, bool enabled = true);
  ~Progress();
  void update(int64_t done);
  void finish();

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  int last_ = -1;
};

// Minimal JSON text helpers for --json output.
std::string json_string(const std::string& s);

}  // namespace npukit::cli
