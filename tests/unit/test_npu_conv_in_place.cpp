// okk_bdc_conv2d computes its output where it lies in local memory, one run
// of channels on consecutive NPUs at a time (src/npu/okk_nn.cpp), and its
// operand buffers are held from the memory budget. Checked here: the output
// equals the operator core on dense tensors for outputs starting on any NPU
// and spanning several NPU slots, with and without result_add and bias; not
// one byte of local memory outside the output changes; result_add on a
// never-written output is still reported; operands whose strides repeat
// local memory into a dense copy larger than the budget stop the kernel with
// a message instead of exhausting the host.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "npu_test_util.hpp"
#include "npukit/npu/layout.hpp"
#include "npukit/npukit.hpp"

namespace npukit::npu::test {
namespace test_npu_conv_in_place {
namespace {

constexpr unsigned kSeed = 20261203;

class NpuConvInPlace : public OkkTest {};

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Local memory bytes of every element of a place.
std::vector<bool> bytes_of(const Place& p) {
  Machine& m = machine();
  const size_t total = static_cast<size_t>(m.config().npu_num) * m.config().local_mem_size;
  std::vector<bool> in(total, false);
  for (int64_t n = 0; n < p.shape.n; ++n)
    for (int64_t c = 0; c < p.shape.c; ++c) {
      const size_t base = static_cast<size_t>(plane(m, p, n, c) - m.local(0, 0));
      for (int64_t h = 0; h < p.shape.h; ++h)
        for (int64_t w = 0; w < p.shape.w; ++w)
          for (int64_t b = 0; b < 4; ++b)
            in[base + static_cast<size_t>(4 * (h * p.stride.h + w * p.stride.w) + b)] = true;
    }
  return in;
}

TEST_F(NpuConvInPlace, EqualsTheCoreOnEveryNpuRunAndTouchesNothingElse) {
  std::mt19937 rng(kSeed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const Config& cfg = machine().config();
  int runs_over_slots = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const int n = pick(1, 2), ic = pick(1, 5), oc = pick(1, 140), h = pick(3, 8), w = pick(3, 8);
    const int k = pick(1, 3), pad = pick(0, 1), q = trial % 4 == 0 ? 0 : pick(1, 63);
    const bool result_add = trial % 2 == 1, bias = trial % 3 != 0;
    const uint32_t lmem = static_cast<uint32_t>(cfg.local_mem_size);
    const local_addr_t x_addr = 0, w_addr = q * lmem + 131072, b_addr = q * lmem + 196608;
    const local_addr_t y_addr = q * lmem + 262144;
    const dim4 xs{n, ic, h, w};
    Tensor x(DType::f32, {n, ic, h, w}), wt(DType::f32, {oc, ic, k, k}), bt(DType::f32, {oc});
    const std::vector<float> xv = random_floats(rng, static_cast<size_t>(x.numel()));
    std::memcpy(x.data<float>(), xv.data(), xv.size() * 4);
    put_f32(x_addr, xs, xv);
    // 2IC pairs (ceil(ic/2), oc, k, k), compact from NPU q.
    const int icn = (ic + 1) / 2;
    const dim4 ws{icn, oc, k, k};
    dim4 wst;
    okk_compact_stride(&wst, q, &ws);
    std::vector<uint32_t> pairs(static_cast<size_t>(icn) * oc * k * k * 2, 0);
    for (int j = 0; j < icn; ++j)
      for (int o = 0; o < oc; ++o)
        for (int t = 0; t < k * k; ++t)
          for (int e = 0; e < 2 && 2 * j + e < ic; ++e) {
            const float v = random_floats(rng, 1)[0];
            wt.data<float>()[(int64_t{o} * ic + 2 * j + e) * k * k + t] = v;
            pairs[((static_cast<size_t>(j) * oc + o) * k * k + t) * 2 + e] = bits(v);
          }
    const dim4 wws{icn, oc, k, 2 * k};
    const dim4 wwst{2 * wst.n, 2 * wst.c, 2 * wst.h, 1};
    put(w_addr, wws, pairs, &wwst);
    const dim4 bs{1, oc, 1, 1};
    dim4 bst;
    okk_compact_stride(&bst, q, &bs);
    const std::vector<float> bv = random_floats(rng, static_cast<size_t>(oc));
    std::memcpy(bt.data<float>(), bv.data(), bv.size() * 4);
    put_f32(b_addr, bs, bv, &bst);
    const int oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
    const dim4 ys{n, oc, oh, ow};
    Tensor y(DType::f32, {n, oc, oh, ow});
    if (result_add) {
      const std::vector<float> yv = random_floats(rng, static_cast<size_t>(y.numel()));
      std::memcpy(y.data<float>(), yv.data(), yv.size() * 4);
      put_f32(y_addr, ys, yv);
    }
    const Place yp{Space::local, y_addr, Dims{n, oc, oh, ow},
                   aligned_stride(cfg, q, Dims{n, oc, oh, ow}, 4), 4};
    runs_over_slots += (q + oc - 1) / cfg.npu_num > 0;
    const std::vector<bool> out = bytes_of(yp);
    const size_t total = out.size();
    const std::vector<uint8_t> before(machine().local(0, 0), machine().local(0, 0) + total);
    const Padding pd{pad, pad, pad, pad};
    okk_bdc_conv2d(y_addr, x_addr, w_addr, b_addr, &xs, oc, k, k, nullptr, nullptr, bias,
                   result_add, &pd, nullptr, nullptr);
    const std::string what = "seed " + std::to_string(kSeed) + " trial " + std::to_string(trial) +
                             ": start NPU " + std::to_string(q) + " N" + std::to_string(n) + " IC" +
                             std::to_string(ic) + " OC" + std::to_string(oc) + " H" +
                             std::to_string(h) + " W" + std::to_string(w) + " K" +
                             std::to_string(k) + " pad " + std::to_string(pad) + " result_add " +
                             std::to_string(result_add) + " bias " + std::to_string(bias);
    const uint8_t* after = machine().local(0, 0);
    int64_t outside = 0;
    for (size_t i = 0; i < total; ++i) outside += !out[i] && after[i] != before[i];
    EXPECT_EQ(outside, 0) << what << ": bytes outside the output changed";
    Conv2dParams cp;
    cp.window.kernel_h = cp.window.kernel_w = k;
    cp.window.pad_top = cp.window.pad_bottom = cp.window.pad_left = cp.window.pad_right = pad;
    cp.has_bias = bias;
    cp.result_add = result_add;
    apply_profile(cp, Profile::bm1684);
    conv2d(x, wt, bias ? TensorView(bt) : TensorView(), y, cp);
    const std::vector<uint32_t> got = get(y_addr, ys);
    int64_t bad = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      bad += got[static_cast<size_t>(i)] != bits(y.data<float>()[i]);
    EXPECT_EQ(bad, 0) << what;
  }
  EXPECT_GE(runs_over_slots, 6) << "outputs spanning two or more NPU slots";
}

TEST_F(NpuConvInPlace, ResultAddOnANeverWrittenOutputIsReported) {
  const dim4 xs{1, 1, 4, 4}, ws{1, 3, 1, 2};
  put_f32(0, xs, std::vector<float>(16, 1.0f));
  dim4 wst;
  okk_compact_stride(&wst, 0, &ws);
  put(131072, ws, std::vector<uint32_t>(6, bits(0.5f)), &wst);
  expect_rule(
      [&] {
        okk_bdc_conv2d(262144, 0, 131072, 0, &xs, 3, 1, 1, nullptr, nullptr, false, true, nullptr,
                       nullptr, nullptr);
      },
      {"okk_bdc_conv2d", "output_addr", "never written"});
}

TEST_F(NpuConvInPlace, OperandsRepeatingLocalMemoryBeyondTheBudgetStopTheKernel) {
  // Input strides (0, 0, 0, 1): 64 channels of 2047 rows all read one row of
  // 2047 words per NPU, a valid place whose dense copy is 64 x 2047 x 2047
  // floats (1 GiB); the output (stride 15) is small.
  const dim4 row{1, 64, 1, 2047};
  put_f32(0, row, std::vector<float>(64 * 2047, 1.0f));
  const dim4 xs{1, 64, 2047, 2047}, xst{0, 0, 0, 1};
  const dim4 ws{32, 1, 1, 2};
  dim4 wst;
  okk_compact_stride(&wst, 0, &ws);
  put(131072, ws, std::vector<uint32_t>(64, bits(0.5f)), &wst);
  const uint64_t in_use = memory_in_use();
  set_memory_budget(64u << 20);
  const dim2 stride{15, 15};
  expect_rule(
      [&] {
        okk_bdc_conv2d(262144, 0, 131072, 0, &xs, 1, 1, 1, &xst, nullptr, false, false, nullptr,
                       &stride, nullptr);
      },
      {"okk_bdc_conv2d", "operand bytes", "1072693504", "operand buffer 'input'",
       "NPUKIT_MEMORY_LIMIT"});
  set_memory_budget(0);
  EXPECT_EQ(memory_in_use(), in_use) << "a refused operand holds nothing";
}

}  // namespace
}  // namespace test_npu_conv_in_place
}  // namespace npukit::npu::test
