#include "npukit/npu/launch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "npukit/npu/machine.hpp"

namespace npukit::npu {

namespace {

std::map<std::string, KernelFunction>& registry() {
  static std::map<std::string, KernelFunction> r;
  return r;
}

struct Context {
  std::string kernel = "(no kernel)";
  bool active = false;
  bool parallel = false;
  int64_t instructions = 0;
  int64_t cycles = 0;                       // finished (sequential) time
  int64_t region_gdma = 0, region_bdc = 0;  // open parallel region
  std::map<std::string, FunctionCost> functions;
  LaunchReport last;
};

Context& ctx() {
  static Context c;
  return c;
}

}  // namespace

void register_kernel(const std::string& name, KernelFunction f) {
  registry()[name] = f;
}

KernelFunction find_kernel(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& [n, f] : registry()) names.push_back(n);
  return names;
}

const std::string& current_kernel() {
  return ctx().kernel;
}

void record_cost(const char* function, Engine engine, int64_t cycles) {
  Context& c = ctx();
  ++c.instructions;
  FunctionCost& fc = c.functions[function];
  fc.function = function;
  ++fc.calls;
  fc.cycles += cycles;
  if (!c.parallel) {
    c.cycles += cycles;
  } else if (engine == Engine::gdma) {
    c.region_gdma += cycles;
  } else if (engine == Engine::bdc) {
    c.region_bdc += cycles;
  }
}

void parallel_start(const char*) {
  Context& c = ctx();
  c.parallel = true;
  c.region_gdma = c.region_bdc = 0;
}

void parallel_end(const char*) {
  Context& c = ctx();
  if (!c.parallel) return;
  c.cycles += std::max(c.region_gdma, c.region_bdc);
  c.parallel = false;
  c.region_gdma = c.region_bdc = 0;
}

bool in_parallel() {
  return ctx().parallel;
}

void begin_launch(const std::string& kernel) {
  Context& c = ctx();
  c.kernel = kernel;
  c.active = true;
  c.parallel = false;
  c.instructions = c.cycles = c.region_gdma = c.region_bdc = 0;
  c.functions.clear();
}

LaunchReport end_launch() {
  Context& c = ctx();
  parallel_end("end_launch");  // an unclosed region still costs its time
  LaunchReport r;
  r.kernel = c.kernel;
  r.instructions = c.instructions;
  r.device_cycles = c.cycles;
  r.device_us = static_cast<double>(c.cycles) / machine().config().clock_mhz;
  for (const auto& [n, fc] : c.functions) r.functions.push_back(fc);
  std::sort(r.functions.begin(), r.functions.end(),
            [](const FunctionCost& a, const FunctionCost& b) { return a.cycles > b.cycles; });
  c.last = r;
  c.kernel = "(no kernel)";
  c.active = false;
  return r;
}

LaunchReport last_launch_report() {
  return ctx().last;
}

std::string format_report(const LaunchReport& r) {
  char line[256];
  std::snprintf(line, sizeof line,
                "npukit NPU profile: kernel '%s': %lld instructions, estimated device time %.3f us "
                "(%lld cycles)\n",
                r.kernel.c_str(), static_cast<long long>(r.instructions), r.device_us,
                static_cast<long long>(r.device_cycles));
  std::string s = line;
  for (const FunctionCost& f : r.functions) {
    std::snprintf(line, sizeof line, "  %-48s %8lld calls %12lld cycles\n", f.function.c_str(),
                  static_cast<long long>(f.calls), static_cast<long long>(f.cycles));
    s += line;
  }
  return s;
}

bool launch(const std::string& name, const void* args) {
  KernelFunction f = find_kernel(name);
  if (!f) return false;
  begin_launch(name);
  try {
    f(args);
  } catch (...) {
    end_launch();
    throw;
  }
  const LaunchReport r = end_launch();
  const char* env = std::getenv("NPUKIT_PROFILE");
  if (env && std::strcmp(env, "1") == 0) std::fputs(format_report(r).c_str(), stderr);
  return true;
}

int64_t gdma_cycles(int64_t bytes) {
  const Config& c = machine().config();
  return c.gdma_latency_cycles +
         static_cast<int64_t>(static_cast<double>(bytes) / c.gdma_bytes_per_cycle + 0.999);
}

int64_t bdc_cycles(int64_t channels_per_npu, int64_t elements_per_channel,
                   int64_t ops_per_element) {
  const Config& c = machine().config();
  const int64_t eu = c.eu_num();
  return c.bdc_overhead_cycles +
         channels_per_npu * ((elements_per_channel + eu - 1) / eu) * ops_per_element;
}

}  // namespace npukit::npu
