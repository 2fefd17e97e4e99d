// The shared engine of the fast fp32 convolution and matrix multiplication:
// many independent dot products, each summed in a fixed order that the caller
// states as "chains" (one accumulator per chain, steps in order). Outputs are
// computed 6 positions x 16 columns at a time with the 16 columns in SIMD
// lanes, so every lane performs exactly the scalar sequence of its own output:
// one rounded product, then one rounded addition per step (no FMA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace npukit::cpu {

inline constexpr int64_t kDotPositions = 6;  // outputs per tile along the positions
inline constexpr int64_t kDotColumns = 16;   // outputs per tile along the columns (lanes)

// Sums over steps e of chain c, in order, starting from +0:
//   S[c][p][col] = sum_e src[base[p] + offset[e]] * w[e][col].
struct DotChains {
  const float* src = nullptr;
  std::vector<int64_t> base;       // per position: where its operand values start in src
  std::vector<int64_t> offset;     // per step, all chains one after the other
  std::vector<int64_t> chain_end;  // chain c is steps [chain_end[c-1], chain_end[c]); 1 to 4 chains
  std::vector<float> packed;       // weights packed by pack_columns
  int64_t columns = 0;
  bool flush_denormals = false;  // FTZ and DAZ (x86 MXCSR) while summing and finishing

  // weight(e, col) for step e (in the order of `offset`) and column col.
  template <class Weight>
  void pack_columns(int64_t cols, Weight weight) {
    columns = cols;
    const int64_t steps = static_cast<int64_t>(offset.size());
    const int64_t blocks = (cols + kDotColumns - 1) / kDotColumns;
    packed.assign(static_cast<size_t>(blocks * steps * kDotColumns), 0.0f);
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t e = 0; e < steps; ++e)
        for (int64_t l = 0; l < kDotColumns && b * kDotColumns + l < cols; ++l)
          packed[static_cast<size_t>((b * steps + e) * kDotColumns + l)] =
              weight(e, b * kDotColumns + l);
  }
};

// The chain sums of one tile: sums[c][i][l] for position p0 + i (i < positions)
// and column col0 + l (l < cols).
struct DotTile {
  int64_t p0, positions, col0, cols;
  const float (*sums)[kDotPositions][kDotColumns];
};

// Whether the flush_denormals setting can be honoured here (x86: MXCSR).
bool dot_chains_can_flush();

// Computes every tile and calls finish(tile) for it on the thread that
// computed it (under the same FTZ/DAZ setting), so finish does the last
// scalar roundings (combining chains, bias, result_add). Threaded with
// parallel_for over tiles; results do not depend on the thread count.
template <class Finish>
void run_dot_chains(const DotChains& d, Finish&& finish);

// Non-template core of run_dot_chains.
using DotFinish = void (*)(void* ctx, const DotTile& tile);
void run_dot_chains(const DotChains& d, DotFinish finish, void* ctx);

template <class Finish>
void run_dot_chains(const DotChains& d, Finish&& finish) {
  using F = std::remove_reference_t<Finish>;
  run_dot_chains(
      d, [](void* ctx, const DotTile& t) { (*static_cast<F*>(ctx))(t); },
      const_cast<void*>(static_cast<const void*>(&finish)));
}

}  // namespace npukit::cpu
