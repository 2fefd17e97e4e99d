// The runner's batch slices (src/onnx/batch_slices.hpp): how a batch is cut,
// the rows a slice sees, and the setting's errors. The byte-for-byte checks of
// sliced runs are tests/python/test_batch_slices.py.
#include <cstdlib>
#include <set>

#include "npukit/onnx/model.hpp"
#include "npukit/parallel.hpp"
#include "onnx/batch_slices.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_batch_slices {
namespace {

TEST(BatchSlices, SizesCoverTheBatchEvenlyWithAtMostTwoSizes) {
  for (int64_t n = 1; n <= 70; ++n)
    for (int64_t images = 1; images <= n + 2; ++images) {
      const std::vector<int64_t> s = onnx::slice_sizes(n, images);
      int64_t sum = 0;
      std::set<int64_t> distinct;
      for (size_t i = 0; i < s.size(); ++i) {
        sum += s[i];
        distinct.insert(s[i]);
        EXPECT_LE(s[i], images) << "n " << n << " images " << images;
        if (i) {
          EXPECT_LE(s[i], s[i - 1]) << "n " << n << " images " << images;  // largest first
        }
      }
      EXPECT_EQ(sum, n) << "n " << n << " images " << images;
      EXPECT_LE(distinct.size(), 2u) << "n " << n << " images " << images;
      EXPECT_LE(*distinct.rbegin() - *distinct.begin(), 1) << "n " << n << " images " << images;
      EXPECT_EQ(static_cast<int64_t>(s.size()), (n + std::min(images, n) - 1) / std::min(images, n))
          << "n " << n << " images " << images;
    }
}

TEST(BatchSlices, RowsKeepTheStridesAndMoveByTheBatchStride) {
  Tensor t(DType::f32, {5, 2, 3, 4});
  float* p = t.view().data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i);
  const TensorView rows = onnx::batch_rows(t.view(), 3, 2);
  EXPECT_EQ(rows.shape(), (Shape{2, 2, 3, 4}));
  EXPECT_EQ(rows.strides(), t.view().strides());
  EXPECT_EQ(rows.at<float>(0, 0, 0, 0), 72.0f);
  EXPECT_EQ(rows.at<float>(1, 1, 2, 3), 119.0f);
}

TEST(BatchSlices, BadSettingIsANamedError) {
  ::setenv("NPUKIT_BATCH_SLICES", "many", 1);
  EXPECT_TRUE(raises([] { onnx::batch_slice_setting(); }, "npukit::onnx::Model::run",
                     "NPUKIT_BATCH_SLICES", "many"));
  ::setenv("NPUKIT_BATCH_SLICES", "off", 1);
  EXPECT_EQ(onnx::batch_slice_setting(), -1);
  ::setenv("NPUKIT_BATCH_SLICES", "0", 1);
  EXPECT_EQ(onnx::batch_slice_setting(), -1);
  ::setenv("NPUKIT_BATCH_SLICES", "12", 1);
  EXPECT_EQ(onnx::batch_slice_setting(), 12);
  ::unsetenv("NPUKIT_BATCH_SLICES");
  EXPECT_EQ(onnx::batch_slice_setting(), 0);
}

// The bundled fp32 model on an odd batch: the same bytes sliced (every size,
// 1 and 3 threads) as unsliced, through the C++ API.
TEST(BatchSlices, BundledModelGivesTheUnslicedBytes) {
  onnx::Model m = onnx::Model::load(NPUKIT_SOURCE_DIR "/models/fashion_mnist_fp32.onnx");
  Tensor x(DType::f32, {11, 1, 28, 28});
  float* p = x.view().data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<float>((i * 7919) % 256) / 255.0f;
  ::setenv("NPUKIT_BATCH_SLICES", "off", 1);
  const std::vector<Tensor> want = m.run({x.view()});
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    for (int images = 1; images <= 11; ++images) {
      ::setenv("NPUKIT_BATCH_SLICES", std::to_string(images).c_str(), 1);
      const std::vector<Tensor> got = m.run({x.view()});
      EXPECT_TRUE(same_bits(got[0], want[0].to_vector<float>()))
          << "images per slice " << images << ", threads " << threads;
    }
  }
  ::unsetenv("NPUKIT_BATCH_SLICES");
  set_num_threads(0);
}

}  // namespace
}  // namespace test_batch_slices
}  // namespace npukit::test
