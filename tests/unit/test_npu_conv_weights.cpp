// okk_bdc_conv2d reads its 2IC weights out of local memory by rows when the
// pairs of a kernel row are consecutive and pair by pair otherwise, then
// unpacks them (src/npu/okk_nn.cpp): both paths must give the operator core
// exactly the dense (OC, IC, KH, KW) weights, drop the dummy partner of an
// odd IC, and name the same first never-written pair.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "npu_test_util.hpp"
#include "npukit/npukit.hpp"

namespace npukit::npu::test {
namespace test_npu_conv_weights {
namespace {

constexpr local_addr_t kIn = 0, kWeights = 131072, kBias = 262144, kOut = 327680;

// Pair (j, oc, kh, kw) of a 2IC weight tensor starting on NPU 0 at byte
// `base` with pair strides `st`: channel oc on NPU oc % 64, slot oc / 64.
uint8_t* pair_at(const dim4& st, int j, int oc, int kh, int kw, bool flags) {
  const int64_t off = kWeights + 8 * (int64_t{j} * st.n + int64_t{oc / 64} * st.c +
                                      int64_t{kh} * st.h + int64_t{kw} * st.w);
  Machine& m = machine();
  return flags ? m.written(oc % 64, off) : m.local(oc % 64, off);
}

float random_value(std::mt19937& rng) {
  switch (std::uniform_int_distribution<int>(0, 19)(rng)) {
    case 0:
      return -0.0f;
    case 1:
      return 1e-40f;  // denormal: flushed by the chip's arithmetic
    case 2:
      return std::numeric_limits<float>::infinity();
    default:
      return std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
  }
}

struct Problem {
  int n, ic, oc, h, w, kh, kw;
  int layout;  // 0: compact (NULL), 1: padded kernel rows, 2: every other pair
  bool bias, result_add;
};

std::string text(const Problem& p) {
  std::string s = "N";  // appended piecewise: GCC 12 warns falsely on "N" + string
  for (const auto& [name, v] : {std::pair<const char*, int>{"", p.n},
                                {" IC", p.ic},
                                {" OC", p.oc},
                                {" H", p.h},
                                {" W", p.w},
                                {" KH", p.kh},
                                {" KW", p.kw},
                                {" layout ", p.layout}}) {
    s += name;
    s += std::to_string(v);
  }
  if (p.bias) s += " bias";
  if (p.result_add) s += " result_add";
  return s;
}

dim4 pair_strides(const Problem& p) {
  const int slots = (p.oc + 63) / 64;
  const int sw = p.layout == 2 ? 2 : 1;
  const int sh = p.layout == 1 ? p.kw + 3 : sw * p.kw;
  const int sc = sh * p.kh + (p.layout == 1 ? 1 : 0);
  return dim4{sc * slots, sc, sh, sw};
}

class NpuConvWeights : public OkkTest {
 protected:
  static int64_t run(const Problem& p, std::mt19937& rng);
};

// Runs one problem through okk_bdc_conv2d and through the core with the dense
// weights; returns the number of differing output words.
int64_t NpuConvWeights::run(const Problem& p, std::mt19937& rng) {
  const int icn = (p.ic + 1) / 2;
  const dim4 xs{p.n, p.ic, p.h, p.w}, st = pair_strides(p);
  Tensor x(DType::f32, {p.n, p.ic, p.h, p.w}), w(DType::f32, {p.oc, p.ic, p.kh, p.kw});
  Tensor b(DType::f32, {1, p.oc, 1, 1});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = random_value(rng);
  for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] = random_value(rng);
  for (int j = 0; j < icn; ++j)
    for (int oc = 0; oc < p.oc; ++oc)
      for (int kh = 0; kh < p.kh; ++kh)
        for (int kw = 0; kw < p.kw; ++kw) {
          float pair[2] = {random_value(rng), std::nanf("")};  // NaN: the dummy of an odd IC
          if (2 * j + 1 < p.ic) pair[1] = random_value(rng);
          for (int e = 0; e < 2 && 2 * j + e < p.ic; ++e)
            w.data<float>()[((int64_t{oc} * p.ic + 2 * j + e) * p.kh + kh) * p.kw + kw] = pair[e];
          std::memcpy(pair_at(st, j, oc, kh, kw, false), pair, 8);
          std::memset(pair_at(st, j, oc, kh, kw, true), 1, 8);
        }
  std::vector<float> xv(x.data<float>(), x.data<float>() + x.numel());
  put_f32(kIn, xs, xv);
  const int oh = p.h - p.kh + 1, ow = p.w - p.kw + 1;
  const dim4 ys{p.n, p.oc, oh, ow};
  Tensor y(DType::f32, {p.n, p.oc, oh, ow});
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = random_value(rng);
  if (p.result_add)
    put_f32(kOut, ys, std::vector<float>(y.data<float>(), y.data<float>() + y.numel()));
  if (p.bias) {
    const dim4 bs{1, p.oc, 1, 1};
    dim4 bst;
    okk_compact_stride(&bst, 0, &bs);
    put_f32(kBias, bs, std::vector<float>(b.data<float>(), b.data<float>() + b.numel()), &bst);
  }
  okk_bdc_conv2d(kOut, kIn, kWeights, kBias, &xs, p.oc, p.kh, p.kw, nullptr,
                 p.layout == 0 ? nullptr : &st, p.bias, p.result_add, nullptr, nullptr, nullptr);
  const std::vector<uint32_t> got = get(kOut, ys);
  Conv2dParams cp;
  cp.window.kernel_h = p.kh;
  cp.window.kernel_w = p.kw;
  cp.has_bias = p.bias;
  cp.result_add = p.result_add;
  apply_profile(cp, Profile::bm1684);
  conv2d(x, w, p.bias ? b : Tensor(), y, cp);
  int64_t bad = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float want = y.data<float>()[i];
    const bool same = std::isnan(want) ? std::isnan(from_bits(got[static_cast<size_t>(i)]))
                                       : bits(want) == got[static_cast<size_t>(i)];
    bad += same ? 0 : 1;
  }
  return bad;
}

TEST_F(NpuConvWeights, EveryLayoutGivesTheCoreTheDenseWeightsBitForBit) {
  constexpr unsigned kSeed = 20261126;
  std::mt19937 rng(kSeed);
  const int saved_threads = num_threads();
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    Problem p{pick(1, 2), pick(1, 9),      pick(1, 70),    0, 0, pick(1, 3), pick(1, 3),
              trial % 3,  pick(0, 1) == 1, pick(0, 1) == 1};
    p.h = p.kh + pick(0, 3);
    p.w = p.kw + pick(0, 3);
    for (int threads : {1, 3}) {
      set_num_threads(threads);
      EXPECT_EQ(run(p, rng), 0) << "seed " << kSeed << " trial " << trial << " threads " << threads
                                << ": " << text(p);
    }
  }
  set_num_threads(saved_threads);
}

// The first never-written pair (n = j, c = oc, h = kh, w = kw) is the one
// named, on the row path (compact and padded rows) and the pair path.
TEST_F(NpuConvWeights, FirstNeverWrittenPairOnEveryPath) {
  for (int layout : {0, 1, 2}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    select_machine(bm1684_config());
    const Problem p{1, 4, 3, 4, 4, 3, 3, layout, false, false};
    const dim4 xs{1, 4, 4, 4}, st = pair_strides(p);
    put_f32(kIn, xs, std::vector<float>(64, 1.0f));
    const float pair[2] = {1.0f, 1.0f};
    // Every pair written except (j 1, oc 2, kh 1, kw 2) and (j 1, oc 2, kh 2, kw 0).
    for (int j = 0; j < 2; ++j)
      for (int oc = 0; oc < 3; ++oc)
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            if (j == 1 && oc == 2 && ((kh == 1 && kw == 2) || (kh == 2 && kw == 0))) continue;
            std::memcpy(pair_at(st, j, oc, kh, kw, false), pair, 8);
            std::memset(pair_at(st, j, oc, kh, kw, true), 1, 8);
          }
    expect_rule(
        [&] {
          okk_bdc_conv2d(kOut, kIn, kWeights, 0, &xs, 3, 3, 3, nullptr, layout == 0 ? nullptr : &st,
                         false, false, nullptr, nullptr, nullptr);
        },
        {"okk_bdc_conv2d", "'weight_addr'", "element (1, 2, 1, 2) was never written"});
  }
}

}  // namespace
}  // namespace test_npu_conv_weights
}  // namespace npukit::npu::test
