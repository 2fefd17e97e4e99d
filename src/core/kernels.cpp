#include "npukit/kernels.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "npukit/cpu_features.hpp"
#include "npukit/error.hpp"

namespace npukit {

namespace {

constexpr const char* kIsaNames[] = {"portable", "avx2", "avx512", "avx512_vnni"};

Isa detect_host_isa() {
  const CpuFeatures f = host_cpu_features();
  if (f.avx512_vnni) return Isa::avx512_vnni;
  if (f.avx512_core) return Isa::avx512;
  if (f.avx2) return Isa::avx2;
  return Isa::portable;
}

// Environment settings are read once; a bad value is reported and ignored
// (it cannot throw from a static initializer).
Impl initial_impl() {
  const char* env = std::getenv("NPUKIT_IMPL");
  if (env == nullptr || *env == '\0' || std::string(env) == "fast") return Impl::fast;
  if (std::string(env) == "reference") return Impl::reference;
  std::fprintf(stderr,
               "npukit: NPUKIT_IMPL = '%s' is not allowed (allowed: fast, reference); using fast\n",
               env);
  return Impl::fast;
}

Isa initial_isa_cap() {
  const char* env = std::getenv("NPUKIT_MAX_ISA");
  if (env == nullptr || *env == '\0') return Isa::avx512_vnni;
  for (int i = 0; i < 4; ++i)
    if (std::string(env) == kIsaNames[i]) return static_cast<Isa>(i);
  std::fprintf(stderr,
               "npukit: NPUKIT_MAX_ISA = '%s' is not allowed (allowed: portable, avx2, avx512, "
               "avx512_vnni); ignored\n",
               env);
  return Isa::avx512_vnni;
}

bool initial_log() {
  const char* env = std::getenv("NPUKIT_LOG_KERNELS");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

std::atomic<Impl> g_impl{initial_impl()};
// The environment's cap is a ceiling set_max_isa cannot lift: a process run
// under NPUKIT_MAX_ISA=avx2 behaves as on an AVX2 host, tests included.
const Isa g_env_isa_cap = initial_isa_cap();
std::atomic<Isa> g_isa_cap{Isa::avx512_vnni};
const bool g_log = initial_log();

}  // namespace

const char* isa_name(Isa isa) {
  const auto i = static_cast<size_t>(isa);
  return i < 4 ? kIsaNames[i] : "invalid";
}

Isa isa_from_name(const std::string& name) {
  for (int i = 0; i < 4; ++i)
    if (name == kIsaNames[i]) return static_cast<Isa>(i);
  fail("npukit::isa_from_name", "name", name, "portable, avx2, avx512 or avx512_vnni");
}

Isa host_isa() {
  static const Isa isa = detect_host_isa();
  return isa;
}

void set_impl(Impl impl) {
  check(impl == Impl::fast || impl == Impl::reference, "npukit::set_impl", "impl",
        std::to_string(static_cast<int>(impl)), "Impl::fast or Impl::reference");
  g_impl = impl;
}

Impl impl() {
  return g_impl.load();
}

void set_max_isa(Isa isa) {
  check(static_cast<int>(isa) <= static_cast<int>(Isa::avx512_vnni), "npukit::set_max_isa", "isa",
        std::to_string(static_cast<int>(isa)), "portable, avx2, avx512 or avx512_vnni");
  g_isa_cap = isa;
}

Isa max_isa() {
  Isa cap = g_isa_cap.load();
  if (g_env_isa_cap < cap) cap = g_env_isa_cap;
  return cap < host_isa() ? cap : host_isa();
}

bool kernel_allowed(Isa isa, bool reference) {
  return reference || (impl() == Impl::fast && isa <= max_isa());
}

bool log_kernels() {
  return g_log;
}

void log_kernel_choice(const char* family, const char* chosen, const std::string& declined) {
  std::string line = std::string("npukit: ") + family + " -> " + chosen;
  if (!declined.empty()) line += " (declined:" + declined + ")";
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.insert(line).second) std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace npukit
