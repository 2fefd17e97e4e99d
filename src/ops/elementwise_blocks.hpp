// Element-wise operators of any rank (up to kMaxRank) on kernels written for
// 4-D views. Every output element depends only on the inputs at its own
// index, so walking the index space in any grouping gives the same bits: axes
// that every view walks as one (stride[i] == stride[i+1] * size[i+1]) merge,
// size-1 axes drop, and what is still above 4-D becomes a loop over 4-D blocks.
#pragma once

#include <functional>
#include <vector>

#include "npukit/tensor.hpp"

namespace npukit {

// `views` all have the same shape (operands already broadcast to the output's
// shape, stride 0 on broadcast axes). Calls `block` with one 4-D view per
// input, in the same order, for every block, in row-major order of the
// leading axes. A view that is contiguous stays contiguous in its blocks.
void for_each_4d_block(const std::vector<TensorView>& views,
                       const std::function<void(const std::vector<TensorView>&)>& block);

}  // namespace npukit
