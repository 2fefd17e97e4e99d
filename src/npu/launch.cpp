#include "npukit/npu/launch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "cost_call_site.hpp"
#include "npukit/npu/machine.hpp"
#include "operand_scratch.hpp"

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
  int64_t now = 0;  // end of the finished timeline
  // Open parallel region, in cycles from its start: when the issuing CPU has
  // issued its last instruction, when each engine becomes free, and the
  // engines' busy intervals that may still overlap a later one of the other
  // engine (for the overlap).
  int64_t region_cpu = 0, region_gdma = 0, region_bdc = 0;
  std::deque<std::pair<int64_t, int64_t>> region_gdma_busy, region_bdc_busy;
  int64_t gdma_busy = 0, bdc_busy = 0, overlap = 0;
  std::map<std::string, FunctionCost> functions;
  std::vector<TraceSlice> slices;
  std::vector<uintptr_t> call_addresses;  // per slice, when capturing call sites
  bool tracing = false;                   // NPUKIT_TRACE is set: call sites, more slices
  std::vector<TraceRegion> regions;
  int64_t slices_dropped = 0;
  LaunchReport last;
  std::vector<LaunchReport> traced;  // launches written to NPUKIT_TRACE
};

// A launch keeps at most this many slices: about 150 MB while tracing, 10 MB
// otherwise (the report's totals count every instruction either way).
constexpr size_t kMaxTracedSlices = size_t{1} << 20;
constexpr size_t kMaxSlices = size_t{1} << 16;

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

namespace {

// Cycles of [begin, end) during which the other engine was busy. Each
// engine's intervals come in time order, so intervals of the other engine
// that end before `begin` can never overlap a later interval: dropped.
int64_t overlap_with(std::deque<std::pair<int64_t, int64_t>>& other, int64_t begin, int64_t end) {
  while (!other.empty() && other.front().second <= begin) other.pop_front();
  int64_t total = 0;
  for (const auto& [b, e] : other) {
    if (b >= end) break;
    total += std::min(e, end) - std::max(b, begin);
  }
  return total;
}

}  // namespace

void record_cost(const Instruction& in) {
  Context& c = ctx();
  ++c.instructions;
  FunctionCost& fc = c.functions[in.function];
  fc.function = in.function;
  fc.engine = in.engine;
  ++fc.calls;
  fc.cycles += in.cycles;
  // The firmware issues every engine instruction (issue_cycles each).
  // Outside a region it waits for each to finish; inside, an instruction
  // starts once issued and its engine has finished the previous one.
  const bool engine = in.engine == Engine::gdma || in.engine == Engine::bdc;
  const int64_t issue = engine ? machine().config().cost.issue_cycles : 0;
  int64_t start = c.now;
  if (!c.parallel) {
    start += issue;
    c.now += issue + in.cycles;
  } else if (engine) {
    c.region_cpu += issue;
    int64_t& free = in.engine == Engine::gdma ? c.region_gdma : c.region_bdc;
    const int64_t begin = std::max(c.region_cpu, free);
    free = begin + in.cycles;
    const bool g = in.engine == Engine::gdma;
    c.overlap += overlap_with(g ? c.region_bdc_busy : c.region_gdma_busy, begin, free);
    (g ? c.region_gdma_busy : c.region_bdc_busy).push_back({begin, free});
    start += begin;
  }
  if (in.engine == Engine::gdma) c.gdma_busy += in.cycles;
  if (in.engine == Engine::bdc) c.bdc_busy += in.cycles;
  if (c.slices.size() >= (c.tracing ? kMaxTracedSlices : kMaxSlices)) {
    ++c.slices_dropped;
    return;
  }
  c.slices.push_back(
      TraceSlice{in.function, in.engine, in.op_class, start, in.cycles, in.bytes, in.detail, {}});
  if (c.tracing) c.call_addresses.push_back(kernel_call_address());
}

void record_cost(const char* function, Engine engine, int64_t cycles) {
  Instruction in;
  in.function = function;
  in.engine = engine;
  in.cycles = cycles;
  record_cost(in);
}

namespace {

void reset_region(Context& c) {
  c.region_cpu = c.region_gdma = c.region_bdc = 0;
  c.region_gdma_busy.clear();
  c.region_bdc_busy.clear();
}

}  // namespace

void parallel_start(const char*) {
  Context& c = ctx();
  c.parallel = true;
  reset_region(c);
}

// okk_parallel_end waits for both engines (and the last issue).
void parallel_end(const char*) {
  Context& c = ctx();
  if (!c.parallel) return;
  const int64_t length = std::max({c.region_cpu, c.region_gdma, c.region_bdc});
  if (length > 0) c.regions.push_back(TraceRegion{c.now, c.now + length});
  c.now += length;
  c.parallel = false;
  reset_region(c);
}

namespace {

// The trace file holds every launch of the process so far (rewritten after
// each launch, so a crash later still leaves a complete file).
void write_trace_file(const char* path, const LaunchReport& r) {
  Context& c = ctx();
  c.traced.push_back(r);
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "npukit: NPUKIT_TRACE: cannot write '%s'\n", path);
    return;
  }
  const std::string json = chrome_trace_json(c.traced);
  std::fwrite(json.data(), 1, json.size(), f);
  std::fclose(f);
}

}  // namespace

bool in_parallel() {
  return ctx().parallel;
}

void begin_launch(const std::string& kernel) {
  Context& c = ctx();
  c.kernel = kernel;
  c.active = true;
  c.parallel = false;
  c.instructions = c.now = 0;
  reset_region(c);
  c.gdma_busy = c.bdc_busy = c.overlap = c.slices_dropped = 0;
  c.functions.clear();
  c.slices.clear();
  c.call_addresses.clear();
  c.regions.clear();
  const char* trace = std::getenv("NPUKIT_TRACE");
  c.tracing = trace && *trace;
}

LaunchReport end_launch() {
  Context& c = ctx();
  parallel_end("end_launch");  // an unclosed region still costs its time
  LaunchReport r;
  r.kernel = c.kernel;
  r.instructions = c.instructions;
  r.device_cycles = c.now;
  const CostModel& m = machine().config().cost;
  r.clock_mhz = m.clock_mhz;
  r.launch_overhead_us = m.launch_overhead_us;
  r.device_us = static_cast<double>(c.now) / m.clock_mhz + m.launch_overhead_us;
  r.gdma_busy_cycles = c.gdma_busy;
  r.bdc_busy_cycles = c.bdc_busy;
  r.overlap_cycles = c.overlap;
  if (c.tracing) {
    const std::map<uintptr_t, std::string> sites = describe_call_sites(c.call_addresses);
    for (size_t i = 0; i < c.slices.size() && i < c.call_addresses.size(); ++i) {
      auto it = sites.find(c.call_addresses[i]);
      if (it != sites.end()) c.slices[i].call_site = it->second;
    }
  }
  r.slices = std::move(c.slices);
  r.regions = std::move(c.regions);
  r.slices_dropped = c.slices_dropped;
  c.slices.clear();
  c.regions.clear();
  for (const auto& [n, fc] : c.functions) r.functions.push_back(fc);
  std::sort(r.functions.begin(), r.functions.end(),
            [](const FunctionCost& a, const FunctionCost& b) { return a.cycles > b.cycles; });
  c.last = r;
  c.kernel = "(no kernel)";
  c.active = false;
  face::release_operand_scratch();
  return r;
}

LaunchReport last_launch_report() {
  return ctx().last;
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
  const char* trace = std::getenv("NPUKIT_TRACE");
  if (trace && *trace) write_trace_file(trace, r);
  return true;
}

int64_t gdma_cycles(int64_t bytes) {
  const Config& c = machine().config();
  return gdma_transfer_cycles(c.cost, GdmaDirection::s2l, 1, bytes, true, c.npu_num);
}

int64_t bdc_cycles(int64_t channels_per_npu, int64_t elements_per_channel,
                   int64_t ops_per_element) {
  const Config& c = machine().config();
  return bdc_instruction_cycles(c.cost, OpClass::arith, channels_per_npu, elements_per_channel,
                                ops_per_element, c.eu_num());
}

}  // namespace npukit::npu
