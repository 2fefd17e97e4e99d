#include "okk_face.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace npukit::npu::face {

std::string text(const dim4& d) {
  std::string s = "[";  // appended piecewise: GCC 12 warns falsely on "[" + string
  s += std::to_string(d.n) + ", " + std::to_string(d.c) + ", " + std::to_string(d.h) + ", " +
       std::to_string(d.w) + "]";
  return s;
}

void need(const void* p, const char* fn, const char* name) {
  rule(p != nullptr, fn, name, "NULL", "a pointer to a descriptor");
}

Place local_place(const char* fn, const char* name, uint64_t addr, const Dims& shape,
                  const dim4* stride, int esize, DefaultLayout def) {
  Place p{Space::local, addr, shape, {}, esize};
  const int q = start_npu(cfg(), addr);
  if (stride) {
    p.stride = dims(*stride);
  } else if (def == DefaultLayout::compact) {
    p.stride = compact_stride(cfg(), q, shape);
  } else if (def == DefaultLayout::continuous) {
    p.stride = continuous_stride(shape);
  } else {
    p.stride = aligned_stride(cfg(), q, shape, esize);
  }
  check_place(fn, name, p);
  return p;
}

Place system_place(const char* fn, const char* name, uint64_t addr, const Dims& shape,
                   const dim4* stride, int esize) {
  Place p{Space::system, addr, shape, stride ? dims(*stride) : continuous_stride(shape), esize};
  check_place(fn, name, p);
  return p;
}

void rule_shape(const char* fn, const dim4& s, bool wide_c_warns) {
  rule_range(fn, "shape->n", s.n, 1, 65535);
  if (wide_c_warns) {
    rule_range_warn_above(fn, "shape->c", s.c, 1, 4095, INT32_MAX);
  } else {
    rule_range(fn, "shape->c", s.c, 1, 4095);
  }
  rule_range(fn, "shape->h", s.h, 1, 65535);
  rule_range(fn, "shape->w", s.w, 1, 65535);
}

void rule_same_npu(const char* fn, const char* a_name, uint64_t a, const char* b_name, uint64_t b) {
  const int qa = start_npu(cfg(), a), qb = start_npu(cfg(), b);
  rule(qa == qb, fn, b_name, std::to_string(b) + " (starts on NPU " + std::to_string(qb) + ")",
       std::string("a tensor starting on the same NPU as ") + a_name + " (NPU " +
           std::to_string(qa) + ")");
}

void rule_w_stride_one(const char* fn, const char* name, const dim4* stride) {
  if (stride) rule(stride->w == 1, fn, name, "w = " + std::to_string(stride->w), "w = 1");
}

Place word_operand(const char* fn, const char* name, uint64_t addr, const dim4& shape,
                   const dim4* stride, uint64_t dst) {
  rule_divisible(fn, name, addr, 4);
  rule_same_npu(fn, "dst_addr", dst, name, addr);
  return local_place(fn, name, addr, dims(shape), stride, 4);
}

Place word_destination(const char* fn, uint64_t dst, const dim4* shape, const dim4* stride,
                       bool any_stride) {
  need(shape, fn, "shape");
  rule_shape(fn, *shape, any_stride);
  rule_divisible(fn, "dst_addr", dst, 4);
  return local_place(fn, "dst_addr", dst, dims(*shape), stride, 4);
}

namespace {
// Does a local place use NPU `npu`? Channel c lives on NPU (Q + c) % NPUs.
bool uses_npu(const Place& p, int npu) {
  const int n = cfg().npu_num, q = start_npu(cfg(), p.addr);
  return p.shape.c >= n || (npu - q + n) % n < p.shape.c;
}
// Two local places can only collide on an NPU that both use.
bool share_an_npu(const Place& a, const Place& b) {
  if (a.space != Space::local || b.space != Space::local) return true;
  for (int npu = 0; npu < cfg().npu_num; ++npu)
    if (uses_npu(a, npu) && uses_npu(b, npu)) return true;
  return false;
}
}  // namespace

void rule_no_overlap(const char* fn, const char* out_name, const Place& out, const char* in_name,
                     const Place& in) {
  rule(!(share_an_npu(out, in) && places_overlap(out, in)), fn, out_name,
       std::to_string(out.addr) + " (overlaps " + in_name + " at " + std::to_string(in.addr) + ")",
       std::string("an output that does not overlap ") + in_name);
}

Place packed_place(const char* fn, const char* name, uint64_t addr, const dim4& shape,
                   const dim4* stride, int lane_bytes) {
  rule_divisible(fn, name, addr, 4);
  const int q = start_npu(cfg(), addr);
  rule(q == 0, fn, name, std::to_string(addr) + " (starts on NPU " + std::to_string(q) + ")",
       "a tensor starting on the first NPU (NPU 0)");
  return local_place(fn, name, addr, packed_shape(dims(shape), lane_bytes), stride, 4);
}

}  // namespace npukit::npu::face

namespace npukit::npu::face {

namespace {
// A warning, reported for the first never-written element of a call (see
// layout.cpp).
void never_written(const char* fn, const char* name, const Place& p, const std::string& where) {
  if (!warning_due(fn, name)) return;
  warning(fn, name, std::to_string(p.addr) + ": " + where + " was never written",
          "reads of local memory written before (by GDMA or BDC)");
}
uint8_t* flag_of(Machine& m, uint8_t* ptr) {
  return m.written(0, 0) + (ptr - m.local(0, 0));
}
}  // namespace

std::vector<uint8_t*> channel_bases(Machine& m, const Place& p) {
  std::vector<uint8_t*> bases(static_cast<size_t>(p.shape.c));
  for (int64_t c = 0; c < p.shape.c; ++c) bases[static_cast<size_t>(c)] = plane(m, p, 0, c);
  return bases;
}

npukit::Tensor gather_matrix(const char* fn, const char* name, const Place& p, int64_t rows,
                             int64_t cols, int64_t cpc) {
  npukit::Tensor t(npukit::DType::f32, {rows, cols});
  gather_matrix_into(fn, name, p, rows, cols, cpc, t.data<float>());
  return t;
}

void gather_matrix_into(const char* fn, const char* name, const Place& p, int64_t rows,
                        int64_t cols, int64_t cpc, float* out) {
  Machine& m = machine();
  const std::vector<uint8_t*> bases = channel_bases(m, p);
  bool check = true;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t first = 0; first < cols; first += cpc) {
      // One channel's chunk of the row; elements p.stride.w apart (1: one copy).
      const int64_t count = std::min(cpc, cols - first);
      uint8_t* base = bases[static_cast<size_t>(first / cpc)] + 4 * r * p.stride.n;
      if (p.stride.w == 1 && !(check && std::memchr(flag_of(m, base), 0, 4 * count))) {
        std::memcpy(out + r * cols + first, base, static_cast<size_t>(4 * count));
        continue;
      }
      for (int64_t k = 0; k < count; ++k) {
        uint8_t* ptr = base + 4 * k * p.stride.w;
        if (check && std::memchr(flag_of(m, ptr), 0, 4)) {
          never_written(
              fn, name, p,
              "matrix element (" + std::to_string(r) + ", " + std::to_string(first + k) + ")");
          check = false;
        }
        std::memcpy(out + r * cols + first + k, ptr, 4);
      }
    }
}

void scatter_matrix(const npukit::TensorView& t, const Place& p, int64_t cpc) {
  Machine& m = machine();
  const int64_t cols = t.dim(1);
  const bool dense = t.is_contiguous() && p.stride.w == 1;
  const float* in = t.data<float>();  // once: data<T>() checks the type on every call
  const std::vector<uint8_t*> bases = channel_bases(m, p);
  for (int64_t r = 0; r < t.dim(0); ++r)
    for (int64_t first = 0; first < cols; first += cpc) {
      const int64_t count = std::min(cpc, cols - first);
      uint8_t* base = bases[static_cast<size_t>(first / cpc)] + 4 * r * p.stride.n;
      if (dense) {
        std::memcpy(base, in + r * cols + first, static_cast<size_t>(4 * count));
        std::memset(flag_of(m, base), 1, static_cast<size_t>(4 * count));
        continue;
      }
      for (int64_t k = 0; k < count; ++k) {
        uint8_t* ptr = base + 4 * k * p.stride.w;
        const float v = t.at2<float>(r, first + k);
        std::memcpy(ptr, &v, 4);
        std::memset(flag_of(m, ptr), 1, 4);
      }
    }
}

std::vector<uint8_t> gather_raw(const char* fn, const char* name, const Place& p) {
  std::vector<uint8_t> out(
      static_cast<size_t>(p.shape.n * p.shape.c * p.shape.h * p.shape.w * p.esize));
  gather_raw_into(fn, name, p, out.data());
  return out;
}

void gather_raw_into(const char* fn, const char* name, const Place& p, uint8_t* o) {
  Machine& m = machine();
  const int64_t es = p.esize;
  bool check = p.space == Space::local;
  // Rows of w consecutive elements move with one copy and one flag scan; the
  // first never-written element is still the one reported.
  const bool rows = p.stride.w == 1;
  const size_t row_bytes = static_cast<size_t>(es * p.shape.w);
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      uint8_t* base = plane(m, p, n, c);
      for (int64_t h = 0; h < p.shape.h; ++h) {
        uint8_t* row = base + es * h * p.stride.h;
        if (rows && !(check && std::memchr(flag_of(m, row), 0, row_bytes))) {
          std::memcpy(o, row, row_bytes);
          o += row_bytes;
          continue;
        }
        for (int64_t w = 0; w < p.shape.w; ++w, o += es) {
          uint8_t* ptr = row + es * w * p.stride.w;
          if (check && std::memchr(flag_of(m, ptr), 0, static_cast<size_t>(es))) {
            never_written(fn, name, p,
                          "element (" + std::to_string(n) + ", " + std::to_string(c) + ", " +
                              std::to_string(h) + ", " + std::to_string(w) + ")");
            check = false;
          }
          std::memcpy(o, ptr, static_cast<size_t>(es));
        }
      }
    }
}

std::vector<uint32_t> gather_u32(const char* fn, const char* name, const Place& p) {
  const npukit::Tensor t = gather_f32(fn, name, p);
  std::vector<uint32_t> w(static_cast<size_t>(t.numel()));
  std::memcpy(w.data(), t.data<float>(), w.size() * 4);
  return w;
}

void scatter_u32(const std::vector<uint32_t>& words, const Place& p) {
  // A float view of the words only moves bits (no arithmetic touches them).
  std::vector<float> bits(words.size());
  std::memcpy(bits.data(), words.data(), words.size() * 4);
  scatter_f32(npukit::TensorView::contiguous(bits.data(), npukit::DType::f32,
                                             {p.shape.n, p.shape.c, p.shape.h, p.shape.w}),
              p);
}

std::vector<float> as_f32(const std::vector<uint32_t>& words) {
  std::vector<float> v(words.size());
  std::memcpy(v.data(), words.data(), words.size() * 4);
  return v;
}

std::vector<uint32_t> as_u32(const std::vector<float>& values) {
  std::vector<uint32_t> w(values.size());
  std::memcpy(w.data(), values.data(), values.size() * 4);
  return w;
}

}  // namespace npukit::npu::face
