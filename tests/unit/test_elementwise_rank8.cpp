// Element-wise float math at every rank 0 to 8 (swin_t adds rank-5 tensors):
// npukit::binary, broadcast_binary and unary against a per-element loop over
// the original (uncollapsed) views (Relu and Clip against the reference per element), on random
// shapes with broadcasting, transposed and gapped strides, special values, 1/2/3 threads, every ISA
// level the host runs and the reference kernels. Seed and case are printed.
#include <algorithm>
#include <bit>
#include <numeric>

#include "ops/elementwise_blocks.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_elementwise_rank8 {
namespace {

constexpr uint32_t kSeed = 20261126;

float special_or_uniform(std::mt19937& rng) {
  static const float specials[] = {kNaN,   -kNaN,   kInf,  -kInf,   0.0f,     -0.0f,
                                   1e-45f, -1e-39f, 2.0f,  3.0f,    -3.0f,    0.5f,
                                   1e30f,  -1e30f,  18.0f, 3.4e38f, -3.4e38f, 1.0f};
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  if (rng() % 6 == 0) return specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
  return u(rng);
}

// A view of `shape` inside `storage`: axes laid out in a random order, some
// with a gap, so that only some neighbouring axes can merge.
TensorView random_layout(const Shape& shape, std::mt19937& rng, Tensor& storage, bool dense,
                         std::string& text) {
  const size_t r = shape.size();
  std::vector<size_t> order(r);
  std::iota(order.begin(), order.end(), size_t{0});
  if (!dense && r > 1 && rng() % 2) std::shuffle(order.begin(), order.end(), rng);
  Shape strides(r, 1);
  int64_t next = 1;
  for (size_t k = r; k-- > 0;) {  // order.back() is the fastest axis
    strides[order[k]] = next;
    next *= shape[order[k]] + (!dense && rng() % 4 == 0 ? 1 : 0);
  }
  storage = Tensor(DType::f32, {std::max<int64_t>(next, 1)});
  float* p = storage.data<float>();
  for (int64_t i = 0; i < storage.numel(); ++i) p[i] = special_or_uniform(rng);
  text += " strides " + shape_text(strides);
  return TensorView(storage.view().raw(), DType::f32, shape, strides);
}

// The element of `v` at output index `pos` (v right-aligned, broadcast).
float at(const TensorView& v, const Shape& out, const int64_t* pos) {
  int64_t o = 0;
  const size_t off = out.size() - static_cast<size_t>(v.rank());
  for (int i = 0; i < v.rank(); ++i)
    if (v.dim(i) != 1) o += pos[off + static_cast<size_t>(i)] * v.stride(i);
  return static_cast<const float*>(v.raw())[o];
}
float& at_out(const TensorView& y, const int64_t* pos) {
  int64_t o = 0;
  for (int i = 0; i < y.rank(); ++i) o += pos[i] * y.stride(i);
  return static_cast<float*>(y.raw())[o];
}

template <class F>
void for_each_index(const Shape& shape, F&& f) {
  for (int64_t d : shape)
    if (d == 0) return;
  int64_t pos[kMaxRank] = {};
  const int r = static_cast<int>(shape.size());
  while (true) {
    f(static_cast<const int64_t*>(pos));
    int i = r - 1;
    for (; i >= 0; --i) {
      if (++pos[i] < shape[static_cast<size_t>(i)]) break;
      pos[i] = 0;
    }
    if (i < 0) return;
  }
}

// Compares y with want element by element (NaN equals NaN).
::testing::AssertionResult same(const TensorView& y, const Shape& shape,
                                const std::function<float(const int64_t*)>& want) {
  int64_t bad = 0, first = -1, i = 0;
  float got_first = 0, want_first = 0;
  for_each_index(shape, [&](const int64_t* pos) {
    const float g = at_out(y, pos), w = want(pos);
    if (std::bit_cast<uint32_t>(g) != std::bit_cast<uint32_t>(w) &&
        !(std::isnan(g) && std::isnan(w))) {
      if (bad++ == 0) first = i, got_first = g, want_first = w;
    }
    ++i;
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " mismatches, first at flat index " << first
                                       << ": " << got_first << " vs " << want_first;
}

struct Setting {
  Impl impl;
  Isa isa;
  int threads;
};

std::vector<Setting> settings() {
  std::vector<Setting> s;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512})
    if (static_cast<int>(isa) <= static_cast<int>(host_isa()))
      for (int t : {1, 2, 3}) s.push_back({Impl::fast, isa, t});
  s.push_back({Impl::reference, host_isa(), 2});
  return s;
}

void apply(const Setting& s) {
  set_impl(s.impl);
  set_max_isa(s.isa);
  set_num_threads(s.threads);
}

std::string setting_text(const Setting& s) {
  return std::string(s.impl == Impl::reference ? "reference" : "fast") + " isa " + isa_name(s.isa) +
         " threads " + std::to_string(s.threads);
}

// An output shape of rank r with small axes (large ones now and then, so
// that the threaded fast kernels get whole blocks).
Shape random_shape(int r, std::mt19937& rng) {
  Shape s(static_cast<size_t>(r));
  for (auto& d : s) d = 1 + static_cast<int64_t>(rng() % 4);
  if (r > 0 && rng() % 5 == 0) {
    const size_t i = rng() % s.size();
    s[i] = 1;
    s[i] = std::max<int64_t>(1, static_cast<int64_t>(1 + rng() % 70000) / shape_numel(s));
  }
  if (r > 0 && rng() % 40 == 0) s[rng() % s.size()] = 0;
  return s;
}

// An operand shape that broadcasts to `out`: leading axes dropped, some set to 1.
Shape broadcast_operand(const Shape& out, std::mt19937& rng) {
  Shape s(out.begin() + static_cast<std::ptrdiff_t>(rng() % (out.size() + 1) / 2), out.end());
  for (auto& d : s)
    if (rng() % 3 == 0) d = 1;
  if (rng() % 10 == 0) s = {};  // a scalar (Pow's exponent special case)
  return s;
}

TEST(ElementwiseRank8, BinaryBroadcastUnaryEqualPerElementLoop) {
  test::SettingsRestore restore;
  std::mt19937 rng(kSeed);
  int cases = 0, compared = 0;
  for (int iter = 0; iter < 260; ++iter) {
    const int r = iter % 9;
    const Shape out = random_shape(r, rng);
    const bool dense = iter % 3 == 0;  // contiguous operands: the fast kernels' path
    const int kind = iter % 4;         // 0 binary, 1-2 broadcast_binary, 3 unary
    Shape sa = rng() % 2 ? out : broadcast_operand(out, rng);
    Shape sb = rng() % 2 ? out : broadcast_operand(out, rng);
    if (dense || kind == 3 || broadcast_shape(sa, sb) != out) sa = out;
    Tensor ka, kb, ky;
    std::string text = "seed " + std::to_string(kSeed) + " iter " + std::to_string(iter) + " out " +
                       shape_text(out) + " a " + shape_text(sa) + " b " + shape_text(sb);
    const TensorView a = random_layout(sa, rng, ka, dense, text);
    const TensorView b = random_layout(sb, rng, kb, dense, text);
    const TensorView y = random_layout(out, rng, ky, dense, text);
    const auto bop = static_cast<BinaryOp>(rng() % 2);
    const auto cop = static_cast<BroadcastOp>(rng() % 5);
    const auto uop = static_cast<UnaryOp>(rng() % (static_cast<unsigned>(UnaryOp::reciprocal) + 1));
    const UnaryParams up{0.2f, 0.5f};
    const bool scalar_b = sb.empty() || shape_numel(sb) == 1;
    std::function<float(const int64_t*)> want;
    if (kind == 0) {
      text += std::string(" binary ") + binary_op_name(bop);
      want = [&](const int64_t* pos) {
        const float u = at(a, out, pos), v = at(b, out, pos);
        return bop == BinaryOp::add ? u + v : u * v;
      };
    } else if (kind < 3) {
      text += std::string(" broadcast ") + broadcast_op_name(cop);
      want = [&](const int64_t* pos) {
        return ref::broadcast_scalar(cop, at(a, out, pos), at(b, out, pos), scalar_b);
      };
    } else {
      text += std::string(" unary ") + unary_op_name(uop);
      want = [&](const int64_t* pos) { return ref::unary_scalar(uop, at(a, out, pos), up); };
    }
    ++cases;
    for (const Setting& s : settings()) {
      apply(s);
      float* yp = ky.data<float>();
      std::fill(yp, yp + ky.numel(), -7.0f);  // stale values must not survive
      if (kind == 0)
        binary(bop, a, b, y);
      else if (kind < 3)
        broadcast_binary(cop, a, b, y);
      else
        unary(uop, a, y, up);
      ++compared;
      ASSERT_TRUE(same(y, out, want)) << text << " " << setting_text(s);
    }
  }
  std::printf("seed %u: %d cases, %d runs compared, 0 mismatches\n", kSeed, cases, compared);
  EXPECT_GT(compared, 1000);
}

// Relu and Clip of rank 0 to 8 (ONNX allows any rank): every element equals
// the reference kernel applied to that element alone, under every setting,
// with random NaN handling, FTZ, result_add and bounds (min > max included).
TEST(ElementwiseRank8, ReluClipEqualPerElementReference) {
  test::SettingsRestore restore;
  std::mt19937 rng(kSeed + 1);
  int cases = 0, compared = 0;
  for (int iter = 0; iter < 120; ++iter) {
    const int r = iter % 9;
    Shape out = random_shape(r, rng);
    const bool is_relu = iter % 2 == 0, dense = iter % 3 == 0;
    if (is_relu)
      for (auto& d : out) d = std::max<int64_t>(d, 1);  // relu wants sizes of at least 1
    Tensor kx, ky;
    std::string text = "seed " + std::to_string(kSeed + 1) + " iter " + std::to_string(iter) +
                       " shape " + shape_text(out);
    const TensorView x = random_layout(out, rng, kx, dense, text);
    const TensorView y = random_layout(out, rng, ky, dense, text);
    ElementwiseParams ep;
    ep.relu_nan = rng() % 2 ? ReluNaN::zero : ReluNaN::propagate;
    ep.flush_denormals = rng() % 2;
    ep.result_add = rng() % 3 == 0;
    ClipParams cp;
    cp.min = rng() % 4 ? special_or_uniform(rng) : -INFINITY;
    cp.max = rng() % 4 ? special_or_uniform(rng) : INFINITY;
    if (std::isnan(cp.min)) cp.min = -1.0f;
    if (std::isnan(cp.max)) cp.max = 1.0f;
    text += is_relu ? " relu nan_zero " + std::to_string(ep.relu_nan == ReluNaN::zero) + " ftz " +
                          std::to_string(ep.flush_denormals) + " result_add " +
                          std::to_string(ep.result_add)
                    : " clip [" + std::to_string(cp.min) + ", " + std::to_string(cp.max) + "]";
    constexpr float kStale = -7.0f;
    auto op = [&](const TensorView& a, const TensorView& b) {
      if (is_relu)
        relu(a, b, ep);
      else
        clip(a, b, cp);
    };
    // The expected values once per case, in row-major order of `out`.
    set_impl(Impl::reference);
    std::vector<float> expected;
    Tensor x1(DType::f32, {1}), y1(DType::f32, {1});
    for_each_index(out, [&](const int64_t* pos) {
      x1.data<float>()[0] = at(x, out, pos);
      y1.data<float>()[0] = kStale;
      op(x1, y1);
      expected.push_back(y1.data<float>()[0]);
    });
    const std::function<float(const int64_t*)> want = [&](const int64_t* pos) {
      int64_t flat = 0;
      for (size_t i = 0; i < out.size(); ++i) flat = flat * out[i] + pos[i];
      return expected[static_cast<size_t>(flat)];
    };
    ++cases;
    for (const Setting& s : settings()) {
      apply(s);
      float* yp = ky.data<float>();
      std::fill(yp, yp + ky.numel(), kStale);
      op(x, y);
      ++compared;
      ASSERT_TRUE(same(y, out, want)) << text << " " << setting_text(s);
    }
  }
  std::printf("seed %u: %d relu/clip cases, %d runs compared, 0 mismatches\n", kSeed + 1, cases,
              compared);
  EXPECT_GT(compared, 500);
}

// Contiguous views of any rank become one contiguous block (the fast
// kernels' condition); views that cannot merge become several 4-D blocks.
TEST(ElementwiseRank8, BlocksKeepContiguityAndCoverEveryElement) {
  for (const Shape& s :
       {Shape{}, Shape{5}, Shape{2, 3, 4, 5, 6, 7, 2, 3}, Shape{1, 1, 1, 1, 1, 7}}) {
    Tensor a(DType::f32, s), y(DType::f32, s);
    int blocks = 0;
    for_each_4d_block({a.view(), y.view()}, [&](const std::vector<TensorView>& v) {
      ++blocks;
      EXPECT_EQ(v[0].rank(), 4);
      EXPECT_TRUE(v[0].is_contiguous()) << shape_text(s) << " -> " << shape_text(v[0].strides());
      EXPECT_EQ(v[1].numel(), a.numel());
    });
    EXPECT_EQ(blocks, 1) << shape_text(s);
  }
  // [2,3,2,3,2,3] + b broadcast on every other axis: no axes merge, 2*3 blocks of 4-D.
  const Shape out{2, 3, 2, 3, 2, 3};
  Tensor a(DType::f32, out), b(DType::f32, {2, 1, 2, 1, 2, 1}), y(DType::f32, out);
  const TensorView bv = broadcast_view(b, out, "test", "b");
  int blocks = 0;
  int64_t covered = 0;
  for_each_4d_block({a.view(), bv, y.view()}, [&](const std::vector<TensorView>& v) {
    ++blocks;
    covered += v[2].numel();
    EXPECT_EQ(v[2].shape(), (Shape{2, 3, 2, 3}));
  });
  EXPECT_EQ(blocks, 6);
  EXPECT_EQ(covered, shape_numel(out));
}

TEST(ElementwiseRank8, RanksAboveEightAndBadBroadcastsAreErrors) {
  EXPECT_TRUE(raises([] { broadcast_shape(Shape(9, 1), {1}, "npukit::binary"); }, "npukit::binary",
                     "a", "[1, 1, 1, 1, 1, 1, 1, 1, 1]"));
  Tensor a(DType::f32, {2, 1, 3, 1, 2}), b(DType::f32, {4, 1, 2}), y(DType::f32, {2, 1, 3, 1, 2});
  EXPECT_TRUE(raises([&] { broadcast_binary(BroadcastOp::sub, a, b, y); },
                     "npukit::broadcast_binary", "b", "[4, 1, 2]"));
  Tensor y6(DType::f32, {2, 1, 3, 1, 2, 1});
  EXPECT_TRUE(raises([&] { unary(UnaryOp::neg, a, y6); }, "npukit::unary", "y"));
  EXPECT_TRUE(raises([&] { relu(a, y6); }, "npukit::relu", "y"));
  EXPECT_TRUE(raises([&] { clip(a, y6, {}); }, "npukit::clip", "y"));
}

}  // namespace
}  // namespace test_elementwise_rank8
}  // namespace npukit::test
