// QLinearAveragePool variants x8_qavgpool_{nchw,nhwc}_portable: the shared body
// compiled for the baseline target (any CPU).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "npukit/parallel.hpp"
#include "ops/cpu/qavgpool.hpp"

#define NPUKIT_QAVG_NS isa_portable
#define NPUKIT_QAVG_ISA portable
#define NPUKIT_QAVG_LEVEL 0
#include "ops/cpu/x8-qavgpool-body.inc"
