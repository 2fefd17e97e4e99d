// Text for SVG and other XML output (the timeline and `npukit compare --svg`).
#pragma once

#include <string>
#include <string_view>

namespace npukit {

// s with & < > " escaped and control bytes (not allowed in XML 1.0 text) as spaces.
std::string xml_escaped(std::string_view s);

}  // namespace npukit
