// The fp32 pointwise (1x1) convolution kernel f32-conv-1x1-avx512: the
// output-channels-in-lanes form of conv_nchw.hpp (same packed weights, same
// driver run_conv_ocl, same per-output sequence of rounded operations) with
// a transposing epilogue: where a tile's positions are consecutive floats of
// the output planes (dense NCHW output), 8 positions x 16 channels are
// transposed in registers and each channel's run is one masked store,
// instead of one 16-lane scatter per position (the scatters were about a
// quarter of the form's time on mobilenet_v2's short 1x1 reductions). The
// AVX2 twin (8 x 8 transposes) also keeps its accumulators in registers.
#pragma once

#include "conv_nchw.hpp"

namespace npukit::cpu {

extern const OclKernel kConv1x1Avx512;  // 16 lanes, blocks of 64 channels, as kOclAvx512
extern const OclKernel kConv1x1Avx2;    // 8 lanes, blocks of 16 channels, as kOclAvx2

}  // namespace npukit::cpu
