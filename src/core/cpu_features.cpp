// CPUID/XGETBV, in the order and with the bits MLAS (onnxruntime/core/mlas,
// platform.cpp) tests them, so that `onnxruntime` picks the kernel ORT picks.
#include "npukit/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdint>

namespace npukit {

#if defined(__x86_64__) || defined(__i386__)
namespace {

uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

CpuFeatures read_cpu_features() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const unsigned ecx1 = c;
  if ((ecx1 & 0x18000000u) != 0x18000000u) return f;  // AVX + OSXSAVE
  const uint64_t xcr0 = read_xcr0();
  if ((xcr0 & 0x6) != 0x6) return f;  // OS saves xmm and ymm
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned ebx7 = b, ecx7 = c;
  f.avx2 = (ecx1 & 0x1000u) != 0 && (ebx7 & 0x20u) != 0;  // FMA3 and AVX2
  if (!f.avx2) return f;
  __cpuid_count(7, 1, a, b, c, d);
  f.avx_vnni = (a & 0x10u) != 0;
  // AVX512F with OS zmm state, then F/DQ/BW/VL ("core") and VNNI.
  f.avx512f = (ebx7 & 0x10000u) != 0 && (xcr0 & 0xE0) == 0xE0;
  f.avx512_core = f.avx512f && (ebx7 & 0xC0020000u) == 0xC0020000u;
  f.avx512_vnni = f.avx512_core && (ecx7 & 0x800u) != 0;
  return f;
}

}  // namespace

// Read once: CPUID is slow (a VM exit under a hypervisor) and convolutions
// ask on every call (conv2d.cpp's onnxruntime accumulation).
CpuFeatures host_cpu_features() {
  static const CpuFeatures f = read_cpu_features();
  return f;
}
#else
CpuFeatures host_cpu_features() {
  return {};
}
#endif

std::string cpu_features_text(const CpuFeatures& f) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(f.avx2, "avx2");
  add(f.avx_vnni, "avx_vnni");
  add(f.avx512_core, "avx512_core");
  add(f.avx512_vnni, "avx512_vnni");
  return s.empty() ? "none" : s;
}

}  // namespace npukit
