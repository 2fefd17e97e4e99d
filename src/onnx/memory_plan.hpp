// The runner's memory plan: intermediate values whose lifetimes do not
// overlap share bytes of one arena, so that a run's activations stay few and
// warm in cache instead of each value writing memory of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npukit::onnx {

// Offsets in the arena are multiples of this (what Tensor guarantees).
inline constexpr uint64_t kArenaAlignment = 64;
inline uint64_t arena_aligned(uint64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

// One value to place: its bytes and the steps (execution order) from the one
// that writes it to the last one that reads it, both inclusive. A step's
// outputs thus never share bytes with its own inputs.
struct Lifetime {
  uint64_t bytes = 0;
  size_t first = 0, last = 0;
};

struct ArenaPlan {
  std::vector<uint64_t> offsets;  // per lifetime
  uint64_t bytes = 0;             // the arena's size
};

// Greedy by size (largest first, each at the lowest aligned offset free over
// its whole lifetime); values with overlapping lifetimes never overlap in bytes.
ArenaPlan plan_arena(const std::vector<Lifetime>& values);

// The lower bound of any arena: the most bytes alive at one step (each value
// rounded up to kArenaAlignment).
uint64_t peak_live_bytes(const std::vector<Lifetime>& values);

}  // namespace npukit::onnx
