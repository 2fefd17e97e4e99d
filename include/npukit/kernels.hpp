// Which implementation of an operator runs. Every operator family has one
// ordered list of kernels (best first, the reference last), each named
// dtype-op-variant-isa like XNNPACK's micro-kernels and each able to decline a
// problem with a reason. The first kernel that the host's ISA allows, that the
// current settings allow and that does not decline runs. Every kernel computes
// exactly what the reference computes (integer and fp32 alike), so the choice
// changes only the speed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit {

// Instruction-set levels, each implying the ones before it.
enum class Isa : uint8_t {
  portable,     // plain C++ (any CPU)
  avx2,         // AVX2 + FMA3
  avx512,       // AVX-512 F/BW/DQ/VL
  avx512_vnni,  // AVX-512 VNNI
};

const char* isa_name(Isa isa);
Isa isa_from_name(const std::string& name);  // throws npukit::Error naming the choices

// The best level this host runs.
Isa host_isa();

// Implementation policy.
enum class Impl : uint8_t {
  fast,       // the first applicable kernel of each list (the default)
  reference,  // always the reference kernels: the specification
};

// NPUKIT_IMPL=reference|fast sets the initial policy; NPUKIT_MAX_ISA=portable|avx2|... caps the
// level for the process: set_max_isa never lifts it, so a capped run (tests too) is that host's.
void set_impl(Impl impl);
Impl impl();
void set_max_isa(Isa isa);  // capped at host_isa() and at NPUKIT_MAX_ISA
Isa max_isa();              // min(set_max_isa's level, NPUKIT_MAX_ISA, host_isa())

// Whether the current settings let a kernel of level `isa` run: the reference
// always, the others under Impl::fast up to max_isa().
bool kernel_allowed(Isa isa, bool reference);

// NPUKIT_LOG_KERNELS=1 prints each kernel choice (and why faster kernels
// declined) to stderr, once per distinct line.
bool log_kernels();

struct KernelInfo {
  std::string family;   // e.g. "pool2d"
  std::string name;     // e.g. "f32-avgpool-nchw-avx2"
  Isa isa;              // level the kernel needs
  std::string applies;  // when it applies, in words
  bool reference;       // the family's specification
};

// Every kernel of every family, in dispatch order within a family.
std::vector<KernelInfo> list_kernels();

}  // namespace npukit
