// Batch-sliced execution: a graph whose every node treats the items of the
// batch (axis 0) independently runs over slices of the batch, node after node
// per slice, so that a slice's intermediates stay in the core's L2 cache
// instead of streaming the whole batch through memory between nodes. Each
// output element is computed by the same arithmetic whatever the batch size
// (every kernel a plan may pick gives its reference's bits), so the outputs
// are the unsliced run's bytes. NPUKIT_BATCH_SLICES turns it off ("off") or
// fixes the images per slice (a number); unset or "auto" sizes slices to L2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/graph.hpp"

namespace npukit::onnx {

// One planned node as the analysis sees it: the node and its value ids
// (SIZE_MAX for an absent input).
struct SliceStep {
  const Node* node;
  const std::vector<size_t>* in;
  const std::vector<size_t>* out;
};

// Why the planned graph cannot run over slices of its batch, or "" when it
// can. On success `batch[v]` says whether value v carries the batch on axis 0
// (graph inputs and everything computed from them); the other values are
// constants or computed from constants only.
std::string batch_independence(const std::vector<SliceStep>& steps,
                               const std::vector<Operand>& types,
                               const std::vector<size_t>& input_ids,
                               const std::vector<size_t>& output_ids, std::vector<char>& batch);

// Whether a plan made for `images` per slice has the full plan's shapes: the
// batch values with axis 0 = images, every other value unchanged.
bool slice_plan_matches(const std::vector<Operand>& full, const std::vector<Operand>& slice,
                        const std::vector<char>& batch, int64_t images);

// NPUKIT_BATCH_SLICES: -1 off, 0 automatic, n > 0 images per slice.
int64_t batch_slice_setting();

// Images per slice so that the largest step's batch operands of one slice fit
// in the L2 cache of a core (queried; 1 MiB when unknown); at least 1.
int64_t auto_slice_images(const std::vector<SliceStep>& steps, const std::vector<Operand>& types,
                          const std::vector<char>& batch, int64_t batch_size);

// Lanes running slices at once: the thread count (at most 4 and the slice
// count), or 1 with NPUKIT_SLICE_THREADS=nodes (the threads then split each
// node, as unsliced runs do). Each lane has its own slice plans and buffers.
int64_t slice_lanes(size_t slice_count);

// Slice sizes covering `batch_size` images with slices of at most `images`,
// as even as possible with at most two distinct sizes (largest first).
std::vector<int64_t> slice_sizes(int64_t batch_size, int64_t images);

// With NPUKIT_LOG_SLICES set: "batch slices: <what>" on stderr (tests read it).
void log_slices(const std::string& what);

// The rows [first, first + count) on axis 0 of a view.
TensorView batch_rows(const TensorView& v, int64_t first, int64_t count);

}  // namespace npukit::onnx
