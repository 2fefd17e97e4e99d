#include "npukit/tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "npukit/parallel.hpp"

namespace npukit {

const char* layout_name(Layout l) {
  return l == Layout::nchw ? "nchw" : "nhwc";
}

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t shape_numel(const Shape& s) {
  // Checked: shapes come from files and attributes, and a wrapped product
  // would pass every later size check.
  // The message is formatted only on failure: this runs for every numel().
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) fail("npukit::shape_numel", "shape", shape_text(s), "non-negative sizes");
    if (__builtin_mul_overflow(n, d, &n))
      fail("npukit::shape_numel", "shape", shape_text(s), "an element count below 2^63");
  }
  return n;
}

Shape contiguous_strides(const Shape& shape, Layout layout) {
  Shape st(shape.size(), 1);
  if (layout == Layout::nhwc) {
    check(shape.size() == 4, "npukit::contiguous_strides", "shape", shape_text(shape),
          "a 4-D (N, C, H, W) shape for the nhwc layout");
    const int64_t c = shape[1], h = shape[2], w = shape[3];
    int64_t wc = 0, hwc = 0;
    check(!__builtin_mul_overflow(w, c, &wc) && !__builtin_mul_overflow(h, wc, &hwc),
          "npukit::contiguous_strides", "shape", shape_text(shape), "strides below 2^63");
    return {hwc, 1, wc, c};
  }
  // Checked: with a zero-sized dimension the element count is 0 whatever the
  // others are, but the strides are still products of them (found by the npy fuzzer).
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    if (__builtin_mul_overflow(st[i + 1], shape[i + 1], &st[i]))
      fail("npukit::contiguous_strides", "shape", shape_text(shape), "strides below 2^63");
  return st;
}

TensorView::TensorView(void* data, DType dtype, Shape shape, Shape strides, const char* function)
    : data_(data), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)) {
  // Messages are formatted only on failure: views are made on every call.
  if (shape_.size() > kMaxRank) fail(function, "shape", shape_text(shape_), "rank 0 to 8");
  if (strides_.size() != shape_.size())
    fail(function, "strides", shape_text(strides_),
         "one stride per dimension of shape " + shape_text(shape_));
  for (int64_t d : shape_)
    if (d < 0) fail(function, "shape", shape_text(shape_), "non-negative sizes");
  check(data_ != nullptr || numel() == 0, function, "data", "null", "a non-null pointer");
}

TensorView TensorView::contiguous(void* data, DType dtype, Shape shape, Layout layout) {
  Shape st = contiguous_strides(shape, layout);
  return TensorView(data, dtype, std::move(shape), std::move(st));
}

bool TensorView::is_contiguous() const {
  return strides_ == contiguous_strides(shape_);
}

void TensorView::expect_dtype(DType want, const char* function, const char* parameter) const {
  // Tested first: data<T>() runs this on every call, and the message's
  // strings are only worth building on failure.
  if (dtype_ != want) fail(function, parameter, dtype_name(dtype_), dtype_name(want));
}

void TensorView::expect_rank(int want, const char* function, const char* parameter) const {
  if (rank() != want)
    fail(function, parameter, "shape " + shape_text(shape_),
         "a " + std::to_string(want) + "-D tensor");
}

void TensorView::expect_shape(const Shape& want, const char* function,
                              const char* parameter) const {
  if (shape_ != want)
    fail(function, parameter, "shape " + shape_text(shape_), "shape " + shape_text(want));
}

void Tensor::Free::operator()(void* p) const {
  std::free(p);
}

Tensor::Tensor(DType dtype, Shape shape, Layout layout) : layout_(layout) {
  // Validate through a view first so that bad shapes never reach the allocator.
  TensorView probe(reinterpret_cast<void*>(64), dtype, shape, contiguous_strides(shape, layout),
                   "npukit::Tensor");
  // The budget check also rules out a byte count that would wrap below.
  BudgetReservation reserved("npukit::Tensor", "shape", shape_text(shape) + " " + dtype_name(dtype),
                             static_cast<uint64_t>(probe.numel()), dtype_size(dtype));
  const size_t bytes = static_cast<size_t>(probe.numel()) * dtype_size(dtype);
  const size_t padded = (bytes + 63) / 64 * 64 + 64;
  void* p = std::aligned_alloc(64, padded);
  check(p != nullptr, "npukit::Tensor", "shape",
        shape_text(shape) + " " + dtype_name(dtype) + ": " + std::to_string(bytes) + " bytes",
        "an allocation the system can satisfy (aligned_alloc failed)");
  reserved_ = std::move(reserved);
  std::memset(p, 0, padded);
  buffer_.reset(p);
  view_ = TensorView(p, dtype, std::move(shape), probe.strides(), "npukit::Tensor");
}

Tensor::Tensor(const Tensor& other) {
  if (other.buffer_) {
    Tensor t(other.dtype(), other.shape(), other.layout_);
    copy(other.view_, t.view_);
    *this = std::move(t);
  }
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor dense(dtype(), shape());
  copy(view_, dense.view());
  const T* p = dense.data<T>();
  return std::vector<T>(p, p + numel());
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<int8_t> Tensor::to_vector<int8_t>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;
template std::vector<int16_t> Tensor::to_vector<int16_t>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;

void expect_kernel_rank(const TensorView& t, const char* function, const char* parameter) {
  if (t.rank() > kMaxKernelRank)
    fail(function, parameter, "shape " + shape_text(t.shape()), "rank 0 to 4");
}

namespace {

// One contiguous run, over the threads when it is large: the runner copies a
// residual into a convolution's output before the convolution adds to it
// (resnet18: up to 0.8 MB per node), and the model's inputs, between two
// parallel regions.
void copy_bytes(const char* s, char* d, int64_t bytes) {
  constexpr int64_t kBlock = 16 * 1024, kGrain = 4;  // 64 KB per thread at least
  parallel_ranges((bytes + kBlock - 1) / kBlock, kGrain, [&](int64_t begin, int64_t end) {
    const int64_t from = begin * kBlock, to = std::min(bytes, end * kBlock);
    std::memcpy(d + from, s + from, static_cast<size_t>(to - from));
  });
}

}  // namespace

void copy(const TensorView& src, const TensorView& dst) {
  check(src.dtype() == dst.dtype(), "npukit::copy", "dst.dtype", dtype_name(dst.dtype()),
        dtype_name(src.dtype()));
  dst.expect_shape(src.shape(), "npukit::copy", "dst");
  const size_t es = dtype_size(src.dtype());
  if (src.numel() == 0) return;
  // Axes merged where both views are dense across them (a contiguous tensor is
  // one run): an innermost run of a few elements made the copy one memcpy
  // call per element row (Model::run copies its inputs and outputs).
  int64_t dims[kMaxRank], ss[kMaxRank], ds[kMaxRank];
  int r = 0;
  // Axes walked from the smallest destination stride out when every stride
  // is positive (each element is copied on its own, so any axis order gives
  // the same result): a channels-last view (NHWC strides behind an NCHW
  // shape) copied to one with the same strides is then one run, not a call
  // per element.
  int axis[kMaxRank];
  std::iota(axis, axis + src.rank(), 0);
  bool positive = true;
  for (int i = 0; i < src.rank(); ++i)
    positive = positive && src.stride(i) > 0 && dst.stride(i) > 0;
  if (positive)
    std::stable_sort(axis, axis + src.rank(),
                     [&](int a, int b) { return dst.stride(a) > dst.stride(b); });
  for (int k = src.rank() - 1; k >= 0; --k) {
    const int i = axis[k];
    if (src.dim(i) == 1) continue;
    if (r > 0 && src.stride(i) == ss[r - 1] * dims[r - 1] &&
        dst.stride(i) == ds[r - 1] * dims[r - 1]) {
      dims[r - 1] *= src.dim(i);
      continue;
    }
    dims[r] = src.dim(i), ss[r] = src.stride(i), ds[r] = dst.stride(i);
    ++r;
  }
  std::reverse(dims, dims + r), std::reverse(ss, ss + r), std::reverse(ds, ds + r);
  // An odometer over every merged axis but the last, which the inner loop walks.
  const int64_t inner = r ? dims[r - 1] : 1;
  const int64_t si = r ? ss[r - 1] : 1, di = r ? ds[r - 1] : 1;
  int64_t pos[kMaxRank] = {};
  auto* s = static_cast<const char*>(src.raw());
  auto* d = static_cast<char*>(dst.raw());
  if (r <= 1 && si == 1 && di == 1) return copy_bytes(s, d, inner * static_cast<int64_t>(es));
  while (true) {
    int64_t so = 0, dof = 0;
    for (int i = 0; i + 1 < r; ++i) {
      so += pos[i] * ss[i];
      dof += pos[i] * ds[i];
    }
    // Offsets stay signed: views may have negative strides (Slice with steps < 0).
    const auto ses = static_cast<int64_t>(es);
    if (si == 1 && di == 1)
      std::memcpy(d + dof * ses, s + so * ses, static_cast<size_t>(inner) * es);
    else
      for (int64_t e = 0; e < inner; ++e)
        std::memcpy(d + (dof + e * di) * ses, s + (so + e * si) * ses, es);
    int i = r - 2;
    for (; i >= 0; --i) {
      if (++pos[i] < dims[i]) break;
      pos[i] = 0;
    }
    if (i < 0) return;
  }
}

}  // namespace npukit
