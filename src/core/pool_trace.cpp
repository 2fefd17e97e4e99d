#include "core/pool_trace.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace npukit::detail {

namespace {

struct StepTrace {
  int64_t start_ns = 0, end_ns = 0;
  std::string op_type, name;
};

struct Trace {
  std::string path;
  std::vector<RegionTrace> regions;
  std::vector<StepTrace> steps;
};

// The call site as module and offset, which addr2line reads.
void write_site(std::FILE* f, const void* site) {
  Dl_info info{};
  if (site != nullptr && dladdr(site, &info) != 0 && info.dli_fname != nullptr)
    std::fprintf(f, "%s\t0x%llx\n", info.dli_fname,
                 static_cast<unsigned long long>(static_cast<const char*>(site) -
                                                 static_cast<const char*>(info.dli_fbase)));
  else
    std::fprintf(f, "?\t0x0\n");
}

void write(const Trace& t) {
  std::FILE* f = std::fopen(t.path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "npukit: NPUKIT_POOL_TRACE: cannot write '%s'\n", t.path.c_str());
    return;
  }
  std::fprintf(f,
               "start_ns\tcaller_done_ns\tend_ns\thelper_first_ns\thelper_last_ns\tcount\t"
               "caller_chunks\thelper_chunks\tmodule\toffset\n");
  for (const RegionTrace& r : t.regions) {
    std::fprintf(f, "%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t",
                 static_cast<long long>(r.start_ns), static_cast<long long>(r.caller_done_ns),
                 static_cast<long long>(r.end_ns), static_cast<long long>(r.helper_first_ns),
                 static_cast<long long>(r.helper_last_ns), static_cast<long long>(r.count),
                 static_cast<long long>(r.caller_chunks), static_cast<long long>(r.helper_chunks));
    write_site(f, r.site);
  }
  std::fclose(f);
  if (t.steps.empty()) return;
  const std::string steps_path = t.path + ".steps";
  f = std::fopen(steps_path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "npukit: NPUKIT_POOL_TRACE: cannot write '%s'\n", steps_path.c_str());
    return;
  }
  std::fprintf(f, "start_ns\tend_ns\top_type\tname\n");
  for (const StepTrace& s : t.steps)
    std::fprintf(f, "%lld\t%lld\t%s\t%s\n", static_cast<long long>(s.start_ns),
                 static_cast<long long>(s.end_ns), s.op_type.c_str(), s.name.c_str());
  std::fclose(f);
}

// Never destroyed: written by an atexit handler.
Trace* make_trace() {
  const char* env = std::getenv("NPUKIT_POOL_TRACE");
  if (env == nullptr || env[0] == '\0') return nullptr;
  static Trace trace;
  trace.path = env;
  trace.regions.reserve(1 << 16);
  trace.steps.reserve(1 << 16);
  std::atexit([] { write(trace); });
  return &trace;
}

Trace* trace() {
  static Trace* const t = make_trace();
  return t;
}

}  // namespace

bool pool_trace_on() {
  return trace() != nullptr;
}

int64_t trace_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void record_region(const RegionTrace& r) {
  if (Trace* t = trace()) t->regions.push_back(r);
}

void record_step(int64_t start_ns, int64_t end_ns, const std::string& op_type,
                 const std::string& name) {
  if (Trace* t = trace()) t->steps.push_back({start_ns, end_ns, op_type, name});
}

}  // namespace npukit::detail
