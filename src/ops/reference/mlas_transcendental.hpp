// Scalar models of ONNX Runtime's MLAS transcendental kernels (x86-64 with
// AVX2/FMA3, the kernels ORT 1.30 picks on every AVX2 or AVX-512 host): the
// same constants and the same sequence of rounded and fused operations.
#pragma once

namespace npukit::ref {

float mlas_logistic(float x);
float mlas_tanh(float x);
float mlas_erf(float x);

}  // namespace npukit::ref
