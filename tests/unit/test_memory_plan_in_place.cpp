// The memory plan's in-place rule (allocate.cpp's join_in_place): a FusedConv
// writes its output over its residual input Z when nothing reads Z after it.
// A model built to tempt wrong joins, run with the shared plan and with every
// value its own buffer (NPUKIT_MEMORY_PLAN=unshared): the same bits, and
// exactly the two joins the rule allows.
#include <cstdlib>
#include <string>

#include "npukit/onnx/model.hpp"
#include "npukit/parallel.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_memory_plan_in_place {
namespace {

// x [1, 2, 4, 4]; every Conv 2 -> 2 channels, 1x1 except conv2 and conv5
// (3x3, pads 1), no bias; weights multiples of 1/8. Under onnxruntime each
// Conv + Add (+ Relu) becomes a FusedConv with Z:
//   a  = relu(x)
//   o  = relu(conv1(a))        a graph output
//   b  = relu(conv2(a) + a)    Z is also X: not joined (the conv reads a)
//   t  = relu(conv3(b))
//   r3 = relu(conv4(t) + o)    Z = o is a graph output: not joined
//   u  = relu(conv5(r3))
//   r5 = relu(conv6(u) + r3)   joined: r3 is dead after
//   v  = relu(conv7(r5))
//   r7 = relu(conv8(v) + r5)   joined: r5 is dead after (r3's bytes again)
//   s9 = conv9(r7) + t         Z = t is read after: not joined
//   y  = s9 + t
// Outputs y and o. Made by onnx.helper (opset 13, IR 8).
const unsigned char kInPlace[] = {
    8,   8,   18,  0,   58,  223, 9,   10,  12,  10,  1,   120, 18,  1,   97,  34,  4,   82,  101,
    108, 117, 10,  36,  10,  1,   97,  10,  2,   119, 49,  18,  2,   99,  49,  34,  4,   67,  111,
    110, 118, 42,  17,  10,  4,   112, 97,  100, 115, 64,  0,   64,  0,   64,  0,   64,  0,   160,
    1,   7,   10,  13,  10,  2,   99,  49,  18,  1,   111, 34,  4,   82,  101, 108, 117, 10,  36,
    10,  1,   97,  10,  2,   119, 50,  18,  2,   99,  50,  34,  4,   67,  111, 110, 118, 42,  17,
    10,  4,   112, 97,  100, 115, 64,  1,   64,  1,   64,  1,   64,  1,   160, 1,   7,   10,  16,
    10,  2,   99,  50,  10,  1,   97,  18,  2,   115, 50,  34,  3,   65,  100, 100, 10,  13,  10,
    2,   115, 50,  18,  1,   98,  34,  4,   82,  101, 108, 117, 10,  36,  10,  1,   98,  10,  2,
    119, 51,  18,  2,   99,  51,  34,  4,   67,  111, 110, 118, 42,  17,  10,  4,   112, 97,  100,
    115, 64,  0,   64,  0,   64,  0,   64,  0,   160, 1,   7,   10,  13,  10,  2,   99,  51,  18,
    1,   116, 34,  4,   82,  101, 108, 117, 10,  36,  10,  1,   116, 10,  2,   119, 52,  18,  2,
    99,  52,  34,  4,   67,  111, 110, 118, 42,  17,  10,  4,   112, 97,  100, 115, 64,  0,   64,
    0,   64,  0,   64,  0,   160, 1,   7,   10,  16,  10,  2,   99,  52,  10,  1,   111, 18,  2,
    115, 52,  34,  3,   65,  100, 100, 10,  14,  10,  2,   115, 52,  18,  2,   114, 51,  34,  4,
    82,  101, 108, 117, 10,  37,  10,  2,   114, 51,  10,  2,   119, 53,  18,  2,   99,  53,  34,
    4,   67,  111, 110, 118, 42,  17,  10,  4,   112, 97,  100, 115, 64,  1,   64,  1,   64,  1,
    64,  1,   160, 1,   7,   10,  13,  10,  2,   99,  53,  18,  1,   117, 34,  4,   82,  101, 108,
    117, 10,  36,  10,  1,   117, 10,  2,   119, 54,  18,  2,   99,  54,  34,  4,   67,  111, 110,
    118, 42,  17,  10,  4,   112, 97,  100, 115, 64,  0,   64,  0,   64,  0,   64,  0,   160, 1,
    7,   10,  17,  10,  2,   99,  54,  10,  2,   114, 51,  18,  2,   115, 54,  34,  3,   65,  100,
    100, 10,  14,  10,  2,   115, 54,  18,  2,   114, 53,  34,  4,   82,  101, 108, 117, 10,  37,
    10,  2,   114, 53,  10,  2,   119, 55,  18,  2,   99,  55,  34,  4,   67,  111, 110, 118, 42,
    17,  10,  4,   112, 97,  100, 115, 64,  0,   64,  0,   64,  0,   64,  0,   160, 1,   7,   10,
    13,  10,  2,   99,  55,  18,  1,   118, 34,  4,   82,  101, 108, 117, 10,  36,  10,  1,   118,
    10,  2,   119, 56,  18,  2,   99,  56,  34,  4,   67,  111, 110, 118, 42,  17,  10,  4,   112,
    97,  100, 115, 64,  0,   64,  0,   64,  0,   64,  0,   160, 1,   7,   10,  17,  10,  2,   99,
    56,  10,  2,   114, 53,  18,  2,   115, 56,  34,  3,   65,  100, 100, 10,  14,  10,  2,   115,
    56,  18,  2,   114, 55,  34,  4,   82,  101, 108, 117, 10,  37,  10,  2,   114, 55,  10,  2,
    119, 57,  18,  2,   99,  57,  34,  4,   67,  111, 110, 118, 42,  17,  10,  4,   112, 97,  100,
    115, 64,  0,   64,  0,   64,  0,   64,  0,   160, 1,   7,   10,  16,  10,  2,   99,  57,  10,
    1,   116, 18,  2,   115, 57,  34,  3,   65,  100, 100, 10,  15,  10,  2,   115, 57,  10,  1,
    116, 18,  1,   121, 34,  3,   65,  100, 100, 18,  1,   103, 42,  32,  8,   2,   8,   2,   8,
    1,   8,   1,   16,  1,   66,  2,   119, 49,  74,  16,  0,   0,   32,  191, 0,   0,   0,   0,
    0,   0,   32,  63,  0,   0,   64,  191, 42,  161, 1,   8,   2,   8,   2,   8,   3,   8,   3,
    16,  1,   66,  2,   119, 50,  74,  144, 1,   0,   0,   128, 190, 0,   0,   192, 62,  0,   0,
    128, 191, 0,   0,   192, 190, 0,   0,   128, 62,  0,   0,   96,  63,  0,   0,   0,   191, 0,
    0,   0,   62,  0,   0,   64,  63,  0,   0,   32,  191, 0,   0,   0,   0,   0,   0,   32,  63,
    0,   0,   64,  191, 0,   0,   0,   190, 0,   0,   0,   63,  0,   0,   96,  191, 0,   0,   128,
    190, 0,   0,   192, 62,  0,   0,   128, 191, 0,   0,   192, 190, 0,   0,   128, 62,  0,   0,
    96,  63,  0,   0,   0,   191, 0,   0,   0,   62,  0,   0,   64,  63,  0,   0,   32,  191, 0,
    0,   0,   0,   0,   0,   32,  63,  0,   0,   64,  191, 0,   0,   0,   190, 0,   0,   0,   63,
    0,   0,   96,  191, 0,   0,   128, 190, 0,   0,   192, 62,  0,   0,   128, 191, 0,   0,   192,
    190, 42,  32,  8,   2,   8,   2,   8,   1,   8,   1,   16,  1,   66,  2,   119, 51,  74,  16,
    0,   0,   0,   62,  0,   0,   64,  63,  0,   0,   32,  191, 0,   0,   0,   0,   42,  32,  8,
    2,   8,   2,   8,   1,   8,   1,   16,  1,   66,  2,   119, 52,  74,  16,  0,   0,   0,   63,
    0,   0,   96,  191, 0,   0,   128, 190, 0,   0,   192, 62,  42,  161, 1,   8,   2,   8,   2,
    8,   3,   8,   3,   16,  1,   66,  2,   119, 53,  74,  144, 1,   0,   0,   96,  63,  0,   0,
    0,   191, 0,   0,   0,   62,  0,   0,   64,  63,  0,   0,   32,  191, 0,   0,   0,   0,   0,
    0,   32,  63,  0,   0,   64,  191, 0,   0,   0,   190, 0,   0,   0,   63,  0,   0,   96,  191,
    0,   0,   128, 190, 0,   0,   192, 62,  0,   0,   128, 191, 0,   0,   192, 190, 0,   0,   128,
    62,  0,   0,   96,  63,  0,   0,   0,   191, 0,   0,   0,   62,  0,   0,   64,  63,  0,   0,
    32,  191, 0,   0,   0,   0,   0,   0,   32,  63,  0,   0,   64,  191, 0,   0,   0,   190, 0,
    0,   0,   63,  0,   0,   96,  191, 0,   0,   128, 190, 0,   0,   192, 62,  0,   0,   128, 191,
    0,   0,   192, 190, 0,   0,   128, 62,  0,   0,   96,  63,  0,   0,   0,   191, 0,   0,   0,
    62,  0,   0,   64,  63,  42,  32,  8,   2,   8,   2,   8,   1,   8,   1,   16,  1,   66,  2,
    119, 54,  74,  16,  0,   0,   64,  191, 0,   0,   0,   190, 0,   0,   0,   63,  0,   0,   96,
    191, 42,  32,  8,   2,   8,   2,   8,   1,   8,   1,   16,  1,   66,  2,   119, 55,  74,  16,
    0,   0,   192, 190, 0,   0,   128, 62,  0,   0,   96,  63,  0,   0,   0,   191, 42,  32,  8,
    2,   8,   2,   8,   1,   8,   1,   16,  1,   66,  2,   119, 56,  74,  16,  0,   0,   0,   0,
    0,   0,   32,  63,  0,   0,   64,  191, 0,   0,   0,   190, 42,  32,  8,   2,   8,   2,   8,
    1,   8,   1,   16,  1,   66,  2,   119, 57,  74,  16,  0,   0,   192, 62,  0,   0,   128, 191,
    0,   0,   192, 190, 0,   0,   128, 62,  90,  27,  10,  1,   120, 18,  22,  10,  20,  8,   1,
    18,  16,  10,  2,   8,   1,   10,  2,   8,   2,   10,  2,   8,   4,   10,  2,   8,   4,   98,
    27,  10,  1,   121, 18,  22,  10,  20,  8,   1,   18,  16,  10,  2,   8,   1,   10,  2,   8,
    2,   10,  2,   8,   4,   10,  2,   8,   4,   98,  27,  10,  1,   111, 18,  22,  10,  20,  8,
    1,   18,  16,  10,  2,   8,   1,   10,  2,   8,   2,   10,  2,   8,   4,   10,  2,   8,   4,
    66,  4,   10,  0,   16,  13};

onnx::Model in_place_model() {
  return onnx::Model::from_bytes(kInPlace, sizeof(kInPlace), Profile::onnxruntime, "in_place");
}

Tensor in_place_input() {
  Tensor x(DType::f32, {1, 2, 4, 4});
  float* p = x.view().data<float>();
  for (int i = 0; i < 32; ++i) p[i] = static_cast<float>((i * 5) % 11 - 5) * 0.375f;
  p[7] = -0.0f;
  return x;
}

std::vector<Tensor> run_copies(onnx::Model& m, const Tensor& x) {
  std::vector<Tensor> out;
  for (const TensorView& v : m.run({x.view()})) {
    Tensor t(v.dtype(), v.shape());
    copy(v, t.view());
    out.push_back(std::move(t));
  }
  return out;
}

TEST(MemoryPlanInPlace, JoinsOnlyDeadResidualInputsAndKeepsTheBits) {
  const Tensor x = in_place_input();
  for (const char* layout : {"channels_last", "nchw"}) {
    ::setenv("NPUKIT_FP32_LAYOUT", layout, 1);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      ::setenv("NPUKIT_MEMORY_PLAN", "unshared", 1);
      onnx::Model own = in_place_model();
      const std::vector<Tensor> want = run_copies(own, x);
      EXPECT_EQ(own.memory_use().in_place_values, 0) << layout;
      ::unsetenv("NPUKIT_MEMORY_PLAN");
      onnx::Model shared = in_place_model();
      for (int run = 0; run < 2; ++run) {  // the second run starts from the first's bytes
        const std::vector<Tensor> got = run_copies(shared, x);
        ASSERT_EQ(got.size(), want.size());
        for (size_t k = 0; k < got.size(); ++k)
          EXPECT_TRUE(same_bits(got[k], want[k].to_vector<float>()))
              << "output " << k << " layout " << layout << " threads " << threads << " run " << run;
      }
      const onnx::MemoryUse u = shared.memory_use();
      EXPECT_EQ(u.in_place_values, 2) << layout << " threads " << threads;  // r5 and r7
      // Unshared, the nine intermediates (a b t r3 u r5 v r7 s9, 128 bytes
      // each) and the graph values x, o and y: twelve buffers.
      EXPECT_EQ(u.unshared_bytes, 12 * 128) << layout;
      EXPECT_EQ(u.private_bytes, 3 * 128) << layout;
    }
  }
  ::unsetenv("NPUKIT_FP32_LAYOUT");
  set_num_threads(0);
}

// Under keep_all every value keeps its own bytes: nothing is joined.
TEST(MemoryPlanInPlace, KeepAllJoinsNothing) {
  const Tensor x = in_place_input();
  onnx::Model all = onnx::Model::from_bytes(kInPlace, sizeof(kInPlace), Profile::onnxruntime,
                                            "in_place", false, onnx::Intermediates::keep_all);
  all.run({x.view()});
  EXPECT_EQ(all.memory_use().in_place_values, 0);
  EXPECT_EQ(all.memory_use().arena_bytes, 0);
}

}  // namespace
}  // namespace test_memory_plan_in_place
}  // namespace npukit::test
