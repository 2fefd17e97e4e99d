// What the developer reads: the NPUKIT_PROFILE text report and the
// NPUKIT_TRACE Chrome trace-event JSON of launches.
#include <algorithm>
#include <cstdio>
#include <string>

#include "npukit/npu/launch.hpp"

namespace npukit::npu {

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::gdma:
      return "GDMA";
    case Engine::bdc:
      return "BDC";
    case Engine::host:
      return "host";
  }
  return "?";
}

namespace {

double us(int64_t cycles, double clock_mhz) {
  return static_cast<double>(cycles) / clock_mhz;
}

double percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// JSON string body with the characters JSON requires escaped.
std::string escaped(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", ch);
      out += u;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string format_report(const LaunchReport& r, size_t top_functions) {
  char line[512];
  std::string s;
  std::snprintf(line, sizeof line,
                "npukit NPU profile: kernel '%s': %lld instructions, estimated device time %.3f us "
                "(%lld cycles at %.0f MHz = %.3f us + launch %.1f us)\n",
                r.kernel.c_str(), static_cast<long long>(r.instructions), r.device_us,
                static_cast<long long>(r.device_cycles), r.clock_mhz,
                us(r.device_cycles, r.clock_mhz), r.launch_overhead_us);
  s += line;
  const int64_t shorter = std::min(r.gdma_busy_cycles, r.bdc_busy_cycles);
  std::snprintf(line, sizeof line,
                "  GDMA busy %.3f us (%.1f%%), BDC busy %.3f us (%.1f%%), overlap %.3f us "
                "(%.1f%% of the less busy engine hidden)\n",
                us(r.gdma_busy_cycles, r.clock_mhz), percent(r.gdma_busy_cycles, r.device_cycles),
                us(r.bdc_busy_cycles, r.clock_mhz), percent(r.bdc_busy_cycles, r.device_cycles),
                us(r.overlap_cycles, r.clock_mhz), percent(r.overlap_cycles, shorter));
  s += line;
  size_t shown = 0;
  for (const FunctionCost& f : r.functions) {
    if (shown++ == top_functions) {
      std::snprintf(line, sizeof line, "  ... %zu more functions\n",
                    r.functions.size() - top_functions);
      s += line;
      break;
    }
    std::snprintf(line, sizeof line, "  %-4s %-44s %8lld calls %12lld cycles %10.3f us %5.1f%%\n",
                  engine_name(f.engine), f.function.c_str(), static_cast<long long>(f.calls),
                  static_cast<long long>(f.cycles), us(f.cycles, r.clock_mhz),
                  percent(f.cycles, r.gdma_busy_cycles + r.bdc_busy_cycles));
    s += line;
  }
  return s;
}

// Thread ids: 1 GDMA, 2 BDC, 3 parallel regions (host-side events would be 4).
std::string chrome_trace_json(const std::vector<LaunchReport>& launches) {
  std::string s = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  char buf[1024];
  bool first = true;
  auto add = [&](const std::string& event) {
    if (!first) s += ",\n";
    first = false;
    s += event;
  };
  for (size_t p = 0; p < launches.size(); ++p) {
    const LaunchReport& r = launches[p];
    const int pid = static_cast<int>(p) + 1;
    std::snprintf(buf, sizeof buf,
                  "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"%s "
                  "(launch %d, %.3f us)\"}}",
                  pid, escaped(r.kernel).c_str(), pid, r.device_us);
    add(buf);
    std::snprintf(
        buf, sizeof buf,
        "{\"ph\":\"M\",\"pid\":%d,\"name\":\"npukit_launch\",\"args\":{\"kernel\":\"%s\","
        "\"clock_mhz\":%.6g,\"device_cycles\":%lld,\"device_us\":%.6f,\"launch_"
        "overhead_us\":%.6g,\"gdma_busy_cycles\":%lld,\"bdc_busy_cycles\":%lld,"
        "\"overlap_cycles\":%lld,\"instructions\":%lld,\"slices_dropped\":%lld}}",
        pid, escaped(r.kernel).c_str(), r.clock_mhz, static_cast<long long>(r.device_cycles),
        r.device_us, r.launch_overhead_us, static_cast<long long>(r.gdma_busy_cycles),
        static_cast<long long>(r.bdc_busy_cycles), static_cast<long long>(r.overlap_cycles),
        static_cast<long long>(r.instructions), static_cast<long long>(r.slices_dropped));
    add(buf);
    const char* tracks[] = {"GDMA", "BDC", "parallel regions"};
    for (int t = 0; t < 3; ++t) {
      std::snprintf(buf, sizeof buf,
                    "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{"
                    "\"name\":\"%s\"}}",
                    pid, t + 1, tracks[t]);
      add(buf);
    }
    for (const TraceRegion& g : r.regions) {
      std::snprintf(buf, sizeof buf,
                    "{\"ph\":\"X\",\"pid\":%d,\"tid\":3,\"name\":\"parallel\",\"cat\":\"region\","
                    "\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"start_cycle\":%lld,\"cycles\":%lld}}",
                    pid, us(g.start, r.clock_mhz), us(g.end - g.start, r.clock_mhz),
                    static_cast<long long>(g.start), static_cast<long long>(g.end - g.start));
      add(buf);
    }
    for (const TraceSlice& x : r.slices) {
      if (x.engine == Engine::host) continue;
      // Numbers through the buffer; texts appended (details have no length bound).
      std::snprintf(buf, sizeof buf,
                    "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\",\"ts\":%.6f,"
                    "\"dur\":%.6f,\"args\":{\"class\":\"%s\",\"start_cycle\":%lld,"
                    "\"cycles\":%lld,\"bytes\":%lld,",
                    pid, x.engine == Engine::gdma ? 1 : 2, op_class_name(x.op_class),
                    us(x.start, r.clock_mhz), us(x.cycles, r.clock_mhz), op_class_name(x.op_class),
                    static_cast<long long>(x.start), static_cast<long long>(x.cycles),
                    static_cast<long long>(x.bytes));
      add(buf + ("\"detail\":\"" + escaped(x.detail) + "\",\"call_site\":\"" +
                 escaped(x.call_site) + "\"},\"name\":\"" + escaped(x.function) + "\"}"));
    }
  }
  s += "\n]}\n";
  return s;
}

}  // namespace npukit::npu
