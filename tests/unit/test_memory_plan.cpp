// The runner's memory plan (src/onnx/memory_plan.hpp): arena placement on
// hand-computed lifetimes, and a model built to tempt wrong sharing run with
// and without it.
#include <cstdlib>
#include <random>
#include <set>

#include "npukit/onnx/model.hpp"
#include "npukit/parallel.hpp"
#include "onnx/memory_plan.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_memory_plan {
namespace {

using onnx::Lifetime;

// No two values alive at one step overlap in bytes; offsets are aligned.
::testing::AssertionResult arena_disjoint(const std::vector<Lifetime>& life,
                                          const onnx::ArenaPlan& p) {
  for (size_t i = 0; i < life.size(); ++i) {
    if (p.offsets[i] % onnx::kArenaAlignment)
      return ::testing::AssertionFailure() << "value " << i << " at " << p.offsets[i];
    if (p.offsets[i] + life[i].bytes > p.bytes)
      return ::testing::AssertionFailure() << "value " << i << " past the arena";
    for (size_t j = 0; j < i; ++j) {
      const bool alive = life[i].first <= life[j].last && life[j].first <= life[i].last;
      const bool bytes = p.offsets[i] < p.offsets[j] + life[j].bytes &&
                         p.offsets[j] < p.offsets[i] + life[i].bytes;
      if (alive && bytes)
        return ::testing::AssertionFailure() << "values " << j << " and " << i << " overlap";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(MemoryPlan, ChainReusesTwoBuffersAndAlignsOffsets) {
  // A chain of five steps: each value is read by the next step only. 100 bytes
  // round up to 128: two slots of 128 bytes, alternating.
  std::vector<Lifetime> life;
  for (size_t k = 0; k < 5; ++k) life.push_back({100, k, k + 1});
  const onnx::ArenaPlan p = onnx::plan_arena(life);
  EXPECT_EQ(p.bytes, 256u);
  EXPECT_EQ(onnx::peak_live_bytes(life), 256u);
  EXPECT_EQ(p.offsets, (std::vector<uint64_t>{0, 128, 0, 128, 0}));
  EXPECT_TRUE(arena_disjoint(life, p));
}

TEST(MemoryPlan, LargestFirstFillsTheGapsOfDeadValues) {
  // 0: 1000 bytes steps 0-1; 1: 200 bytes steps 1-3; 2: 600 bytes steps 2-3;
  // 3: 300 bytes steps 3-4. Sizes rounded: 1024, 256, 640, 320. Placed
  // largest first: 0 at 0; 2 at 0 (0 is dead by step 2); 3 at 640 (after 2);
  // 1 overlaps 0, 2 and 3, whose bytes end at 1024, 640 and 960: at 1024.
  // Peak alive: step 1 holds 0 and 1 = 1024 + 256 (step 3: 1216).
  const std::vector<Lifetime> life = {{1000, 0, 1}, {200, 1, 3}, {600, 2, 3}, {300, 3, 4}};
  const onnx::ArenaPlan p = onnx::plan_arena(life);
  EXPECT_EQ(p.offsets, (std::vector<uint64_t>{0, 1024, 0, 640}));
  EXPECT_EQ(p.bytes, 1280u);
  EXPECT_EQ(onnx::peak_live_bytes(life), 1280u);
  EXPECT_TRUE(arena_disjoint(life, p));
}

TEST(MemoryPlan, RandomLifetimesNeverOverlap) {
  const uint32_t seed = 20261127;
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Lifetime> life;
    const size_t n = 1 + rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      const size_t first = rng() % 30;
      life.push_back({rng() % 5000, first, first + rng() % 8});
    }
    const onnx::ArenaPlan p = onnx::plan_arena(life);
    EXPECT_TRUE(arena_disjoint(life, p)) << "seed " << seed << " trial " << trial;
    EXPECT_GE(p.bytes, onnx::peak_live_bytes(life)) << "seed " << seed << " trial " << trial;
  }
}

// y = (|x| + reshape(-relu(x), [64])) + relu(x) on x [1, 64]: a = relu(x) is
// read late (by the last add); b = neg(a) is renamed by reshape and read
// through the rename by add, after abs wrote c, which must not take b's bytes
// (it would if a rename's readers did not extend its source's life); each
// step could also write over its own input.
// Lifetimes (steps relu 0, neg 1, reshape 2, abs 3, add 4, add_late 5): a 0-5,
// b (and r) 1-4, c 3-4, d 4-5, 256 bytes each; x and y have their own buffers.
const unsigned char kTempting[] = {
    8,   8,   58,  196, 1,   10,  18,  10,  1,   120, 18,  1,   97,  26,  4,   114, 101, 108, 117,
    34,  4,   82,  101, 108, 117, 10,  16,  10,  1,   97,  18,  1,   98,  26,  3,   110, 101, 103,
    34,  3,   78,  101, 103, 10,  27,  10,  1,   98,  10,  1,   115, 18,  1,   114, 26,  7,   114,
    101, 115, 104, 97,  112, 101, 34,  7,   82,  101, 115, 104, 97,  112, 101, 10,  16,  10,  1,
    120, 18,  1,   99,  26,  3,   97,  98,  115, 34,  3,   65,  98,  115, 10,  19,  10,  1,   99,
    10,  1,   114, 18,  1,   100, 26,  3,   97,  100, 100, 34,  3,   65,  100, 100, 10,  24,  10,
    1,   100, 10,  1,   97,  18,  1,   121, 26,  8,   97,  100, 100, 95,  108, 97,  116, 101, 34,
    3,   65,  100, 100, 18,  1,   103, 42,  17,  8,   1,   16,  7,   66,  1,   115, 74,  8,   64,
    0,   0,   0,   0,   0,   0,   0,   90,  19,  10,  1,   120, 18,  14,  10,  12,  8,   1,   18,
    8,   10,  2,   8,   1,   10,  2,   8,   64,  98,  19,  10,  1,   121, 18,  14,  10,  12,  8,
    1,   18,  8,   10,  2,   8,   1,   10,  2,   8,   64,  66,  4,   10,  0,   16,  13};

onnx::Model tempting_model(onnx::Intermediates kept = onnx::Intermediates::may_fuse) {
  return onnx::Model::from_bytes(kTempting, sizeof(kTempting), Profile::onnxruntime, "tempting",
                                 false, kept);
}

Tensor tempting_input() {
  Tensor x(DType::f32, {1, 64});
  float* p = x.view().data<float>();
  for (int i = 0; i < 64; ++i) p[i] = static_cast<float>(i - 32) * 0.25f;
  return x;
}

TEST(MemoryPlan, TemptingGraphGivesTheHandComputedValuesAndBytes) {
  const Tensor x = tempting_input();
  std::vector<float> want(64);
  for (int i = 0; i < 64; ++i) {
    const float v = x.view().data<float>()[i], a = std::max(0.0f, v);
    want[i] = (std::fabs(v) + -a) + a;
  }
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    onnx::Model m = tempting_model();
    EXPECT_TRUE(same_bits(m.run({x.view()})[0], want)) << "threads " << threads;
    const onnx::MemoryUse u = m.memory_use();
    // a at 0, b at 256, c at 512, d at 768: all four are alive at add.
    EXPECT_EQ(u.arena_bytes, 1024);
    EXPECT_EQ(u.arena_lower_bound, 1024);
    EXPECT_EQ(u.private_bytes, 512);    // x and y
    EXPECT_EQ(u.unshared_bytes, 1536);  // x, a, b, c, d, y (r is a view of b)
  }
  set_num_threads(0);
}

TEST(MemoryPlan, UnsharedPlanGivesTheSameBitsAndEveryValue) {
  const Tensor x = tempting_input();
  onnx::Model shared = tempting_model();
  const std::vector<float> want = shared.run({x.view()})[0].to_vector<float>();
  ::setenv("NPUKIT_MEMORY_PLAN", "unshared", 1);
  onnx::Model own = tempting_model();
  EXPECT_TRUE(same_bits(own.run({x.view()})[0], want));
  EXPECT_EQ(own.memory_use().arena_bytes, 0);
  EXPECT_EQ(own.memory_use().private_bytes, 1536);
  ::setenv("NPUKIT_MEMORY_PLAN", "sometimes", 1);
  EXPECT_TRUE(raises([&] { tempting_model().run({x.view()}); }, "npukit::onnx::Model::run",
                     "NPUKIT_MEMORY_PLAN", "sometimes"));
  ::unsetenv("NPUKIT_MEMORY_PLAN");
}

// The layout passes' switches take channels_last (the default) or nchw;
// anything else is refused when the model is planned.
TEST(MemoryPlan, LayoutSwitchesRefuseUnknownValues) {
  const Tensor x = tempting_input();
  const std::vector<float> want = tempting_model().run({x.view()})[0].to_vector<float>();
  for (const char* variable : {"NPUKIT_FP32_LAYOUT", "NPUKIT_INT8_LAYOUT"}) {
    for (const char* ok : {"nchw", "channels_last", ""}) {
      ::setenv(variable, ok, 1);
      EXPECT_TRUE(same_bits(tempting_model().run({x.view()})[0], want)) << variable << "=" << ok;
    }
    ::setenv(variable, "sideways", 1);
    EXPECT_TRUE(raises([&] { tempting_model().run({x.view()}); }, "npukit::onnx::Model::run",
                       variable, "sideways"))
        << variable;
    ::unsetenv(variable);
  }
}

std::set<std::string> listed_value_names(const onnx::Model& m) {
  std::set<std::string> out;
  for (const onnx::NamedValue& v : m.values()) out.insert(v.name);
  return out;
}

TEST(MemoryPlan, KeepAllKeepsEveryValueAndSharedRunsListOnlyTheirOwn) {
  const Tensor x = tempting_input();
  onnx::Model all = tempting_model(onnx::Intermediates::keep_all);
  all.run({x.view()});
  EXPECT_EQ(listed_value_names(all), (std::set<std::string>{"x", "a", "b", "r", "c", "d", "y"}));
  EXPECT_EQ(all.memory_use().arena_bytes, 0);
  // Every kept value is its own: a is read back after the run as relu(x).
  for (const onnx::NamedValue& v : all.values()) {
    if (v.name != "a") continue;
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(v.view.data<float>()[i], std::max(0.0f, x.view().data<float>()[i])) << i;
    }
  }
  onnx::Model shared = tempting_model();
  shared.run({x.view()});
  EXPECT_EQ(listed_value_names(shared), (std::set<std::string>{"x", "y"}));
}

// Every fp32 and int8 bundled model: the same bytes with and without sharing.
TEST(MemoryPlan, BundledModelsGiveTheUnsharedBytes) {
  for (const char* name : {"fashion_mnist_fp32.onnx", "fashion_mnist_int8.onnx"}) {
    const std::string path = std::string(NPUKIT_SOURCE_DIR "/models/") + name;
    onnx::Model probe = onnx::Model::load(path);
    Tensor x(probe.inputs()[0].dtype, {3, 1, 28, 28});
    const int64_t n = x.numel();
    if (x.dtype() == DType::f32)
      for (int64_t i = 0; i < n; ++i)
        x.view().data<float>()[i] = static_cast<float>((i * 7919) % 256) / 255.0f;
    else
      for (int64_t i = 0; i < n; ++i) x.view().data<uint8_t>()[i] = (i * 7919) % 256;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      ::setenv("NPUKIT_MEMORY_PLAN", "unshared", 1);
      onnx::Model own = onnx::Model::load(path);
      const Tensor want = own.run({x.view()})[0];
      ::unsetenv("NPUKIT_MEMORY_PLAN");
      onnx::Model shared = onnx::Model::load(path);
      const Tensor got = shared.run({x.view()})[0];
      EXPECT_GT(shared.memory_use().arena_bytes, 0) << name;
      EXPECT_LT(shared.memory_use().arena_bytes + shared.memory_use().private_bytes,
                own.memory_use().private_bytes)
          << name;
      ASSERT_EQ(got.numel(), want.numel());
      EXPECT_EQ(std::memcmp(got.view().raw(), want.view().raw(),
                            static_cast<size_t>(got.numel()) * dtype_size(got.dtype())),
                0)
          << name << " threads " << threads;
    }
  }
  set_num_threads(0);
}

}  // namespace
}  // namespace test_memory_plan
}  // namespace npukit::test
