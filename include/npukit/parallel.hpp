// Threading. Work is split over independent outputs only, so every result is
// identical for any thread count (each output is computed by one thread, in a
// fixed order).
#pragma once

#include <cstdint>
#include <functional>

namespace npukit {

// 0 means "all hardware threads" (the default). Also read once from NPUKIT_NUM_THREADS.
void set_num_threads(int n);
int num_threads();

// Calls body(i) for i in [0, count), spread over the threads in static chunks.
void parallel_for(int64_t count, const std::function<void(int64_t)>& body);

}  // namespace npukit
