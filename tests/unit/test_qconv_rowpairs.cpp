// x8-qconv-rowpairs-nhwc-avx2 and x8-qconv-rowquads-nhwc-avx512vnni (a
// window row's taps as int16 pairs / u8 quads, for 1-2 input channels), each
// that runs here, against the reference, byte for byte, over seeded random
// few-channel layers: 1-2 channels, windows 1x1 to 5x8 with a row of up to 8
// codes, strides 1-3, dilation down 1-2, pads 0-3 on each side (windows
// mostly in the padding too), maps of 1-40 columns (every 4-pixel block
// tail), 2-40 output channels (partial 8-channel groups) and the bundled
// model's 8, u8/s8 x with any zero point, s8 (0) / u8 (128) weights,
// per-channel scales, bias, codes and zero points at the ends, scales that
// saturate, NCHW and NHWC x and y, 1-3 threads. Also its declines and the whole
// list through qlinear_conv. A failure prints the seed and the case.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>

#include "npukit/kernels.hpp"
#include "npukit/ops/quantized.hpp"
#include "npukit/parallel.hpp"
#include "ops/cpu/qconv_problem.hpp"
#include "test_util.hpp"
#include "variant_test_util.hpp"

namespace npukit {
namespace test_qconv_rowpairs {
namespace {

// The row kernels: int16 pairs (AVX2) and u8 quads (VNNI) of one body.
const char* const kNames[] = {"x8-qconv-rowpairs-nhwc-avx2", "x8-qconv-rowquads-nhwc-avx512vnni"};

struct Layer {
  int64_t n, c, h, w, oc, kh, kw, sh, sw, dh, pt, pb, pl, pr;
  DType xd, wd;
  bool x_nhwc, y_nhwc, per_channel, bias, extreme_codes, extreme_scales;
};

std::string text(const Layer& l, uint32_t seed, int it) {
  char b[320];
  std::snprintf(b, sizeof b,
                "seed %u case %d: x %s [%ld,%ld,%ld,%ld] %s y %s w %s oc %ld k %ldx%ld stride "
                "%ldx%ld dilation %ldx1 pads t%ld b%ld l%ld r%ld per_channel %d bias %d extreme "
                "codes %d scales %d",
                seed, it, dtype_name(l.xd), (long)l.n, (long)l.c, (long)l.h, (long)l.w,
                l.x_nhwc ? "nhwc" : "nchw", l.y_nhwc ? "nhwc" : "nchw", dtype_name(l.wd),
                (long)l.oc, (long)l.kh, (long)l.kw, (long)l.sh, (long)l.sw, (long)l.dh, (long)l.pt,
                (long)l.pb, (long)l.pl, (long)l.pr, l.per_channel, l.bias, l.extreme_codes,
                l.extreme_scales);
  return b;
}

Layer random_layer(std::mt19937& rng, int it) {
  auto r = test::picker(rng);
  Layer l{};
  l.n = r(1, 3), l.c = r(1, 2);
  l.kh = r(1, 5), l.kw = r(1, 8 / l.c);
  l.sh = r(1, 3), l.sw = r(1, 3), l.dh = r(1, 2);
  l.pt = r(0, 3), l.pb = r(0, 3), l.pl = r(0, 3), l.pr = r(0, 3);
  l.h = r(std::max<int64_t>(1, (l.kh - 1) * l.dh + 1 - l.pt - l.pb), 20);
  l.w = r(std::max<int64_t>(1, l.kw - l.pl - l.pr), 40);
  l.oc = it % 3 == 0 ? 8 : r(2, 40);  // 1 x 1 channel is depthwise
  if (it % 5 == 1)
    l.c = 1, l.kh = l.kw = 3, l.pt = l.pb = l.pl = l.pr = 1, l.sh = l.sw = l.dh = 1;  // model
  l.xd = r(0, 1) ? DType::u8 : DType::s8;
  l.wd = r(0, 2) ? DType::s8 : DType::u8;
  l.x_nhwc = r(0, 1), l.y_nhwc = r(0, 1), l.per_channel = r(0, 1), l.bias = r(0, 3) != 0;
  // 2 channels on NCHW x and y are the NCHW GEMM's (DeclinesWhatItDoesNotCover).
  if (l.c == 2 && !l.x_nhwc) l.y_nhwc = true;
  l.extreme_codes = it % 4 == 0, l.extreme_scales = it % 7 == 2;
  return l;
}

struct Built {
  Tensor x, w, bias, y;
  QLinearConvParams p;
};

void fill(Tensor& t, std::mt19937& rng, bool extreme) {
  const bool s = t.dtype() == DType::s8;
  auto* d = static_cast<uint8_t*>(t.view().raw());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int v = extreme ? (rng() % 2 ? (s ? -128 : 0) : (s ? 127 : 255))
                          : static_cast<int>(rng() % 256) - (s ? 128 : 0);
    d[i] = static_cast<uint8_t>(v);
  }
}

Built build(const Layer& l, std::mt19937& rng) {
  auto r = test::picker(rng);
  Built b;
  b.x = Tensor(l.xd, {l.n, l.c, l.h, l.w}, l.x_nhwc ? Layout::nhwc : Layout::nchw);
  b.w = Tensor(l.wd, {l.oc, l.c, l.kh, l.kw});
  fill(b.x, rng, l.extreme_codes);
  fill(b.w, rng, l.extreme_codes);
  QLinearConvParams& p = b.p;
  p.window.kernel_h = l.kh, p.window.kernel_w = l.kw;
  p.window.stride_h = l.sh, p.window.stride_w = l.sw, p.window.dilation_h = l.dh;
  p.window.pad_top = l.pt, p.window.pad_bottom = l.pb, p.window.pad_left = l.pl,
  p.window.pad_right = l.pr;
  const bool xs = l.xd == DType::s8;
  auto zp = [&] {
    const int64_t lo = xs ? -128 : 0, hi = xs ? 127 : 255;
    return static_cast<int32_t>(l.extreme_codes ? (r(0, 1) ? lo : hi) : r(lo, hi));
  };
  p.x_zero_point = zp(), p.y_zero_point = zp();
  const float K = static_cast<float>(l.c * l.kh * l.kw);
  p.x_scale = l.extreme_scales ? 1e-30f : 0.02f;
  p.y_scale = l.extreme_scales ? 3e-37f : 0.02f * 0.05f * std::sqrt(K) * 60.0f;
  p.w.scale.clear(), p.w.zero_point.clear();
  for (int64_t o = 0; o < (l.per_channel ? l.oc : 1); ++o) {
    p.w.scale.push_back(l.extreme_scales ? 1e-8f
                                         : 0.05f * (0.5f + 0.1f * static_cast<float>(o % 16)));
    p.w.zero_point.push_back(l.wd == DType::s8 ? 0 : 128);
  }
  p.w.axis = 0;
  p.has_bias = l.bias;
  b.bias = Tensor(DType::s32, {l.oc});
  for (int64_t o = 0; o < l.oc; ++o)
    b.bias.data<int32_t>()[o] = static_cast<int32_t>(r(-20000, 20000));
  b.y = Tensor(l.xd, qlinear_conv_output_shape(b.x.shape(), b.w.shape(), p),
               l.y_nhwc ? Layout::nhwc : Layout::nchw);
  return b;
}

std::vector<uint8_t> bytes(const Tensor& t) {
  const auto* d = static_cast<const uint8_t*>(t.view().raw());
  return {d, d + t.numel()};
}

const KernelVariant<QConvProblem>& variant(const std::string& name) {
  for (const auto& v : qconv_kernels().variants)
    if (v.name == name) return v;
  throw std::runtime_error(name + " is not listed");
}
const KernelVariant<QConvProblem>& rowpairs() {
  return variant(kNames[0]);
}

TEST(QConvRowPairs, MatchesTheReferenceOnFewChannelLayers) {
  std::vector<const KernelVariant<QConvProblem>*> here;
  for (const char* name : kNames)
    if (KernelList<QConvProblem>::runnable(variant(name))) here.push_back(&variant(name));
  if (here.empty())
    GTEST_SKIP() << "no row kernel runs here (the AVX2 one needs avx2; this run allows "
                 << isa_name(max_isa()) << ", or NPUKIT_IMPL=reference)";
  const uint32_t seed = 20261128;
  std::mt19937 rng(seed);
  test::SettingsRestore restore;
  int ran = 0, informative = 0, saturated = 0;
  for (int it = 0; it < 400; ++it) {
    const Layer l = random_layer(rng, it);
    Built b = build(l, rng);
    const std::string what = text(l, seed, it);
    const QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, b.y, b.p);
    std::memset(b.y.view().raw(), 0x5a, static_cast<size_t>(b.y.numel()));
    qconv_reference(q);
    const std::vector<uint8_t> want = bytes(b.y);
    for (const auto* v : here) {
      ASSERT_EQ(v->declines(q), nullptr) << v->name << " " << what << ": declined";
      set_num_threads(1 + it % 3);
      std::memset(b.y.view().raw(), 0xa5, static_cast<size_t>(b.y.numel()));
      v->run(q);
      const std::vector<uint8_t> got = bytes(b.y);
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
      ASSERT_EQ(bad, 0u) << v->name << " " << what << ", threads " << num_threads() << ": " << bad
                         << " bytes differ, first at byte " << first << " (got " << int{got[first]}
                         << ", want " << int{want[first]} << ")";
      ++ran;
    }
    // Through the list with the weights packed once (the runner's path).
    const auto pk = pack_qlinear_conv_weights(b.w, b.bias, b.p, l.xd);
    QConvProblem packed = q;
    packed.packed = pk.get();
    std::memset(b.y.view().raw(), 0xa5, static_cast<size_t>(b.y.numel()));
    qconv_kernels().run(packed);
    ASSERT_EQ(bytes(b.y), want) << what << " (packed, through the list)";
    const std::set<uint8_t> distinct(want.begin(), want.end());
    informative += distinct.size() > 3;
    const uint8_t lo = l.xd == DType::s8 ? 0x80 : 0, hi = l.xd == DType::s8 ? 0x7f : 0xff;
    saturated += distinct.count(lo) + distinct.count(hi) > 0;
  }
  EXPECT_EQ(ran, 400 * static_cast<int>(here.size()));
  EXPECT_GT(informative, 250) << "too many cases with near-constant outputs";
  EXPECT_GT(saturated, 100) << "too few cases reaching the code range's ends";
}

TEST(QConvRowPairs, DeclinesWhatItDoesNotCover) {
  std::mt19937 rng(7);
  Layer l{1, 1, 9, 9,         8,         3,     3,    1,     1,    1,     1,
          1, 1, 1, DType::u8, DType::s8, false, true, false, true, false, false};
  const auto reason = [&](const Layer& m, auto&& tweak) {
    Built b = build(m, rng);
    tweak(b);
    const QConvProblem q = qlinear_conv_problem(b.x, b.w, b.bias, b.y, b.p);
    const char* why = rowpairs().declines(q);
    return std::string(why ? why : "");
  };
  const auto none = [](Built&) {};
  EXPECT_EQ(reason(l, none), "");
  Layer three = l;
  three.c = 3;
  EXPECT_NE(reason(three, none).find("more than 2 input channels"), std::string::npos);
  Layer wide = l;
  wide.c = 2, wide.kw = 5, wide.w = 12;
  EXPECT_NE(reason(wide, none).find("more than 8 codes"), std::string::npos);
  EXPECT_NE(reason(l,
                   [](Built& b) {
                     b.p.window.dilation_w = 2;
                     b.y = Tensor(b.y.dtype(),
                                  qlinear_conv_output_shape(b.x.shape(), b.w.shape(), b.p),
                                  Layout::nhwc);
                   })
                .find("dilated across"),
            std::string::npos);
  // NCHW y (conv1's below AVX-512 VNNI, int8_layout.cpp) is taken; with 2
  // channels on NCHW x too the list's rule sends it to the NCHW GEMM.
  const auto nchw_y = [](Built& b) { b.y = Tensor(b.y.dtype(), b.y.shape(), Layout::nchw); };
  EXPECT_EQ(reason(l, nchw_y), "");
  Layer two = l;
  two.c = 2;
  EXPECT_NE(reason(two, nchw_y).find("NCHW x and y"), std::string::npos);
  two.x_nhwc = true;
  EXPECT_EQ(reason(two, nchw_y), "");
  EXPECT_NE(reason(l, [](Built& b) { b.p.w.zero_point = {3}; }).find("weight zero point"),
            std::string::npos);
}

}  // namespace
}  // namespace test_qconv_rowpairs
}  // namespace npukit
