#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "npukit/npu/timeline.hpp"
#include "npukit/xml_text.hpp"

namespace npukit::npu {

const char* op_class_colour(OpClass c) {
  switch (c) {
    case OpClass::gdma:
      return "#4e79a7";
    case OpClass::conv:
      return "#e15759";
    case OpClass::depthwise:
      return "#f28e2b";
    case OpClass::matmul:
      return "#b07aa1";
    case OpClass::pool:
      return "#59a14f";
    case OpClass::arith:
      return "#76b7b2";
    case OpClass::sfu:
      return "#edc948";
    case OpClass::lookup:
      return "#ff9da7";
    case OpClass::cast:
      return "#9c755f";
    case OpClass::fixed_point:
      return "#8cd17d";
    case OpClass::other:
      break;
  }
  return "#bab0ac";
}

namespace {

constexpr int kLeft = 70, kTop = 50, kLaneHeight = 40, kLaneGap = 14;

std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof b, f, a);
  return b;
}

// A tick step of 1, 2 or 5 times a power of ten giving about 10 ticks.
double tick_step(double total_us) {
  const double raw = std::max(total_us, 1e-3) / 10.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10.0 * p;
}

struct Bar {
  int64_t start, end;
  OpClass op_class;
  std::string title;
  int count;
};

constexpr Engine kEngines[] = {Engine::gdma, Engine::bdc};

// Where things go: the plot's width, the clock and the cycle -> x mapping.
struct Layout {
  int width, plot;
  int64_t total;  // device cycles, at least 1
  double clock, px_per_cycle;
  int lanes_bottom, legend_top, legend_rows, height;
  double x_of(int64_t cycle) const { return kLeft + static_cast<double>(cycle) * px_per_cycle; }
};

Layout layout_of(const LaunchReport& r, const TimelineOptions& options, size_t classes) {
  Layout l;
  l.width = std::max(options.width, 400);
  l.plot = l.width - kLeft - 20;
  l.total = std::max<int64_t>(r.device_cycles, 1);
  l.clock = r.clock_mhz > 0 ? r.clock_mhz : 1.0;
  l.px_per_cycle = static_cast<double>(l.plot) / static_cast<double>(l.total);
  l.lanes_bottom = kTop + 2 * (kLaneHeight + kLaneGap);
  l.legend_top = l.lanes_bottom + 58;  // below the axis and its unit label
  l.legend_rows = static_cast<int>((classes + 3) / 4) + 1;
  l.height = l.legend_top + 22 * (l.legend_rows - 1) + 14;
  return l;
}

// Per engine, in time order, merging sub-pixel neighbours of one class; adds
// each slice's cycles to its class's total.
std::vector<Bar> lane_bars(const LaunchReport& r, Engine engine, double px_per_cycle, double clock,
                           std::map<OpClass, int64_t>& class_cycles) {
  std::vector<const TraceSlice*> mine;
  for (const TraceSlice& s : r.slices)
    if (s.engine == engine) mine.push_back(&s);
  std::stable_sort(mine.begin(), mine.end(),
                   [](const TraceSlice* a, const TraceSlice* b) { return a->start < b->start; });
  std::vector<Bar> bars;
  for (const TraceSlice* s : mine) {
    class_cycles[s->op_class] += s->cycles;
    Bar* last = bars.empty() ? nullptr : &bars.back();
    if (last && last->op_class == s->op_class && last->end == s->start &&
        static_cast<double>(last->end - last->start) * px_per_cycle < 1.0) {
      last->end = s->start + s->cycles;
      ++last->count;
      continue;
    }
    const std::string title = s->function + " (" + op_class_name(s->op_class) + ") " +
                              std::to_string(s->cycles) + " cycles, " +
                              fmt("%.3f us", static_cast<double>(s->cycles) / clock) +
                              (s->detail.empty() ? "" : ": " + s->detail) +
                              (s->call_site.empty() ? "" : ", at " + s->call_site);
    bars.push_back(Bar{s->start, s->start + s->cycles, s->op_class, title, 1});
  }
  return bars;
}

std::string svg_header(const LaunchReport& r, const Layout& l) {
  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(l.width) +
       "\" height=\"" + std::to_string(l.height) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text class=\"title\" x=\"" + std::to_string(kLeft) + "\" y=\"22\" font-size=\"15\">" +
       xml_escaped("kernel '" + r.kernel + "': " + fmt("%.3f us", r.device_us) + " estimated (" +
                   std::to_string(r.device_cycles) + " cycles at " + fmt("%.0f MHz", l.clock) +
                   fmt(" + %.1f us launch), ", r.launch_overhead_us) +
                   std::to_string(r.instructions) + " instructions") +
       "</text>\n";
  return s;
}

// Parallel regions shaded behind the lanes.
std::string svg_regions(const LaunchReport& r, const Layout& l) {
  std::string s;
  for (const TraceRegion& g : r.regions) {
    s += "<rect class=\"region\" x=\"" + fmt("%.2f", l.x_of(g.start)) + "\" y=\"" +
         std::to_string(kTop - 6) + "\" width=\"" +
         fmt("%.2f", std::max(0.5, static_cast<double>(g.end - g.start) * l.px_per_cycle)) +
         "\" height=\"" + std::to_string(l.lanes_bottom - kTop + 2) +
         "\" fill=\"#fff3c4\" stroke=\"#e0c060\" stroke-width=\"0.5\"><title>parallel region " +
         fmt("%.3f us", static_cast<double>(g.end - g.start) / l.clock) + "</title></rect>\n";
  }
  return s;
}

// One engine's lane: its background, its label and its bars.
std::string svg_lane(int lane, Engine engine, const std::vector<Bar>& bars, const Layout& l) {
  const int y = kTop + lane * (kLaneHeight + kLaneGap);
  std::string s;
  s += "<rect class=\"lane\" data-engine=\"" + std::string(engine_name(engine)) + "\" x=\"" +
       std::to_string(kLeft) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
       std::to_string(l.plot) + "\" height=\"" + std::to_string(kLaneHeight) +
       "\" fill=\"#f4f4f4\" fill-opacity=\"0.6\" stroke=\"#cccccc\"/>\n";
  s += "<text class=\"lane-label\" x=\"8\" y=\"" + std::to_string(y + kLaneHeight / 2 + 4) + "\">" +
       engine_name(engine) + "</text>\n";
  for (const Bar& b : bars) {
    const double w = std::max(0.3, static_cast<double>(b.end - b.start) * l.px_per_cycle);
    s += "<rect class=\"slice\" data-class=\"" + std::string(op_class_name(b.op_class)) +
         "\" x=\"" + fmt("%.2f", l.x_of(b.start)) + "\" y=\"" + std::to_string(y + 3) +
         "\" width=\"" + fmt("%.2f", w) + "\" height=\"" + std::to_string(kLaneHeight - 6) +
         "\" fill=\"" + op_class_colour(b.op_class) +
         "\" stroke=\"white\" stroke-width=\"0.6\"><title>" +
         xml_escaped(b.count > 1 ? std::to_string(b.count) + " instructions, from " + b.title
                                 : b.title) +
         "</title></rect>\n";
  }
  return s;
}

// The time axis in microseconds.
std::string svg_axis(const Layout& l) {
  const double total_us = static_cast<double>(l.total) / l.clock;
  const double step = tick_step(total_us);
  const int y = l.lanes_bottom;
  std::string s = "<g class=\"axis\">\n";
  s += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" +
       std::to_string(kLeft + l.plot) + "\" y2=\"" + std::to_string(y) + "\" stroke=\"black\"/>\n";
  for (double t = 0; t <= total_us * (1 + 1e-9); t += step) {
    const double x = kLeft + t / total_us * l.plot;
    s += "<line x1=\"" + fmt("%.2f", x) + "\" y1=\"" + std::to_string(y) + "\" x2=\"" +
         fmt("%.2f", x) + "\" y2=\"" + std::to_string(y + 5) + "\" stroke=\"black\"/>";
    s += "<text x=\"" + fmt("%.2f", x) + "\" y=\"" + std::to_string(y + 18) +
         "\" text-anchor=\"middle\">" + fmt("%g", t) + "</text>\n";
  }
  s += "<text x=\"" + std::to_string(kLeft + l.plot) + "\" y=\"" + std::to_string(y + 32) +
       "\" text-anchor=\"end\">us (device timeline, launch overhead not drawn)</text>\n";
  return s + "</g>\n";
}

// Legend: one swatch per class with its total, then the engine totals.
std::string svg_legend(const LaunchReport& r, const std::map<OpClass, int64_t>& class_cycles,
                       const Layout& l) {
  auto us = [&](int64_t c) { return fmt("%.3f us", static_cast<double>(c) / l.clock); };
  std::string s = "<g class=\"legend\">\n";
  int i = 0;
  for (const auto& [c, cycles] : class_cycles) {
    const int x = kLeft + (i % 4) * 300, y = l.legend_top + (i / 4) * 22;
    s += "<rect class=\"legend-swatch\" data-class=\"" + std::string(op_class_name(c)) + "\" x=\"" +
         std::to_string(x) + "\" y=\"" + std::to_string(y - 11) +
         "\" width=\"14\" height=\"14\" fill=\"" + op_class_colour(c) + "\"/>";
    s += "<text class=\"legend-entry\" x=\"" + std::to_string(x + 20) + "\" y=\"" +
         std::to_string(y) + "\">" +
         xml_escaped(std::string(op_class_name(c)) + ": " + us(cycles)) + "</text>\n";
    ++i;
  }
  const int y = l.legend_top + (l.legend_rows - 1) * 22;
  s += "<text class=\"legend-totals\" x=\"" + std::to_string(kLeft) + "\" y=\"" +
       std::to_string(y) + "\">" +
       xml_escaped("GDMA busy " + us(r.gdma_busy_cycles) + ", BDC busy " + us(r.bdc_busy_cycles) +
                   ", overlap " + us(r.overlap_cycles) + ", both idle " +
                   us(std::max<int64_t>(0, r.device_cycles - r.gdma_busy_cycles -
                                               r.bdc_busy_cycles + r.overlap_cycles)) +
                   ", shaded: parallel regions") +
       "</text>\n";
  return s + "</g>\n";
}

}  // namespace

std::string timeline_svg(const LaunchReport& r, const TimelineOptions& options) {
  // The lanes' bars first: the legend's height depends on how many classes they hold.
  const Layout probe = layout_of(r, options, 0);
  std::map<OpClass, int64_t> class_cycles;
  std::vector<Bar> bars[2];
  for (int e = 0; e < 2; ++e)
    bars[e] = lane_bars(r, kEngines[e], probe.px_per_cycle, probe.clock, class_cycles);
  const Layout l = layout_of(r, options, class_cycles.size());
  std::string s = svg_header(r, l) + svg_regions(r, l);
  for (int e = 0; e < 2; ++e) s += svg_lane(e, kEngines[e], bars[e], l);
  return s + svg_axis(l) + svg_legend(r, class_cycles, l) + "</svg>\n";
}

}  // namespace npukit::npu
