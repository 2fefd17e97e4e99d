// Umbrella header for the npukit C++ API.
#pragma once

#include "npukit/dtype.hpp"
#include "npukit/error.hpp"
#include "npukit/ops/conv2d.hpp"
#include "npukit/ops/elementwise.hpp"
#include "npukit/ops/matmul.hpp"
#include "npukit/ops/pool2d.hpp"
#include "npukit/ops/window.hpp"
#include "npukit/parallel.hpp"
#include "npukit/quant/rounding.hpp"
#include "npukit/tensor.hpp"
#include "npukit/version.hpp"
