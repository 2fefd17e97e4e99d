#include "compare_svg.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "npukit/xml_text.hpp"

namespace npukit::cli {

namespace {

// Identical: pale green. Differing: yellow (one element in a million) to red
// (every element), on a log scale of the differing share.
std::string colour(const LayerDiff& d) {
  if (!d.compared) return "#bdbdbd";
  if (d.differing == 0) return "#e3f2e1";
  const double share = static_cast<double>(d.differing) / static_cast<double>(d.total);
  const double t = std::clamp((std::log10(share) + 6.0) / 6.0, 0.0, 1.0);
  const int g = static_cast<int>(std::lround(220 - 190 * t));
  return fmt::format("#{:02x}{:02x}{:02x}", 250, g, 60);
}

std::string cell_label(const LayerDiff& d) {
  if (!d.compared) return d.note;
  if (d.differing == 0) return "=";
  return fmt::format("{:.3g}% max {:.3g}",
                     100.0 * static_cast<double>(d.differing) / static_cast<double>(d.total),
                     d.max_abs);
}

}  // namespace

std::string heat_map_svg(const HeatMap& map) {
  constexpr int kRowH = 18, kColW = 130, kCharW = 7, kTop = 64, kPad = 10;
  size_t label_chars = 10;
  for (const HeatRow& r : map.rows) label_chars = std::max(label_chars, r.label.size());
  const int label_w = static_cast<int>(std::min<size_t>(label_chars, 60)) * kCharW + kPad;
  const int width = std::max(kPad + label_w + static_cast<int>(map.columns.size()) * kColW + kPad,
                             2 * kPad + static_cast<int>(map.title.size()) * 8);
  const int height = kTop + static_cast<int>(map.rows.size()) * kRowH + 60;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"monospace\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"20\" font-size=\"13\">{}</text>\n",
      width, height, kPad, xml_escaped(map.title));
  for (size_t c = 0; c < map.columns.size(); ++c)
    s += fmt::format("<text class=\"column\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     kPad + label_w + static_cast<int>(c) * kColW + kColW / 2, kTop - 8,
                     xml_escaped(map.columns[c]));
  for (size_t r = 0; r < map.rows.size(); ++r) {
    const HeatRow& row = map.rows[r];
    const int y = kTop + static_cast<int>(r) * kRowH;
    std::string label = row.label.size() > 60 ? row.label.substr(0, 57) + "..." : row.label;
    s += fmt::format("<text class=\"layer\" x=\"{}\" y=\"{}\">{}</text>\n", kPad, y + 13,
                     xml_escaped(label));
    for (size_t c = 0; c < row.cells.size(); ++c) {
      const int x = kPad + label_w + static_cast<int>(c) * kColW;
      s += fmt::format(
          "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"white\"><title>{}: {} vs reference: {}</title></rect>\n",
          x, y, kColW, kRowH, colour(row.cells[c]), xml_escaped(row.value),
          xml_escaped(map.columns[c]), xml_escaped(cell_label(row.cells[c])));
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x + kColW / 2,
                       y + 13, xml_escaped(cell_label(row.cells[c])));
    }
  }
  const int ly = kTop + static_cast<int>(map.rows.size()) * kRowH + 24;
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"#e3f2e1\"/><text x=\"{}\" "
      "y=\"{}\">identical</text>\n",
      kPad, ly, kPad + 20, ly + 11);
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"#fadc3c\"/><text x=\"{}\" "
      "y=\"{}\">few elements differ</text>\n",
      kPad + 110, ly, kPad + 130, ly + 11);
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"#fa1e3c\"/><text x=\"{}\" "
      "y=\"{}\">all differ</text>\n",
      kPad + 290, ly, kPad + 310, ly + 11);
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"#bdbdbd\"/><text x=\"{}\" "
      "y=\"{}\">not comparable</text>\n",
      kPad + 400, ly, kPad + 420, ly + 11);
  return s + "</svg>\n";
}

}  // namespace npukit::cli
