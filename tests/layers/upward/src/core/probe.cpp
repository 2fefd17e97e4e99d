// A core file reaching up into ops: the layering check must refuse it.
#include "npukit/ops/probe.hpp"
