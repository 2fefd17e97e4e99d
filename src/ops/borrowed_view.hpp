// A TensorView held by a kernel-list problem struct without copying its
// shape and stride vectors: it points at the caller's view (which outlives
// the call), or holds a temporary view moved into it (tests build problems
// from temporaries). Copying a TensorView cost two heap allocations, and the
// pooling problems held two views: four allocations per call.
// A problem built from a `const TensorView&` borrows it: a function that
// returns a problem must not build it from its own reference parameters
// (they may be bound to temporaries); take the views by value and move them.
// Assigning a view or a tensor to one copies the view.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "npukit/tensor.hpp"

namespace npukit {

class BorrowedView {
 public:
  BorrowedView() : own_(TensorView()), view_(&*own_) {}  // an empty view (filled in later)
  BorrowedView(const TensorView& v) : view_(&v) {}       // NOLINT: a view is usable as one
  BorrowedView(const Tensor& t) : view_(&t.view()) {}    // NOLINT: as is a tensor
  BorrowedView(TensorView&& v) : own_(std::move(v)), view_(&*own_) {}  // NOLINT
  BorrowedView(Tensor&&) = delete;                                     // its data would go with it
  BorrowedView(const BorrowedView& o) : own_(o.own_), view_(own_ ? &*own_ : o.view_) {}
  BorrowedView& operator=(const BorrowedView& o) {
    if (this == &o) return *this;
    own_ = o.own_;
    view_ = own_ ? &*own_ : o.view_;
    return *this;
  }
  // Assigning a view or tensor copies the view: a problem reused across a
  // loop must not keep pointing at a tensor of a past iteration.
  BorrowedView& operator=(const TensorView& v) {
    own_ = v;
    view_ = &*own_;
    return *this;
  }
  BorrowedView& operator=(const Tensor& t) { return *this = t.view(); }
  ~BorrowedView() = default;

  const TensorView& view() const { return *view_; }
  operator const TensorView&() const { return *view_; }  // NOLINT: passes as a view

  DType dtype() const { return view_->dtype(); }
  int rank() const { return view_->rank(); }
  const Shape& shape() const { return view_->shape(); }
  const Shape& strides() const { return view_->strides(); }
  int64_t dim(int i) const { return view_->dim(i); }
  int64_t stride(int i) const { return view_->stride(i); }
  int64_t numel() const { return view_->numel(); }
  bool empty() const { return view_->empty(); }
  bool is_contiguous() const { return view_->is_contiguous(); }
  void* raw() const { return view_->raw(); }
  template <class T>
  T* data() const {
    return view_->data<T>();
  }
  template <class T>
  T& at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return view_->at<T>(n, c, h, w);
  }

 private:
  std::optional<TensorView> own_;
  const TensorView* view_;
};

}  // namespace npukit
