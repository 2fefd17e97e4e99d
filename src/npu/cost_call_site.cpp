#include "cost_call_site.hpp"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <set>

namespace npukit::npu {

namespace {

// The shared object holding npukit's code (nullptr if it is linked into the
// executable, where its frames cannot be told apart).
const void* npukit_object_base() {
  static const void* base = [] {
    Dl_info self{}, exe{};
    if (!dladdr(reinterpret_cast<const void*>(&kernel_call_address), &self)) return (void*)nullptr;
    void* main_handle = dlopen(nullptr, RTLD_LAZY);
    void* main_sym = main_handle ? dlsym(main_handle, "main") : nullptr;
    if (main_sym && dladdr(main_sym, &exe) && exe.dli_fbase == self.dli_fbase)
      return (void*)nullptr;
    return self.dli_fbase;
  }();
  return base;
}

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

}  // namespace

uintptr_t kernel_call_address() {
  const void* base = npukit_object_base();
  if (!base) return 0;
  void* frames[24];
  const int n = backtrace(frames, 24);
  for (int i = 1; i < n; ++i) {
    Dl_info info{};
    if (dladdr(frames[i], &info) && info.dli_fbase == base) continue;
    return reinterpret_cast<uintptr_t>(frames[i]) - 1;  // inside the call instruction
  }
  return 0;
}

std::map<uintptr_t, std::string> describe_call_sites(const std::vector<uintptr_t>& addresses) {
  std::map<uintptr_t, std::string> text;
  std::map<std::string, std::vector<std::pair<uintptr_t, uintptr_t>>> by_object;  // offsets
  for (uintptr_t a : std::set<uintptr_t>(addresses.begin(), addresses.end())) {
    if (!a) continue;
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(a), &info) || !info.dli_fname) continue;
    const uintptr_t offset = a - reinterpret_cast<uintptr_t>(info.dli_fbase);
    char hex[32];
    std::snprintf(hex, sizeof hex, "+0x%zx", static_cast<size_t>(offset));
    std::string object = info.dli_fname;
    object = object.substr(object.rfind('/') + 1);
    text[a] = object + hex;
    if (info.dli_sname) text[a] = std::string(info.dli_sname) + " (" + text[a] + ")";
    by_object[info.dli_fname].push_back({a, offset});
  }
  // addr2line (binutils) turns offsets into function and file:line.
  for (const auto& [object, list] : by_object) {
    std::string cmd = "addr2line -f -C -e '" + object + "'";
    for (const auto& [a, off] : list) {
      char hex[32];
      std::snprintf(hex, sizeof hex, " 0x%zx", static_cast<size_t>(off));
      cmd += hex;
    }
    const std::string out = run(cmd + " 2>/dev/null");
    size_t at = 0;
    for (const auto& [a, off] : list) {
      const size_t e1 = out.find('\n', at);
      if (e1 == std::string::npos) break;
      const size_t e2 = out.find('\n', e1 + 1);
      if (e2 == std::string::npos) break;
      const std::string function = out.substr(at, e1 - at);
      std::string line = out.substr(e1 + 1, e2 - e1 - 1);
      line = line.substr(0, line.find(" (discriminator"));
      at = e2 + 1;
      if (line.rfind("??", 0) != 0)
        text[a] = line + " (" + function + ")";
      else if (function != "??" && text[a].find(" (") == std::string::npos)
        text[a] = function + " (" + text[a] + ")";
    }
  }
  return text;
}

}  // namespace npukit::npu
