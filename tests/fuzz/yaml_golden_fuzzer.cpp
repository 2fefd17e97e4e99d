// libFuzzer target for the YAML golden-case reader of `npukit isa golden`:
// any file either produces the testbench files or fails with npukit::Error
// (yaml-cpp's own exceptions included, translated). The memory budget keeps
// the case sizes a file can ask for small.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "isa_files.hpp"
#include "npukit/error.hpp"
#include "npukit/memory_budget.hpp"

namespace {
std::string g_dir;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  npukit::set_memory_budget(uint64_t{16} << 20);
  char tmpl[] = "/tmp/npukit_yaml_fuzz_XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) return 1;
  g_dir = d;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string config = g_dir + "/cases.yaml";
  if (std::FILE* f = std::fopen(config.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  // Keep stdout quiet: run_golden prints one summary line per success.
  std::FILE* out = std::freopen("/dev/null", "w", stdout);
  (void)out;
  try {
    npukit::cli::run_golden(config, g_dir + "/out", "", "ghp_rtl");
  } catch (const npukit::Error&) {
  }
  return 0;
}
