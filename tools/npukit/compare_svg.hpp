// The picture of `npukit compare MODEL`: layers as rows, profiles as columns,
// each cell coloured by the share of elements that differ from the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit::cli {

struct LayerDiff {
  bool compared = false;  // false: the value is missing or has another type/shape (see note)
  int64_t total = 0, differing = 0;
  double max_abs = 0;  // largest |difference| (codes for integer values)
  std::string note;
};

struct HeatRow {
  std::string label;             // "node (Op)"
  std::string value;             // the value compared
  std::vector<LayerDiff> cells;  // one per column
};

struct HeatMap {
  std::string title;
  std::vector<std::string> columns;  // profiles compared with the reference
  std::vector<HeatRow> rows;
};

std::string heat_map_svg(const HeatMap& map);

}  // namespace npukit::cli
