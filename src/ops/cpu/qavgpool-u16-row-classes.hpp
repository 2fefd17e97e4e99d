// The output rows of an NCHW plane grouped by their window's row counts, for
// the u16 average kernels of both ISAs (x8-qavgpool-u16-{avx2,avx512}.cpp):
// rows with the same (valid, clipped) counts (a few classes: the border rows
// and the rest) share the final step's lane constants, one table row of OWp
// output columns per class. Plain scalar code, included inside each ISA's
// region with that ISA's lane_consts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/cpu/qavgpool.hpp"

namespace npukit::cpu {

struct RowClasses {
  std::vector<std::pair<int32_t, int32_t>> keys;  // per class: the rows' valid and clipped counts
  std::vector<int32_t> row_class;                 // per output row
  std::vector<int32_t> otab;                      // [class][OWp]: the lane's integer offset
  std::vector<float> rtab;                        // [class][OWp]: the lane's r
};

// `lane(valid, clipped)` gives a lane's constants (.offset, .r) for a window
// of that many taps; lanes past OW take a one-tap window's (never stored).
template <class LaneFn>
RowClasses row_classes(const QAvgPlan& P, int64_t OWp, const LaneFn& lane) {
  RowClasses rc;
  rc.row_class.resize(static_cast<size_t>(P.h.out));
  for (int64_t oh = 0; oh < P.h.out; ++oh) {
    const std::pair<int32_t, int32_t> key{P.h.valid[static_cast<size_t>(oh)],
                                          P.h.clipped[static_cast<size_t>(oh)]};
    auto it = std::find(rc.keys.begin(), rc.keys.end(), key);
    if (it == rc.keys.end()) {
      it = rc.keys.insert(rc.keys.end(), key);
      for (int64_t o = 0; o < OWp; ++o) {
        const auto i = static_cast<size_t>(o);
        const auto c =
            o < P.w.out ? lane(key.first * P.w.valid[i], key.second * P.w.clipped[i]) : lane(1, 1);
        rc.otab.push_back(c.offset);
        rc.rtab.push_back(c.r);
      }
    }
    rc.row_class[static_cast<size_t>(oh)] = static_cast<int32_t>(it - rc.keys.begin());
  }
  return rc;
}

}  // namespace npukit::cpu
