// Reads back the Chrome trace-event JSON that chrome_trace_json writes (for
// `npukit npu timeline` and tests): a small JSON parser, then the launches.
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "npukit/error.hpp"
#include "npukit/npu/trace.hpp"

namespace npukit::npu {

namespace {

constexpr const char* kFn = "read_chrome_trace";

struct Json {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  double num = 0;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
  const Json* get(const std::string& k) const {
    auto it = fields.find(k);
    return it == fields.end() ? nullptr : &it->second;
  }
};

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}
  Json document() {
    Json v = value();
    space();
    if (i_ != t_.size()) fail("text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw Error(kFn, "json", "byte " + std::to_string(i_), "valid JSON (" + what + ")");
  }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t'))
      ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string text() {
    expect('"');
    std::string s;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c == '\\') {
        if (i_ >= t_.size()) fail("unfinished escape");
        const char e = t_[i_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case 'u': {
            if (i_ + 4 > t_.size()) fail("short \\u escape");
            const long code = std::strtol(t_.substr(i_, 4).c_str(), nullptr, 16);
            i_ += 4;
            c = code < 0x80 ? static_cast<char>(code) : '?';  // the writer escapes only controls
            break;
          }
          default:
            c = e;
        }
      }
      s += c;
    }
    expect('"');
    return s;
  }
  Json value() {
    space();
    if (i_ >= t_.size()) fail("unexpected end");
    Json v;
    const char c = t_[i_];
    if (c == '{') {
      ++i_;
      v.kind = Json::object;
      if (eat('}')) return v;
      do {
        space();
        std::string k = text();
        expect(':');
        v.fields[k] = value();
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.kind = Json::array;
      if (eat(']')) return v;
      do v.items.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::string;
      v.str = text();
    } else if (t_.compare(i_, 4, "true") == 0 || t_.compare(i_, 5, "false") == 0) {
      v.kind = Json::boolean;
      v.num = t_[i_] == 't';
      i_ += t_[i_] == 't' ? 4 : 5;
    } else if (t_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      char* end = nullptr;
      v.kind = Json::number;
      v.num = std::strtod(t_.c_str() + i_, &end);
      if (end == t_.c_str() + i_) fail("unexpected character");
      i_ = static_cast<size_t>(end - t_.c_str());
    }
    return v;
  }
  const std::string& t_;
  size_t i_ = 0;
};

double number(const Json* j) {
  return j && j->kind == Json::number ? j->num : 0.0;
}
int64_t integer(const Json* j) {
  return static_cast<int64_t>(number(j));
}
std::string string_of(const Json* j) {
  return j && j->kind == Json::string ? j->str : std::string();
}

OpClass class_named(const std::string& n) {
  for (int c = 0; c <= static_cast<int>(OpClass::other); ++c)
    if (n == op_class_name(static_cast<OpClass>(c))) return static_cast<OpClass>(c);
  return OpClass::other;
}

}  // namespace

std::vector<LaunchReport> read_chrome_trace(const std::string& json) {
  const Json doc = Parser(json).document();
  const Json* events = doc.get("traceEvents");
  if (!events || events->kind != Json::array)
    throw Error(kFn, "json", "no traceEvents array", "a trace written by NPUKIT_TRACE");
  std::map<int64_t, LaunchReport> launches;
  for (const Json& e : events->items) {
    const int64_t pid = integer(e.get("pid"));
    const std::string ph = string_of(e.get("ph")), name = string_of(e.get("name"));
    const Json* args = e.get("args");
    if (!args) continue;
    LaunchReport& r = launches[pid];
    if (ph == "M" && name == "npukit_launch") {
      r.kernel = string_of(args->get("kernel"));
      r.clock_mhz = number(args->get("clock_mhz"));
      r.device_cycles = integer(args->get("device_cycles"));
      r.device_us = number(args->get("device_us"));
      r.launch_overhead_us = number(args->get("launch_overhead_us"));
      r.gdma_busy_cycles = integer(args->get("gdma_busy_cycles"));
      r.bdc_busy_cycles = integer(args->get("bdc_busy_cycles"));
      r.overlap_cycles = integer(args->get("overlap_cycles"));
      r.instructions = integer(args->get("instructions"));
      r.slices_dropped = integer(args->get("slices_dropped"));
    } else if (ph == "X") {
      const int64_t tid = integer(e.get("tid"));
      const int64_t start = integer(args->get("start_cycle")),
                    cycles = integer(args->get("cycles"));
      if (tid == 3) {
        r.regions.push_back(TraceRegion{start, start + cycles});
        continue;
      }
      TraceSlice s;
      s.function = name;
      s.engine = tid == 1 ? Engine::gdma : Engine::bdc;
      s.op_class = class_named(string_of(args->get("class")));
      s.start = start;
      s.cycles = cycles;
      s.bytes = integer(args->get("bytes"));
      s.detail = string_of(args->get("detail"));
      s.call_site = string_of(args->get("call_site"));
      r.slices.push_back(s);
    }
  }
  std::vector<LaunchReport> out;
  for (auto& [pid, r] : launches)
    if (!r.kernel.empty()) out.push_back(std::move(r));
  return out;
}

}  // namespace npukit::npu
