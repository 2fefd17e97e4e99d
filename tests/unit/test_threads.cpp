// Thread determinism: every operator gives bit-identical results for 1, 2 and
// 3 threads on random inputs (each output is computed by one thread in a
// fixed order), and errors thrown inside parallel regions reach the caller.
#include <atomic>
#include <functional>
#include <stdexcept>

#include "unit/test_util.hpp"

namespace npukit {
namespace test_threads {
namespace {

using test::random_f32;
using test::same_bits;

// Runs `op` into a fresh output for 1, 2 and 3 threads and compares the bits.
void expect_thread_independent(const Shape& out_shape, const std::function<void(Tensor&)>& op,
                               const char* what) {
  test::ThreadGuard guard;
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    ASSERT_EQ(num_threads(), threads);
    Tensor y = random_f32(out_shape, 99);  // same old y for result_add
    op(y);
    results.push_back(y.to_vector<float>());
  }
  // Guard against a trivial pass: the result must not be all zero.
  bool any_nonzero = false;
  for (float v : results[0]) any_nonzero |= v != 0.0f;
  EXPECT_TRUE(any_nonzero) << what;
  EXPECT_TRUE(same_bits(results[1], results[0])) << what << ": 2 threads";
  EXPECT_TRUE(same_bits(results[2], results[0])) << what << ": 3 threads";
}

TEST(Threads, Pool2d) {
  const Tensor x = random_f32({3, 5, 17, 13}, 1);
  for (PoolMode m : {PoolMode::avg, PoolMode::max, PoolMode::sum}) {
    Pool2dParams p;
    p.mode = m;
    p.window = test::window(3, 4, 2, 1);
    test::set_pads(p.window, 1, 2, 0, 1);
    p.window.dilation_w = 2;
    p.window.ins_h = 1;
    p.window.ceil_mode = true;
    p.divisor = AvgDivisor::clipped_window;
    p.coeff = 0.3f;
    expect_thread_independent(
        pool2d_output_shape(x.shape(), p), [&](Tensor& y) { pool2d(x, y, p); }, pool_mode_name(m));
  }
}

TEST(Threads, Int8MaxPool) {
  test::ThreadGuard guard;
  Tensor x(DType::s8, {2, 7, 9, 9});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>(i * 37 % 251);
  Pool2dParams p;
  p.mode = PoolMode::max;
  p.window = test::window(3, 3, 2, 2);
  test::set_pads(p.window, 1, 1, 1, 1);
  std::vector<std::vector<int8_t>> r;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    r.push_back(test::run_pool(x, p).to_vector<int8_t>());
  }
  EXPECT_EQ(r[1], r[0]);
  EXPECT_EQ(r[2], r[0]);
}

TEST(Threads, Conv2dAndDepthwise) {
  const Tensor x = random_f32({2, 6, 11, 10}, 2);
  const Tensor w = random_f32({9, 2, 3, 3}, 3), b = random_f32({9}, 4);
  Conv2dParams p;
  p.window = test::window(3, 3, 1, 2);
  test::set_pads(p.window, 1, 0, 2, 1);
  p.window.dilation_h = 2;
  p.groups = 3;
  p.has_bias = p.result_add = true;
  expect_thread_independent(
      conv2d_output_shape(x.shape(), w.shape(), p), [&](Tensor& y) { conv2d(x, w, b, y, p); },
      "conv2d");
  const Tensor wd = random_f32({12, 1, 3, 3}, 5);
  Depthwise2dParams d;
  d.window = test::window(3, 3, 2, 2);
  test::set_pads(d.window, 1, 1, 1, 1);
  d.multiplier = 2;
  expect_thread_independent(
      depthwise2d_output_shape(x.shape(), wd.shape(), d),
      [&](Tensor& y) { depthwise2d(x, wd, Tensor(), y, d); }, "depthwise2d");
}

TEST(Threads, Matmul) {
  const Tensor a = random_f32({37, 29}, 6), b = random_f32({29, 23}, 7), bias = random_f32({23}, 8);
  expect_thread_independent(
      {37, 23},
      [&](Tensor& y) {
        matmul(a, b, bias, y, {true, true});
      },
      "matmul");
  const Tensor a4 = random_f32({2, 1, 9, 8}, 9), b3 = random_f32({3, 8, 7}, 10);
  expect_thread_independent(
      matmul_broadcast_shape(a4.shape(), b3.shape()),
      [&](Tensor& y) { matmul_broadcast(a4, b3, y); }, "matmul_broadcast");
}

TEST(Threads, Elementwise) {
  const Tensor x = random_f32({3, 4, 5, 6}, 11);
  const Tensor s = random_f32({4}, 12), b = random_f32({4}, 13);
  expect_thread_independent(
      x.shape(), [&](Tensor& y) { relu(x, y, {true}); }, "relu");
  expect_thread_independent(
      x.shape(), [&](Tensor& y) { bias(x, b, y); }, "bias");
  expect_thread_independent(
      x.shape(), [&](Tensor& y) { scale(x, s, y, {true}); }, "scale");
  expect_thread_independent(
      x.shape(), [&](Tensor& y) { scale_bias(x, s, b, y, {true}); }, "scale_bias");
}

TEST(Threads, ParallelForVisitsEachIndexOnce) {
  test::ThreadGuard guard;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<std::atomic<int>> hits(101);
    parallel_for(101, [&](int64_t i) { hits[static_cast<size_t>(i)]++; });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(Threads, ExceptionsReachTheCaller) {
  test::ThreadGuard guard;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    EXPECT_THROW(parallel_for(50,
                              [](int64_t i) {
                                if (i == 37) throw std::runtime_error("boom");
                              }),
                 std::runtime_error);
  }
}

TEST(Threads, SetNumThreadsValidates) {
  test::ThreadGuard guard;
  EXPECT_TRUE(test::raises([] { set_num_threads(-1); }, "npukit::set_num_threads", "n", "-1"));
  EXPECT_TRUE(test::raises([] { set_num_threads(5000); }, "npukit::set_num_threads", "n", "5000"));
  set_num_threads(0);
  EXPECT_GE(num_threads(), 1);
}

}  // namespace
}  // namespace test_threads
}  // namespace npukit
