// Semantics profiles: named presets that reproduce one real system bit for
// bit. A profile is only a value; each operator family has a function that
// fills its parameter struct's semantic fields from it (never a branch on the
// profile inside a kernel).
#pragma once

#include <string>
#include <vector>

namespace npukit {

enum class Profile : uint8_t {
  onnxruntime,  // ONNX Runtime 1.30 CPU kernels
  pytorch,      // PyTorch 1.13 CPU
  ghp_rtl,      // GHP-FPGA accelerator RTL (seed 000)
  ghp_golden,   // GHP-FPGA Python golden model
  bm1684,       // Sophgo BM1684 (OKKernel C-model, bm_atomic)
  cvm,          // MRT / CVM runtime (seed 001)
  tflite,       // TensorFlow Lite / CMSIS-NN reference kernels
  mico,         // MiCo-Lib (seed 003)
};

const char* profile_name(Profile p);
Profile profile_from_name(const std::string& name);  // throws npukit::Error naming the choices
const std::vector<Profile>& all_profiles();
std::string profile_names();  // "onnxruntime, pytorch, ..."

}  // namespace npukit
