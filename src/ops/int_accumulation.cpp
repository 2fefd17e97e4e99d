// IntAccumulation: names, and which one each profile (and this host) gets.
#include "npukit/error.hpp"
#include "npukit/ops/quantized.hpp"

namespace npukit {

const char* int_accumulation_name(IntAccumulation a) {
  switch (a) {
    case IntAccumulation::exact_int32:
      return "exact_int32";
    case IntAccumulation::mlas_u8s8_int16_pairs:
      return "mlas_u8s8_int16_pairs";
  }
  return "invalid";
}

IntAccumulation onnxruntime_accumulation(const CpuFeatures& f) {
  if (!f.avx2) return IntAccumulation::exact_int32;  // MLAS's SSE kernel: pmaddwd on int16
  // MLAS (platform.cpp) installs AVX2, then AVX-VNNI, then AVX512-core
  // (vpmaddubsw again), then AVX512-VNNI: the last one that applies wins.
  const bool vnni = f.avx512_core ? f.avx512_vnni : f.avx_vnni;
  return vnni ? IntAccumulation::exact_int32 : IntAccumulation::mlas_u8s8_int16_pairs;
}

IntAccumulation profile_accumulation(Profile profile) {
  switch (profile) {
    case Profile::onnxruntime: {
      static const IntAccumulation host = onnxruntime_accumulation(host_cpu_features());
      return host;
    }
    case Profile::onnxruntime_avx2:
      return IntAccumulation::mlas_u8s8_int16_pairs;
    default:
      return IntAccumulation::exact_int32;
  }
}

}  // namespace npukit
