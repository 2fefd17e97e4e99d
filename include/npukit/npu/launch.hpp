// Kernel registry, launch context (current kernel, parallel region) and the
// cost model's accounting: every okk/bm_atomic call records an estimate of
// its device cycles on its engine; inside okk_parallel_start/end the GDMA and
// BDC engines overlap (the region costs the larger of the two sums).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit::npu {

using KernelFunction = void (*)(const void*);

void register_kernel(const std::string& name, KernelFunction f);
KernelFunction find_kernel(const std::string& name);  // nullptr if none
std::vector<std::string> kernel_names();

enum class Engine : uint8_t { gdma, bdc, host };

struct FunctionCost {
  std::string function;
  int64_t calls = 0;
  int64_t cycles = 0;  // sum of the calls' own estimates (before overlap)
};

struct LaunchReport {
  std::string kernel;
  int64_t instructions = 0;
  int64_t device_cycles = 0;  // with overlap inside parallel regions
  double device_us = 0.0;
  std::vector<FunctionCost> functions;  // most expensive first
};

// The kernel name used in messages ("(no kernel)" outside a launch).
const std::string& current_kernel();

void record_cost(const char* function, Engine engine, int64_t cycles);
void parallel_start(const char* function);
void parallel_end(const char* function);
bool in_parallel();

// Runs a registered kernel as a launch; prints the report on stderr when
// NPUKIT_PROFILE=1. Returns false if no kernel has that name.
bool launch(const std::string& name, const void* args);
// Manual launch brackets (tests that call okk functions directly).
void begin_launch(const std::string& kernel);
LaunchReport end_launch();
LaunchReport last_launch_report();
std::string format_report(const LaunchReport& r);

// Cost estimates, in device cycles.
int64_t gdma_cycles(int64_t bytes);
// `work` operations per lane-slot: lanes are NPUs x EUs.
int64_t bdc_cycles(int64_t channels_per_npu, int64_t elements_per_channel, int64_t ops_per_element);

}  // namespace npukit::npu
