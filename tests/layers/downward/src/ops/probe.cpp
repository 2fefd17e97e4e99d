// An ops file including a core header: allowed.
#include "npukit/probe.hpp"
