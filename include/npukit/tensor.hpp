// Tensors: an owning buffer (Tensor) and a strided, non-owning view (TensorView).
//
// Shapes are logical: a 4-D image tensor is always (N, C, H, W); the memory
// layout (NCHW or NHWC) lives only in the strides, so every kernel is layout
// agnostic. Strides are counted in elements, like the NPU's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "npukit/dtype.hpp"
#include "npukit/error.hpp"
#include "npukit/memory_budget.hpp"

namespace npukit {

using Shape = std::vector<int64_t>;
// Views hold up to 8 axes (ONNX data movement: shufflenet's rank-5 channel
// shuffle); arithmetic kernels take up to kMaxKernelRank and check it.
inline constexpr int kMaxRank = 8;
inline constexpr int kMaxKernelRank = 4;

enum class Layout : uint8_t { nchw, nhwc };

const char* layout_name(Layout l);
std::string shape_text(const Shape& s);  // "[1, 3, 8, 8]"
int64_t shape_numel(const Shape& s);
// Contiguous strides of `shape`; for Layout::nhwc the shape must be 4-D (N, C, H, W).
Shape contiguous_strides(const Shape& shape, Layout layout = Layout::nchw);

class TensorView {
 public:
  TensorView() = default;
  // Checks rank <= 4, non-negative sizes and matching stride count; `function` names the caller.
  TensorView(void* data, DType dtype, Shape shape, Shape strides,
             const char* function = "npukit::TensorView");
  static TensorView contiguous(void* data, DType dtype, Shape shape, Layout layout = Layout::nchw);

  DType dtype() const { return dtype_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t stride(int i) const { return strides_[static_cast<size_t>(i)]; }
  int64_t numel() const { return shape_numel(shape_); }
  bool empty() const { return data_ == nullptr; }
  bool is_contiguous() const;  // dense row-major (NCHW for 4-D)

  void* raw() const { return data_; }
  template <class T>
  T* data() const {
    expect_dtype(dtype_of<T>, "npukit::TensorView::data");
    return static_cast<T*>(data_);
  }
  // Element of a 4-D view; no checks (hot path of reference kernels).
  template <class T>
  T& at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return static_cast<T*>(
        data_)[n * strides_[0] + c * strides_[1] + h * strides_[2] + w * strides_[3]];
  }
  template <class T>
  T& at2(int64_t r, int64_t c) const {
    return static_cast<T*>(data_)[r * strides_[0] + c * strides_[1]];
  }

  // Validation helpers used at public entry points.
  void expect_dtype(DType want, const char* function, const char* parameter = "dtype") const;
  void expect_rank(int want, const char* function, const char* parameter) const;
  void expect_shape(const Shape& want, const char* function, const char* parameter) const;

 private:
  void* data_ = nullptr;
  DType dtype_ = DType::f32;
  Shape shape_;
  Shape strides_;
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape, Layout layout = Layout::nchw);  // zero-filled, 64-byte aligned
  Tensor(const Tensor& other);                                     // deep copy, same layout
  Tensor& operator=(const Tensor& other);                          // deep copy
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  template <class T>
  static Tensor from(const Shape& shape, const std::vector<T>& values) {
    Tensor t(dtype_of<T>, shape);
    check(static_cast<int64_t>(values.size()) == t.numel(), "npukit::Tensor::from", "values",
          std::to_string(values.size()) + " elements",
          std::to_string(t.numel()) + " for shape " + shape_text(shape));
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }

  const TensorView& view() const { return view_; }
  operator const TensorView&() const { return view_; }  // NOLINT: a Tensor is usable as a view
  DType dtype() const { return view_.dtype(); }
  const Shape& shape() const { return view_.shape(); }
  Layout layout() const { return layout_; }
  int64_t numel() const { return view_.numel(); }
  template <class T>
  T* data() const {
    return view_.data<T>();
  }
  template <class T>
  std::vector<T> to_vector() const;  // logical (N, C, H, W) order, whatever the layout

 private:
  struct Free {
    void operator()(void* p) const;
  };
  BudgetReservation reserved_;  // declared first: released after the buffer is freed
  std::unique_ptr<void, Free> buffer_;
  TensorView view_;
  Layout layout_ = Layout::nchw;
};

// Fails unless `t` has at most kMaxKernelRank axes (kernels that pad views to 4-D).
void expect_kernel_rank(const TensorView& t, const char* function, const char* parameter);

// Copies `src` into `dst` element by element (same dtype and shape, any strides).
void copy(const TensorView& src, const TensorView& dst);

}  // namespace npukit
