// Plan of x8_qavgpool_flat3x3_nchw_avx512: 3x3 windows, stride 1, one pixel
// of padding on every side (k3s1p1) over contiguous NCHW tensors with rows of
// at most 16 columns, the integer final steps of rows16 (qavgpool-rows16.hpp).
// The kernel walks the whole tensor as one flat stream of 64-position chunks:
// no lane is left idle at the end of a row or plane. A chunk's positions are
// split by parity: 32 word lanes hold its even positions ("E"), 32 its odd
// ones ("O"), so one 64-byte load feeds both and the codes go back as E | O <<
// 8 with no narrowing shuffle. Every per-position constant repeats with
// period lcm(H * W, 64) positions, `cpp` chunks, so chunk c reads the
// constants of chunk c % cpp: one aligned 64-byte line per table.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

struct Flat3x3Plan {
  int64_t W = 0;            // plane width: the vertical neighbour is W positions away
  int64_t cpp = 0;          // chunks per period
  int64_t positions = 0;    // N * C * H * W
  bool any_even = false;    // some divisor is even (the second quotient of rows16)
  bool clamp_free = false;  // rows16's clamp changes no code (Rows16Plan::clamp_free)
  int sh = 0, K = 0;        // rows16's shift and offset
  // Per chunk of the period, the bytes kept of x's 64-byte loads at the
  // chunk's offsets -1, 0 and +1 (3 masks; bit k: position 64c + k):
  //   -1: even k: the left tap of position k (if it has one); odd k: the
  //       centre of position k - 1;
  //    0: even k: the left tap of position k + 1; odd k: the centre of k;
  //   +1: the right tap of position k (if it has one).
  // Pair sums of them give E = pairs(-1) + low bytes(+1), O = pairs(0) +
  // high bytes(+1): each position's three row taps.
  std::vector<uint64_t> byte_masks;
  // Per chunk: the even lanes that have an upper and a lower neighbour on
  // the input, then the odd lanes' (4 masks; bit i: position 64c + 2i (+1)).
  std::vector<uint32_t> lane_masks;
  // Per chunk, 64-byte aligned: rows16_codes's lane fields A, m, e of the
  // even positions (32 words each), then of the odd ones: 192 words.
  const uint16_t* fields() const {
    const auto a = reinterpret_cast<uintptr_t>(field_storage.data());
    return field_storage.data() + ((64 - a % 64) % 64) / 2;
  }
  std::vector<uint16_t> field_storage;  // 192 * cpp words and 32 for the alignment
  // Even W only (odd positions always have a left neighbour, even ones a
  // right one): per chunk, 64-byte aligned, the vpmaddubsw weights that
  // replace the masks of the loads at -1 and +1 (bit k of a mask -> byte k),
  // the second without its even bytes: E = pairs(-1, w0) + low bytes(+1),
  // O = pairs(0) + pairs(+1, w1).
  const uint8_t* weights() const {
    const auto a = reinterpret_cast<uintptr_t>(weight_storage.data());
    return weight_storage.data() + (64 - a % 64) % 64;
  }
  std::vector<uint8_t> weight_storage;  // 128 * cpp bytes and 64 for the alignment
  // Even W only, for the AVX2 kernel (no mask registers): per chunk, 64-byte
  // aligned, 0xffff or 0 per lane i for "position 64c + 2i has an upper
  // neighbour" (32 words), then the same for a lower one; the odd lanes share
  // them (lanes i of both parities lie on one row).
  const uint16_t* row_words() const {
    const auto a = reinterpret_cast<uintptr_t>(row_word_storage.data());
    return row_word_storage.data() + ((64 - a % 64) % 64) / 2;
  }
  std::vector<uint16_t> row_word_storage;  // 64 * cpp words and 32 for the alignment
};

// nullptr and *F filled (F may be null) when the kernel takes p, else why not.
const char* flat3x3_build(const QAvgPoolProblem& p, Flat3x3Plan* F);

// The plan of p, or nullptr with *why set: the calling thread's last result
// is kept and handed out again for a call of the same geometry, arithmetic
// and strides (the kernel list's decline check and the kernel share it).
std::shared_ptr<const Flat3x3Plan> flat3x3_plan(const QAvgPoolProblem& p, const char** why);

}  // namespace npukit::cpu
