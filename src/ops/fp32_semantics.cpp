#include "npukit/ops/fp32_semantics.hpp"

namespace npukit {

const char* fp32_accumulation_name(Fp32Accumulation a) {
  switch (a) {
    case Fp32Accumulation::sequential:
      return "sequential";
    case Fp32Accumulation::interleaved:
      return "interleaved";
    case Fp32Accumulation::mlas_nchwc16:
      return "mlas_nchwc16";
    case Fp32Accumulation::mlas_nchwc8:
      return "mlas_nchwc8";
  }
  return "invalid";
}

}  // namespace npukit
