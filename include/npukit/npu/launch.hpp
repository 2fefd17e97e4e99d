// Kernel registry, launch context (current kernel, parallel region) and the
// cost model's accounting: every okk/bm_atomic call records one Instruction
// with its estimated device cycles on its engine. Outside a parallel region
// instructions run one after the other; inside okk_parallel_start/end the GDMA
// and BDC engines each run their own instructions back to back from the
// region's start, and the region ends when the later engine finishes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/npu/cost_model.hpp"

namespace npukit::npu {

using KernelFunction = void (*)(const void*);

void register_kernel(const std::string& name, KernelFunction f);
KernelFunction find_kernel(const std::string& name);  // nullptr if none
std::vector<std::string> kernel_names();

enum class Engine : uint8_t { gdma, bdc, host };
const char* engine_name(Engine e);

// One instruction as the cost model sees it.
struct Instruction {
  const char* function = "";
  Engine engine = Engine::bdc;
  OpClass op_class = OpClass::other;
  int64_t cycles = 0;
  int64_t bytes = 0;   // bytes moved (GDMA) or produced (BDC)
  std::string detail;  // shapes, direction, ... for the trace
};

// One instruction placed on the timeline.
struct TraceSlice {
  std::string function;
  Engine engine = Engine::bdc;
  OpClass op_class = OpClass::other;
  int64_t start = 0, cycles = 0, bytes = 0;  // start: cycles from the launch's start
  std::string detail;
  std::string call_site;  // the kernel's call, when NPUKIT_TRACE is set and it can be found
};

struct TraceRegion {
  int64_t start = 0, end = 0;  // an okk_parallel_start/end region, in cycles
};

struct FunctionCost {
  std::string function;
  Engine engine = Engine::bdc;
  int64_t calls = 0;
  int64_t cycles = 0;  // sum of the calls' own estimates (before overlap)
};

struct LaunchReport {
  std::string kernel;
  int64_t instructions = 0;
  int64_t device_cycles = 0;  // instruction timeline, with overlap inside parallel regions
  double clock_mhz = 0.0;
  double launch_overhead_us = 0.0;  // host launch, added once
  double device_us = 0.0;           // device_cycles / clock + launch_overhead_us
  int64_t gdma_busy_cycles = 0, bdc_busy_cycles = 0;
  int64_t overlap_cycles = 0;           // cycles with both engines busy
  std::vector<FunctionCost> functions;  // most expensive first
  std::vector<TraceSlice> slices;       // program order (capped, see slices_dropped)
  std::vector<TraceRegion> regions;
  int64_t slices_dropped = 0;
};

// The kernel name used in messages ("(no kernel)" outside a launch).
const std::string& current_kernel();

void record_cost(const Instruction& instruction);
void record_cost(const char* function, Engine engine, int64_t cycles);  // OpClass::other
void parallel_start(const char* function);
void parallel_end(const char* function);
bool in_parallel();

// Runs a registered kernel as a launch; prints the report on stderr when
// NPUKIT_PROFILE=1 and adds the launch to the Chrome trace file named by
// NPUKIT_TRACE (then each instruction also records its call site in the
// kernel). Returns false if no kernel has that name.
bool launch(const std::string& name, const void* args);
// Manual launch brackets (tests that call okk functions directly).
void begin_launch(const std::string& kernel);
LaunchReport end_launch();
LaunchReport last_launch_report();
std::string format_report(const LaunchReport& r, size_t top_functions = 10);

// Chrome trace-event JSON (Perfetto, chrome://tracing) of launches: one
// process per launch, one thread per engine, one slice per instruction,
// parallel regions on their own track. Times in microseconds.
std::string chrome_trace_json(const std::vector<LaunchReport>& launches);

// Cost estimates of the current machine's model, in device cycles.
int64_t gdma_cycles(int64_t bytes);  // one contiguous aligned system-to-local run
// `ops_per_element` operations per lane-slot, lanes are NPUs x EUs (arith class).
int64_t bdc_cycles(int64_t channels_per_npu, int64_t elements_per_channel, int64_t ops_per_element);

}  // namespace npukit::npu
