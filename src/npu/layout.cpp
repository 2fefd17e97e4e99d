#include "npukit/npu/layout.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "npukit/npu/rules.hpp"

namespace npukit::npu {

namespace {
int64_t div_up(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string dims_text(const Dims& d) {
  std::string s = "[";  // appended piecewise: GCC 12 warns falsely on "[" + string
  s += std::to_string(d.n) + ", " + std::to_string(d.c) + ", " + std::to_string(d.h) + ", " +
       std::to_string(d.w) + "]";
  return s;
}

// Offset (elements) of the last element inside one NPU's slot chain.
int64_t last_offset(const Place& p, int64_t slots) {
  return (p.shape.n - 1) * p.stride.n + (slots - 1) * p.stride.c + (p.shape.h - 1) * p.stride.h +
         (p.shape.w - 1) * p.stride.w;
}
}  // namespace

int start_npu(const Config& cfg, uint64_t local_addr) {
  return static_cast<int>(local_addr / cfg.local_mem_size);
}

int64_t channels_per_npu(const Config& cfg, int start, int64_t channels) {
  return div_up(start + channels, cfg.npu_num);
}

Dims aligned_stride(const Config& cfg, int start, const Dims& s, int esize) {
  const int64_t unit = cfg.align_bytes / esize;
  Dims st{0, div_up(s.h * s.w, unit) * unit, s.w, 1};
  st.n = st.c * channels_per_npu(cfg, start, s.c);
  return st;
}

Dims compact_stride(const Config& cfg, int start, const Dims& s) {
  Dims st{0, s.h * s.w, s.w, 1};
  st.n = st.c * channels_per_npu(cfg, start, s.c);
  return st;
}

Dims continuous_stride(const Dims& s) {
  return {s.c * s.h * s.w, s.h * s.w, s.w, 1};
}

void check_place(const char* fn, const char* name, const Place& p) {
  const std::string shape = dims_text(p.shape);
  rule(p.shape.n >= 1 && p.shape.c >= 1 && p.shape.h >= 1 && p.shape.w >= 1, fn, "shape", shape,
       "every dimension >= 1");
  rule(p.stride.n >= 0 && p.stride.c >= 0 && p.stride.h >= 0 && p.stride.w >= 0, fn, "stride",
       dims_text(p.stride), "non-negative strides");
  Machine& m = machine();
  const Config& cfg = m.config();
  if (p.space == Space::local) {
    const uint64_t total = static_cast<uint64_t>(cfg.npu_num) * cfg.local_mem_size;
    rule(p.addr < total, fn, name, std::to_string(p.addr),
         "a local address below " + std::to_string(total) + " (" + std::to_string(cfg.npu_num) +
             " NPUs x " + std::to_string(cfg.local_mem_size) + " bytes)");
    const int q = start_npu(cfg, p.addr);
    const uint64_t r = p.addr % cfg.local_mem_size;
    const int64_t slots = channels_per_npu(cfg, q, p.shape.c);
    const uint64_t end = r + static_cast<uint64_t>(p.esize) * (last_offset(p, slots) + 1);
    rule(end <= cfg.local_mem_size, fn, name,
         std::to_string(p.addr) + " (tensor " + shape + " with strides " + dims_text(p.stride) +
             " ends at byte " + std::to_string(end) + " of NPU-local memory)",
         "a tensor inside the " + std::to_string(cfg.local_mem_size) +
             " bytes of each NPU's local memory");
  } else {
    const uint64_t bytes = static_cast<uint64_t>(p.esize) * (last_offset(p, p.shape.c) + 1);
    if (m.global(p.addr, bytes)) return;
    const std::string value = std::to_string(p.addr) + " (tensor " + shape + " spanning " +
                              std::to_string(bytes) + " bytes";
    // The vendor's device memory is one flat range: a tensor running past its
    // allocation into free space or another allocation is a warning, beyond
    // the range (or straddling L2 SRAM / DTCM) an error.
    rule(m.device(p.addr, bytes) != nullptr, fn, name, value + ")",
         "a tensor inside device memory [" + std::to_string(cfg.global_mem_start) + ", " +
             std::to_string(cfg.global_mem_start + cfg.global_mem_size) + "), L2 SRAM or DTCM");
    if (warning_due(fn, name))
      warning(fn, name, value + ": " + m.device_range_text(p.addr, bytes) + ")",
              "a tensor inside one device memory allocation (bm_malloc_device_byte)");
  }
}

uint8_t* plane(Machine& m, const Place& p, int64_t n, int64_t c) {
  if (p.space == Space::system)
    return m.device(p.addr, 1) + p.esize * (n * p.stride.n + c * p.stride.c);
  const Config& cfg = m.config();
  const int q = start_npu(cfg, p.addr);
  const uint64_t r = p.addr % cfg.local_mem_size;
  const int64_t slot = (q + c) / cfg.npu_num;
  return m.local(static_cast<int>((q + c) % cfg.npu_num), r) +
         p.esize * (n * p.stride.n + slot * p.stride.c);
}

namespace {
// The written-flags twin of plane(): flags and bytes share offsets.
uint8_t* flags(Machine& m, const Place& p, int64_t n, int64_t c) {
  return m.written(0, 0) + (plane(m, p, n, c) - m.local(0, 0));
}

// A read of never-written local memory is a warning (the vendor's simulator
// reads what is there: its local memory starts as 0xDEADBEEF words, as
// npukit's). Callers report the first such element of a call only.
void unwritten(const char* fn, const char* name, const Place& p, int64_t n, int64_t c, int64_t h,
               int64_t w) {
  if (!warning_due(fn, name)) return;
  warning(fn, name,
          std::to_string(p.addr) + ": element (" + std::to_string(n) + ", " + std::to_string(c) +
              ", " + std::to_string(h) + ", " + std::to_string(w) +
              ") of local memory was never written",
          "reads of local memory written before (by GDMA or BDC)");
}
}  // namespace

namespace {
// Were all `bytes` flag bytes written? A word compare for the common 4 bytes
// (element paths call this per element; memchr's call costs more).
bool written_bytes(const uint8_t* flag, int64_t bytes) {
  if (bytes == 4) {
    uint32_t v;
    std::memcpy(&v, flag, 4);
    return v == 0x01010101u;
  }
  return !std::memchr(flag, 0, static_cast<size_t>(bytes));
}

// Elements of one (n, c) plane in runs of consecutive elements: one run of
// h*w when the rows follow each other, h runs of w when only w is unit
// stride, else 0 (element by element).
int64_t run_length(const Place& p) {
  if (p.stride.w != 1) return 0;
  return p.shape.h == 1 || p.stride.h == p.shape.w ? p.shape.h * p.shape.w : p.shape.w;
}

// The first never-written element of a run of `len` elements from `flag`
// (row h, column w0 of plane (n, c)), reported; false if there is one.
bool run_written(const char* fn, const char* name, const Place& p, const uint8_t* flag, int64_t len,
                 int64_t n, int64_t c, int64_t h, int64_t w0) {
  const int64_t es = p.esize;
  if (!std::memchr(flag, 0, static_cast<size_t>(es * len))) return true;
  for (int64_t i = 0; i < len; ++i)
    if (std::memchr(flag + es * i, 0, static_cast<size_t>(es))) {
      const int64_t e = w0 + i;  // element index within the plane row chain
      unwritten(fn, name, p, n, c, h + e / p.shape.w, e % p.shape.w);
      break;
    }
  return false;
}

// copy_place over runs: both sides have the same run layout and do not
// overlap (element order cannot matter).
bool copy_runs(const char* fn, const char* src_name, const Place& src, const Place& dst) {
  const int64_t len = run_length(src);
  if (len == 0 || run_length(dst) != len) return false;
  if (src.space == dst.space && places_overlap(src, dst)) return false;
  Machine& m = machine();
  const int64_t es = src.esize, rows = src.shape.h * src.shape.w / len;
  const size_t bytes = static_cast<size_t>(es * len);
  bool check = true;  // until the first never-written element
  for (int64_t n = 0; n < src.shape.n; ++n)
    for (int64_t c = 0; c < src.shape.c; ++c) {
      const uint8_t* s = plane(m, src, n, c);
      uint8_t* d = plane(m, dst, n, c);
      const uint8_t* sf = src.space == Space::local ? flags(m, src, n, c) : nullptr;
      uint8_t* df = dst.space == Space::local ? flags(m, dst, n, c) : nullptr;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t so = es * r * src.stride.h, d_o = es * r * dst.stride.h;
        if (check && sf) check = run_written(fn, src_name, src, sf + so, len, n, c, r, 0);
        std::memcpy(d + d_o, s + so, bytes);
        if (df) std::memset(df + d_o, 1, bytes);
      }
    }
  return true;
}
}  // namespace

void copy_place(const char* fn, const char* src_name, const Place& src, const Place& dst) {
  if (copy_runs(fn, src_name, src, dst)) return;
  Machine& m = machine();
  const int64_t es = src.esize;
  bool check = true;  // until the first never-written element
  for (int64_t n = 0; n < src.shape.n; ++n) {
    for (int64_t c = 0; c < src.shape.c; ++c) {
      const uint8_t* s = plane(m, src, n, c);
      uint8_t* d = plane(m, dst, n, c);
      const uint8_t* sf = src.space == Space::local ? flags(m, src, n, c) : nullptr;
      uint8_t* df = dst.space == Space::local ? flags(m, dst, n, c) : nullptr;
      for (int64_t h = 0; h < src.shape.h; ++h) {
        for (int64_t w = 0; w < src.shape.w; ++w) {
          const int64_t so = es * (h * src.stride.h + w * src.stride.w);
          const int64_t d_o = es * (h * dst.stride.h + w * dst.stride.w);
          if (check && sf && !written_bytes(sf + so, es)) {
            unwritten(fn, src_name, src, n, c, h, w);
            check = false;
          }
          std::memmove(d + d_o, s + so, static_cast<size_t>(es));
          if (df) std::memset(df + d_o, 1, static_cast<size_t>(es));
        }
      }
    }
  }
}

void fill_place(const Place& dst, const void* value) {
  Machine& m = machine();
  const int64_t es = dst.esize;
  for (int64_t n = 0; n < dst.shape.n; ++n)
    for (int64_t c = 0; c < dst.shape.c; ++c) {
      uint8_t* d = plane(m, dst, n, c);
      uint8_t* df = dst.space == Space::local ? flags(m, dst, n, c) : nullptr;
      for (int64_t h = 0; h < dst.shape.h; ++h)
        for (int64_t w = 0; w < dst.shape.w; ++w) {
          const int64_t o = es * (h * dst.stride.h + w * dst.stride.w);
          std::memcpy(d + o, value, static_cast<size_t>(es));
          if (df) std::memset(df + o, 1, static_cast<size_t>(es));
        }
    }
}

Tensor gather_f32(const char* fn, const char* name, const Place& p) {
  Tensor t(DType::f32, {p.shape.n, p.shape.c, p.shape.h, p.shape.w});
  gather_f32_into(fn, name, p, t.data<float>());
  return t;
}

void gather_f32_into(const char* fn, const char* name, const Place& p, float* out) {
  Machine& m = machine();
  const int64_t len = run_length(p), hw = p.shape.h * p.shape.w;
  bool check = true;  // until the first never-written element
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      const uint8_t* s = plane(m, p, n, c);
      const uint8_t* sf = check && p.space == Space::local ? flags(m, p, n, c) : nullptr;
      float* o = out + (n * p.shape.c + c) * hw;
      if (len > 0) {
        for (int64_t r = 0; r < hw / len; ++r) {
          const int64_t so = 4 * r * p.stride.h;
          if (check && sf) check = run_written(fn, name, p, sf + so, len, n, c, r, 0);
          std::memcpy(o + r * len, s + so, static_cast<size_t>(4 * len));
        }
        continue;
      }
      for (int64_t h = 0; h < p.shape.h; ++h)
        for (int64_t w = 0; w < p.shape.w; ++w) {
          const int64_t so = 4 * (h * p.stride.h + w * p.stride.w);
          if (check && sf && !written_bytes(sf + so, 4)) {
            unwritten(fn, name, p, n, c, h, w);
            check = false;
          }
          std::memcpy(o + h * p.shape.w + w, s + so, 4);
        }
    }
}

void scatter_f32(const TensorView& t, const Place& p) {
  Machine& m = machine();
  const int64_t len = run_length(p), hw = p.shape.h * p.shape.w;
  const bool dense = t.is_contiguous();
  // Once: data<T>() checks the type on every call.
  const float* data = dense ? t.data<float>() : nullptr;
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      uint8_t* d = plane(m, p, n, c);
      uint8_t* df = p.space == Space::local ? flags(m, p, n, c) : nullptr;
      if (dense && len > 0) {
        const float* in = data + (n * p.shape.c + c) * hw;
        for (int64_t r = 0; r < hw / len; ++r) {
          const int64_t o = 4 * r * p.stride.h;
          std::memcpy(d + o, in + r * len, static_cast<size_t>(4 * len));
          if (df) std::memset(df + o, 1, static_cast<size_t>(4 * len));
        }
        continue;
      }
      for (int64_t h = 0; h < p.shape.h; ++h)
        for (int64_t w = 0; w < p.shape.w; ++w) {
          const int64_t o = 4 * (h * p.stride.h + w * p.stride.w);
          const float v = t.at<float>(n, c, h, w);
          std::memcpy(d + o, &v, 4);
          if (df) std::memset(df + o, 1, 4);
        }
    }
}

bool check_written(const char* fn, const char* name, const Place& p) {
  if (p.space != Space::local) return true;
  Machine& m = machine();
  const int64_t len = run_length(p);
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      const uint8_t* sf = flags(m, p, n, c);
      if (len > 0) {
        for (int64_t r = 0; r < p.shape.h * p.shape.w / len; ++r)
          if (!run_written(fn, name, p, sf + p.esize * r * p.stride.h, len, n, c, r, 0))
            return false;
        continue;
      }
      for (int64_t h = 0; h < p.shape.h; ++h)
        for (int64_t w = 0; w < p.shape.w; ++w)
          if (!written_bytes(sf + p.esize * (h * p.stride.h + w * p.stride.w), p.esize)) {
            unwritten(fn, name, p, n, c, h, w);
            return false;
          }
    }
  return true;
}

void mark_written(const Place& p) {
  if (p.space != Space::local) return;
  Machine& m = machine();
  const int64_t len = run_length(p);
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      uint8_t* df = flags(m, p, n, c);
      if (len > 0) {
        for (int64_t r = 0; r < p.shape.h * p.shape.w / len; ++r)
          std::memset(df + p.esize * r * p.stride.h, 1, static_cast<size_t>(p.esize * len));
        continue;
      }
      for (int64_t h = 0; h < p.shape.h; ++h)
        for (int64_t w = 0; w < p.shape.w; ++w)
          std::memset(df + p.esize * (h * p.stride.h + w * p.stride.w), 1,
                      static_cast<size_t>(p.esize));
    }
}

std::vector<LocalRun> local_runs(Machine& m, const Place& p) {
  const Config& cfg = m.config();
  const int q = start_npu(cfg, p.addr);
  const int64_t npu_step = static_cast<int64_t>(cfg.local_mem_size) / p.esize;
  std::vector<LocalRun> runs;
  for (int64_t c0 = 0; c0 < p.shape.c;) {
    // Channel c sits on NPU (q + c) % NPUs in slot (q + c) / NPUs.
    const int64_t channels =
        std::min<int64_t>(p.shape.c - c0, cfg.npu_num - (q + c0) % cfg.npu_num);
    runs.push_back(
        {c0, channels,
         TensorView(plane(m, p, 0, c0), DType::f32, {p.shape.n, channels, p.shape.h, p.shape.w},
                    {p.stride.n, npu_step, p.stride.h, p.stride.w})});
    c0 += channels;
  }
  return runs;
}

bool places_overlap(const Place& a, const Place& b) {
  if (a.space != b.space) return false;
  const Config& cfg = machine().config();
  auto range = [&](const Place& p, uint64_t& lo, uint64_t& hi) {
    const uint64_t base = p.space == Space::local ? p.addr % cfg.local_mem_size : p.addr;
    const int64_t slots = p.space == Space::local
                              ? channels_per_npu(cfg, start_npu(cfg, p.addr), p.shape.c)
                              : p.shape.c;
    lo = base;
    hi = base + static_cast<uint64_t>(p.esize) * (last_offset(p, slots) + 1);
  };
  uint64_t alo, ahi, blo, bhi;
  range(a, alo, ahi);
  range(b, blo, bhi);
  return alo < bhi && blo < ahi;
}

int packed_lanes(int lane_bytes) {
  return 4 / lane_bytes;
}

Dims packed_shape(const Dims& logical, int lane_bytes) {
  return {div_up(logical.n, packed_lanes(lane_bytes)), logical.c, logical.h, logical.w};
}

std::vector<int32_t> gather_packed(const char* fn, const char* name, const Place& words, int64_t n,
                                   int lane_bytes, bool is_signed) {
  Machine& m = machine();
  const int lanes = packed_lanes(lane_bytes);
  const Dims& s = words.shape;
  std::vector<int32_t> out(static_cast<size_t>(n * s.c * s.h * s.w));
  size_t o = 0;
  bool check = true;  // until the first never-written element
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < s.c; ++c) {
      const uint8_t* base = plane(m, words, b / lanes, c);
      const uint8_t* fl = words.space == Space::local ? flags(m, words, b / lanes, c) : nullptr;
      const int64_t lane = (b % lanes) * lane_bytes;
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w, ++o) {
          const int64_t off = 4 * (h * words.stride.h + w * words.stride.w) + lane;
          if (check && fl && std::memchr(fl + off, 0, static_cast<size_t>(lane_bytes))) {
            unwritten(fn, name, words, b, c, h, w);
            check = false;
          }
          if (lane_bytes == 1) {
            out[o] = is_signed ? int32_t{static_cast<int8_t>(base[off])} : int32_t{base[off]};
          } else {
            uint16_t u;
            std::memcpy(&u, base + off, 2);
            out[o] = is_signed ? int32_t{static_cast<int16_t>(u)} : int32_t{u};
          }
        }
    }
  return out;
}

void scatter_packed(const std::vector<int32_t>& values, const Place& words, int64_t n,
                    int lane_bytes) {
  Machine& m = machine();
  const int lanes = packed_lanes(lane_bytes);
  const Dims& s = words.shape;
  size_t o = 0;
  // The unit writes whole words: dummy lanes past N get 0.
  for (int64_t b = 0; b < s.n * lanes; ++b)
    for (int64_t c = 0; c < s.c; ++c) {
      uint8_t* base = plane(m, words, b / lanes, c);
      uint8_t* fl = words.space == Space::local ? flags(m, words, b / lanes, c) : nullptr;
      const int64_t lane = (b % lanes) * lane_bytes;
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w, ++o) {
          const int64_t off = 4 * (h * words.stride.h + w * words.stride.w) + lane;
          const uint32_t v = b < n ? static_cast<uint32_t>(values[o]) : 0u;
          std::memcpy(base + off, &v, static_cast<size_t>(lane_bytes));  // little endian
          if (fl) std::memset(fl + off, 1, static_cast<size_t>(lane_bytes));
        }
    }
}

}  // namespace npukit::npu
