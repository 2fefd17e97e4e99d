// Semantics profiles: named presets that reproduce one real system bit for
// bit. A profile is only a value; each operator family has a function that
// fills its parameter struct's semantic fields from it (never a branch on the
// profile inside a kernel).
#pragma once

#include <string>
#include <vector>

namespace npukit {

enum class Profile : uint8_t {
  onnxruntime,  // ONNX Runtime 1.30 CPU kernels, as they run on this host (see below)
  pytorch,      // PyTorch 1.13 CPU
  ghp_rtl,      // GHP-FPGA accelerator RTL (seed 000)
  ghp_golden,   // GHP-FPGA Python golden model
  bm1684,       // Sophgo BM1684 (OKKernel C-model, bm_atomic)
  cvm,          // MRT / CVM runtime (seed 001)
  tflite,       // TensorFlow Lite / CMSIS-NN reference kernels
  mico,         // MiCo-Lib (seed 003)
  // ONNX Runtime 1.30 with its u8 x s8 integer GEMM forced to one x86 kernel
  // family, whatever the host (every other operator as `onnxruntime`):
  onnxruntime_avx2,  // vpmaddubsw: adjacent products summed with int16 saturation
  onnxruntime_vnni,  // vpdpbusd (AVX-VNNI / AVX512-VNNI): exact int32 sums
};

const char* profile_name(Profile p);
Profile profile_from_name(const std::string& name);  // throws npukit::Error naming the choices
const std::vector<Profile>& all_profiles();
std::string profile_names();  // "onnxruntime, pytorch, ..."

// The profile whose semantics `p` shares for every operator it does not
// override: onnxruntime for onnxruntime_avx2 / onnxruntime_vnni, else p.
// apply_profile functions switch on this; only the integer GEMM accumulation
// looks at the variant (ops/quantized.hpp, onnxruntime_accumulation).
Profile semantics_base(Profile p);

}  // namespace npukit
