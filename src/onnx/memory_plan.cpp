// Greedy-by-size arena placement (the memory plan of memory_plan.hpp).
#include "onnx/memory_plan.hpp"

#include <algorithm>
#include <numeric>

namespace npukit::onnx {

namespace {
bool lifetimes_overlap(const Lifetime& a, const Lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}
}  // namespace

ArenaPlan plan_arena(const std::vector<Lifetime>& values) {
  ArenaPlan plan;
  plan.offsets.assign(values.size(), 0);
  std::vector<size_t> by_size(values.size());
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  // Largest first; ties by first step, then index, so the plan is deterministic.
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) {
    if (values[a].bytes != values[b].bytes) return values[a].bytes > values[b].bytes;
    return values[a].first < values[b].first;
  });
  std::vector<size_t> placed;
  for (size_t v : by_size) {
    // The placed values alive with v, by offset: v takes the first gap that fits.
    std::vector<size_t> live;
    for (size_t p : placed)
      if (lifetimes_overlap(values[p], values[v])) live.push_back(p);
    std::sort(live.begin(), live.end(),
              [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    const uint64_t need = arena_aligned(values[v].bytes);
    uint64_t at = 0;
    for (size_t p : live) {
      if (plan.offsets[p] >= at + need) break;
      at = std::max(at, plan.offsets[p] + arena_aligned(values[p].bytes));
    }
    plan.offsets[v] = at;
    plan.bytes = std::max(plan.bytes, at + need);
    placed.push_back(v);
  }
  return plan;
}

uint64_t peak_live_bytes(const std::vector<Lifetime>& values) {
  size_t steps = 0;
  for (const Lifetime& l : values) steps = std::max(steps, l.last + 1);
  std::vector<uint64_t> live(steps, 0);
  for (const Lifetime& l : values)
    for (size_t s = l.first; s <= l.last; ++s) live[s] += arena_aligned(l.bytes);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

}  // namespace npukit::onnx
