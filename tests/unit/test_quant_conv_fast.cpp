// cpu::conv_accumulate (im2col + vpmaddwd) against ref::conv_accumulate:
// integer outputs bit-exact over seeded random geometries and extreme codes.
#include <gtest/gtest.h>

#include <random>

#include "npukit/ops/quantized.hpp"

namespace npukit {
namespace test_quant_conv_fast {
namespace {

struct Config {
  int64_t n, ic, h, w, oc, kh, kw, groups, sh, sw, dh, dw, pt, pb, pl, pr;
  DType xd, wd;
  bool per_channel;
};

std::string text(const Config& c, uint32_t seed) {
  char b[320];
  std::snprintf(b, sizeof b,
                "seed %u: x %s [%ld,%ld,%ld,%ld] w %s oc %ld k %ldx%ld groups %ld stride %ldx%ld "
                "dilation %ldx%ld pads %ld,%ld,%ld,%ld per_channel %d",
                seed, dtype_name(c.xd), (long)c.n, (long)c.ic, (long)c.h, (long)c.w,
                dtype_name(c.wd), (long)c.oc, (long)c.kh, (long)c.kw, (long)c.groups, (long)c.sh,
                (long)c.sw, (long)c.dh, (long)c.dw, (long)c.pt, (long)c.pb, (long)c.pl, (long)c.pr,
                c.per_channel);
  return b;
}

void fill(const Tensor& t, std::mt19937& rng, bool extreme) {
  const bool s = t.dtype() == DType::s8;
  std::uniform_int_distribution<int> any(s ? -128 : 0, s ? 127 : 255), coin(0, 1);
  auto* p = static_cast<uint8_t*>(t.view().raw());
  for (int64_t i = 0; i < t.view().numel(); ++i) {
    const int v = extreme ? (coin(rng) ? (s ? -128 : 0) : (s ? 127 : 255)) : any(rng);
    p[i] = static_cast<uint8_t>(v);
  }
}

TEST(QuantConvFast, MatchesReferenceOnRandomGeometries) {
  const uint32_t seed = 20261126;
  std::mt19937 rng(seed);
  auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int it = 0; it < 250; ++it) {
    Config c{};
    c.groups = r(0, 3) == 0 ? r(2, 4) : 1;
    c.n = r(1, 2);
    c.ic = c.groups * r(1, 5);
    c.oc = c.groups * r(1, 7);
    c.kh = r(1, 4), c.kw = r(1, 4), c.sh = r(1, 3), c.sw = r(1, 3), c.dh = r(1, 2), c.dw = r(1, 2);
    c.pt = r(0, 2), c.pb = r(0, 2), c.pl = r(0, 2), c.pr = r(0, 2);
    c.h = r((c.kh - 1) * c.dh + 1, 20), c.w = r((c.kw - 1) * c.dw + 1, 20);
    c.xd = r(0, 1) ? DType::u8 : DType::s8;
    c.wd = r(0, 1) ? DType::u8 : DType::s8;
    c.per_channel = r(0, 1);
    Window2d win;
    win.kernel_h = c.kh, win.kernel_w = c.kw, win.stride_h = c.sh, win.stride_w = c.sw;
    win.dilation_h = c.dh, win.dilation_w = c.dw;
    win.pad_top = c.pt, win.pad_bottom = c.pb, win.pad_left = c.pl, win.pad_right = c.pr;
    Tensor x(c.xd, {c.n, c.ic, c.h, c.w}), w(c.wd, {c.oc, c.ic / c.groups, c.kh, c.kw});
    const bool extreme = it % 4 == 0;
    fill(x, rng, extreme);
    fill(w, rng, extreme);
    QuantParams wq;
    wq.axis = 0;
    const int32_t lo = c.wd == DType::s8 ? -128 : 0, hi = c.wd == DType::s8 ? 127 : 255;
    wq.zero_point = {static_cast<int32_t>(r(lo, hi))};
    if (c.per_channel) {
      wq.zero_point.clear();
      for (int64_t o = 0; o < c.oc; ++o) wq.zero_point.push_back(static_cast<int32_t>(r(lo, hi)));
      wq.scale.assign(static_cast<size_t>(c.oc), 1.0f);
    }
    const int32_t x_zp = static_cast<int32_t>(c.xd == DType::s8 ? (extreme ? 127 : r(-128, 127))
                                                                : (extreme ? 255 : r(0, 255)));
    QLinearConvParams qp;
    qp.window = win;
    qp.groups = c.groups;
    const Shape out = qlinear_conv_output_shape(x.shape(), w.shape(), qp);
    Tensor a(DType::s32, out), b(DType::s32, out);
    ref::conv_accumulate(x.view(), w.view(), a.view(), win, c.groups, x_zp, wq);
    cpu::conv_accumulate(x.view(), w.view(), b.view(), win, c.groups, x_zp, wq);
    ASSERT_EQ(a.to_vector<int32_t>(), b.to_vector<int32_t>()) << text(c, seed) << " case " << it;
  }
}

TEST(QuantConvFast, LargestWindowAtTheInt32Limit) {
  // 33025 products of 255 * 255 (u8 - 0) * (u8 - 0)... use s8 codes with zero
  // points at the opposite end: (127 - -128) * (127 - -128) = 65025 each.
  const int64_t ic = 3669, k = 3;  // 3669 * 9 = 33021 <= kMaxInt32Products
  Tensor x(DType::s8, {1, ic, 3, 3}), w(DType::s8, {2, ic, k, k});
  std::fill_n(static_cast<int8_t*>(x.view().raw()), x.view().numel(), int8_t{127});
  std::fill_n(static_cast<int8_t*>(w.view().raw()), w.view().numel(), int8_t{127});
  Window2d win;
  win.kernel_h = win.kernel_w = k;
  QuantParams wq;
  wq.zero_point = {-128};
  Tensor a(DType::s32, {1, 2, 1, 1});
  cpu::conv_accumulate(x.view(), w.view(), a.view(), win, 1, -128, wq);
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{33021 * 65025, 33021 * 65025}));
}

}  // namespace
}  // namespace test_quant_conv_fast
}  // namespace npukit
