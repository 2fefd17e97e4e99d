// A picture of one launch's timeline (docs/npu-simulator.md, "The timeline
// picture"): engines as lanes, instructions as bars coloured by class,
// parallel regions shaded, idle gaps left blank, totals in the legend.
#pragma once

#include <string>

#include "npukit/npu/launch.hpp"

namespace npukit::npu {

struct TimelineOptions {
  int width = 1400;  // pixels of the drawing
};

// Standalone SVG. Bars narrower than a pixel that touch a neighbour of the
// same class are merged so a long kernel stays a small file.
std::string timeline_svg(const LaunchReport& r, const TimelineOptions& options = {});

// The fill colour of an instruction class in the picture.
const char* op_class_colour(OpClass c);

}  // namespace npukit::npu
