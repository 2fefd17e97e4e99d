// GDMA copies and BDC gathers/scatters move whole rows or planes when the
// layout allows (src/npu/layout.cpp) and element by element otherwise: both
// paths must put every element where the strides say, leave everything else
// alone, and find the same first never-written element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "npu_test_util.hpp"

namespace npukit::npu::test {
namespace test_npu_gdma_runs {
namespace {

class GdmaRuns : public OkkTest {};

struct Layout {
  dim4 shape, sys_in, sys_out, local, spread;
  bool local_given;
};

std::string text(const dim4& d) {
  std::string s = "[";  // appended piecewise: GCC 12 warns falsely on "[" + string
  for (int v : {d.n, d.c, d.h}) s += std::to_string(v) + ", ";
  s += std::to_string(d.w);
  s += "]";
  return s;
}

// Random system strides (continuous or padded rows and planes; GDMA needs
// w = 1); local strides: aligned (NULL), compact or padded rows; `spread` is a
// BDC-only local layout with every other element (w stride 2: element path).
Layout random_layout(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Layout l{};
  l.shape = dim4{pick(1, 3), pick(1, 70), pick(1, 5), pick(1, 9)};
  const int slots = (l.shape.c + 63) / 64;
  auto system = [&]() {
    dim4 s;
    s.w = 1;
    s.h = l.shape.w + pick(0, 1) * pick(1, 3);
    s.c = s.h * l.shape.h + pick(0, 1) * 5;
    s.n = s.c * l.shape.c;
    return s;
  };
  l.sys_in = system();
  l.sys_out = system();
  l.local_given = pick(0, 2) != 0;
  if (l.local_given) {
    const int hs = l.shape.w + pick(0, 1) * pick(1, 4);
    const int cs = hs * l.shape.h;
    l.local = dim4{cs * slots, cs, hs, 1};
  }
  const int hs = 2 * l.shape.w + pick(0, 1);
  l.spread = dim4{hs * l.shape.h * slots, hs * l.shape.h, hs, 2};
  return l;
}

int64_t offset(const dim4& s, int n, int c, int h, int w) {
  return int64_t{n} * s.n + int64_t{c} * s.c + int64_t{h} * s.h + int64_t{w} * s.w;
}
int64_t span(const dim4& shape, const dim4& s) {
  return offset(s, shape.n - 1, shape.c - 1, shape.h - 1, shape.w - 1) + 1;
}

// Local memory as a fresh machine holds it (0xDEADBEEF words, nothing
// written), without a new machine: allocating and first touching another
// 64 MiB per iteration was 80% of this test's time.
void fresh_local_memory() {
  Machine& m = machine();
  const size_t bytes = static_cast<size_t>(m.config().npu_num) * m.config().local_mem_size;
  uint8_t* local = m.local(0, 0);
  const uint32_t word = 0xDEADBEEFu;
  std::memcpy(local, &word, 4);
  for (size_t done = 4; done < bytes; done *= 2)
    std::memcpy(local + done, local, std::min(done, bytes - done));
  std::memset(m.written(0, 0), 0, bytes);
}

// S2L, a BDC pass (x + 0 through gather and scatter), L2S: every element lands
// where the strides say; the gaps of the output keep their sentinel.
TEST_F(GdmaRuns, RowAndElementPathsPlaceEveryElement) {
  const unsigned seed = 20261126;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-100.0f, 100.0f);
  for (int iter = 0; iter < 300; ++iter) {
    const Layout l = random_layout(rng);
    std::string where = "seed ";
    where += std::to_string(seed) + " iteration " + std::to_string(iter) + ": shape ";
    where += text(l.shape) + " system in " + text(l.sys_in) + " out " + text(l.sys_out);
    where += " local " + (l.local_given ? text(l.local) : std::string("aligned"));
    where += " spread " + text(l.spread);
    SCOPED_TRACE(where);
    fresh_local_memory();
    const int64_t in_len = span(l.shape, l.sys_in), out_len = span(l.shape, l.sys_out);
    std::vector<float> x(static_cast<size_t>(in_len));
    for (float& v : x) v = value(rng);
    const uint64_t gx = machine().allocate(x.size() * 4), gy = machine().allocate(out_len * 4);
    std::memcpy(machine().global(gx, x.size() * 4), x.data(), x.size() * 4);
    const uint32_t sentinel = 0x7fc12345u;
    for (int64_t i = 0; i < out_len; ++i)
      std::memcpy(machine().global(gy + 4 * i, 4), &sentinel, 4);
    const dim4* ls = l.local_given ? &l.local : nullptr;
    okk_gdma_32bit_cpy_S2L(0, gx, &l.shape, ls, &l.sys_in);
    okk_bdc_add_C(131072, 0, 0.0f, &l.shape, &l.spread, ls);       // scatter, element path
    okk_bdc_add_C(262144, 131072, 0.0f, &l.shape, ls, &l.spread);  // gather, element path
    okk_gdma_32bit_cpy_L2S(gy, 262144, &l.shape, &l.sys_out, ls);
    std::vector<uint32_t> want(static_cast<size_t>(out_len), sentinel);
    for (int n = 0; n < l.shape.n; ++n)
      for (int c = 0; c < l.shape.c; ++c)
        for (int h = 0; h < l.shape.h; ++h)
          for (int w = 0; w < l.shape.w; ++w)
            want[static_cast<size_t>(offset(l.sys_out, n, c, h, w))] =
                bits(x[static_cast<size_t>(offset(l.sys_in, n, c, h, w))]);
    std::vector<uint32_t> got(static_cast<size_t>(out_len));
    std::memcpy(got.data(), machine().global(gy, out_len * 4), out_len * 4);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < out_len; ++i)
      if (got[static_cast<size_t>(i)] != want[static_cast<size_t>(i)]) {
        if (first < 0) first = i;
        ++bad;
      }
    ASSERT_EQ(bad, 0) << "first differing output word " << first;
    ASSERT_TRUE(machine().release(gx) && machine().release(gy));
  }
}

// The first never-written element is named the same way on the plane path
// (contiguous rows), the row path (padded rows) and the element path (BDC
// operand with w stride 2).
TEST_F(GdmaRuns, FirstNeverWrittenElementOnEveryPath) {
  const dim4 shape{2, 3, 4, 5}, taller{2, 3, 5, 5};
  const dim4 plane{25, 25, 5, 1}, padded{35, 35, 7, 1}, spread{50, 50, 10, 2};
  for (const dim4& local : {plane, padded, spread}) {
    std::string where = "local stride ";
    where += text(local);
    SCOPED_TRACE(where);
    select_machine(bm1684_config());
    x32 one;
    one.fp32 = 1.0f;
    // Rows 0-3 of every plane written, row 4 not: the first unwritten element
    // of the taller tensor is (0, 0, 4, 0).
    if (local.w == 1) {
      okk_gdma_32bit_set_C_local(0, one, &shape, &local);
    } else {
      okk_gdma_32bit_set_C_local(65536, one, &shape, nullptr);
      okk_bdc_add_C(0, 65536, 0.0f, &shape, &local, nullptr);
    }
    try {
      if (local.w == 1) {
        const uint64_t g = machine().allocate(2 * 3 * 5 * 5 * 4);
        okk_gdma_32bit_cpy_L2S(g, 0, &taller, nullptr, &local);
      } else {
        okk_bdc_add_C(131072, 0, 0.0f, &taller, nullptr, &local);
      }
      ADD_FAILURE() << "no never-written report";
    } catch (const RuleViolation& e) {
      EXPECT_NE(
          std::string(e.what()).find("element (0, 0, 4, 0) of local memory was never written"),
          std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace test_npu_gdma_runs
}  // namespace npukit::npu::test
