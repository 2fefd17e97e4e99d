// The x86 features that decide which integer GEMM kernel ONNX Runtime's MLAS
// runs (and hence its u8 x s8 accumulation, ops/quantized.hpp), read from
// CPUID and XGETBV exactly as MLAS's platform initialisation reads them.
#pragma once

#include <string>

namespace npukit {

struct CpuFeatures {
  bool avx2 = false;         // AVX2 + FMA3, OS saves ymm state
  bool avx_vnni = false;     // CPUID.(7,1):EAX[4]
  bool avx512f = false;      // AVX512F, OS saves zmm state (MLAS's NCHWc block 16)
  bool avx512_core = false;  // AVX512F/BW/DQ/VL, OS saves zmm state
  bool avx512_vnni = false;  // CPUID.(7,0):ECX[11]
};

// This host's features (all false on a non-x86 build).
CpuFeatures host_cpu_features();
std::string cpu_features_text(const CpuFeatures& f);  // "avx2 avx_vnni ..." or "none"

}  // namespace npukit
