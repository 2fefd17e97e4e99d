// `npukit npu timeline trace.json -o timeline.svg`: the picture of a launch
// recorded with NPUKIT_TRACE (docs/npu-simulator.md, "The timeline picture").
#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "npukit/error.hpp"
#include "npukit/npu/timeline.hpp"
#include "npukit/npu/trace.hpp"

namespace npukit::cli {

namespace {

constexpr const char* kFn = "npukit npu timeline";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

int run_timeline(const std::string& trace, const std::string& out, int launch, int width) {
  std::ifstream in(trace, std::ios::binary);
  if (!in) throw Error(kFn, "trace", trace, "a readable file written with NPUKIT_TRACE=<file>");
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<npu::LaunchReport> launches = npu::read_chrome_trace(text.str());
  if (launches.empty()) throw Error(kFn, "trace", trace, "a trace holding at least one launch");
  const int count = static_cast<int>(launches.size());
  if (launch < -1 || launch >= count)
    throw Error(kFn, "--launch", std::to_string(launch),
                "[0, " + std::to_string(count - 1) + "] or -1 for the last");
  const npu::LaunchReport& r = launches[launch < 0 ? count - 1 : launch];
  npu::TimelineOptions options;
  options.width = width;
  const std::string svg = npu::timeline_svg(r, options);
  const bool png = ends_with(out, ".png");
  const std::string svg_path = png ? out + ".svg" : out;
  std::ofstream f(svg_path, std::ios::binary);
  if (!f) throw Error(kFn, "-o", out, "a writable file");
  f << svg;
  f.close();
  if (png) {
    // PNG through a converter of the system (librsvg2-bin or ImageMagick).
    const std::string cmd = "(rsvg-convert -o '" + out + "' '" + svg_path + "' || convert '" +
                            svg_path + "' '" + out + "') 2>/dev/null";
    const int rc = std::system(cmd.c_str());
    std::remove(svg_path.c_str());
    if (rc != 0)
      throw Error(kFn, "-o", out, "a .svg file (no rsvg-convert or convert found to make PNG)");
  }
  fmt::print("{}: launch {} of {} ('{}', {:.3f} us, {} slices) -> {}\n", trace,
             launch < 0 ? count - 1 : launch, count, r.kernel, r.device_us, r.slices.size(), out);
  return 0;
}

}  // namespace

void add_npu_command(CLI::App& app) {
  CLI::App* npu = app.add_subcommand("npu", "The simulated BM1684: cost-model tools");
  npu->require_subcommand(1);
  CLI::App* tl = npu->add_subcommand(
      "timeline", "Draw a launch of an NPUKIT_TRACE file as an SVG (or PNG) timeline");
  static std::string trace, out = "timeline.svg";
  static int launch = 0, width = 1400;
  tl->add_option("trace", trace, "trace file written with NPUKIT_TRACE=<file>")->required();
  tl->add_option("-o,--output", out, "picture to write (.svg, or .png through rsvg-convert)");
  tl->add_option("--launch", launch, "which launch of the file (0 = first, -1 = last)");
  tl->add_option("--width", width, "width in pixels");
  tl->callback([] { run_timeline(trace, out, launch, width); });
}

}  // namespace npukit::cli
