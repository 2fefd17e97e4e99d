// The fp32 rule a profile gives the product-summing families (conv2d,
// depthwise2d, matmul): one place, so that they cannot drift apart.
#pragma once

#include "npukit/error.hpp"
#include "npukit/ops/fp32_semantics.hpp"
#include "npukit/profile.hpp"

namespace npukit::detail {

// bm1684: the C-model's interleaved accumulators with denormals flushed;
// onnxruntime and pytorch: the sequential order without flushing. `allowed`
// ends the error text ("onnxruntime, pytorch or bm1684 for fp32 matmul").
template <class Params>
void apply_fp32_product_profile(Params& p, Profile profile, const char* allowed) {
  switch (semantics_base(profile)) {
    case Profile::bm1684:
      p.accumulation = Fp32Accumulation::interleaved;
      p.flush_denormals = true;
      return;
    case Profile::onnxruntime:
    case Profile::pytorch:
      p.accumulation = Fp32Accumulation::sequential;
      p.flush_denormals = false;
      return;
    default:
      fail("npukit::apply_profile", "profile", profile_name(profile), allowed);
  }
}

}  // namespace npukit::detail
