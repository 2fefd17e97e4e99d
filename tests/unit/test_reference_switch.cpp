// NPUKIT_IMPL=reference (scripts/test.sh's second pass) forbids every fast
// kernel. The *Fast suites exist to run fast kernels against the reference
// and to require that they ran, so under that switch they have nothing to
// check: every test of a suite whose name ends in "Fast" is reported as
// skipped, with the reason, and its body does not run. One listener does this
// for all of them (a skip recorded as a test starts keeps GoogleTest from
// constructing the test and running its body), so a new Fast suite needs no
// line of its own.
#include <gtest/gtest.h>

#include <string>

#include "npukit/kernels.hpp"

namespace npukit {
namespace test_reference_switch {
namespace {

bool is_fast_suite(const std::string& suite) {
  const std::string tail = "Fast";
  return suite.size() >= tail.size() &&
         suite.compare(suite.size() - tail.size(), tail.size(), tail) == 0;
}

class SkipFastSuitesUnderReference : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& info) override {
    if (impl() != Impl::reference || !is_fast_suite(info.test_suite_name())) return;
    GTEST_SKIP() << "NPUKIT_IMPL=reference: no fast kernel may run, and this suite compares "
                    "fast kernels with the reference";
  }
};

// Registered before main (GoogleTest's listener list owns it).
const bool kRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SkipFastSuitesUnderReference);
  return true;
}();

TEST(ReferenceSwitch, FastSuitesAreRecognizedByTheirName) {
  EXPECT_TRUE(kRegistered);
  EXPECT_TRUE(is_fast_suite("QConvFast"));
  EXPECT_TRUE(is_fast_suite("Fast"));
  EXPECT_FALSE(is_fast_suite("FastPath"));
  EXPECT_FALSE(is_fast_suite("Pool2d"));
  EXPECT_FALSE(is_fast_suite("ast"));
}

// Fails in the reference pass if the listener let a Fast suite's body run.
TEST(ReferenceSwitchFast, BodyRunsOnlyWhenFastKernelsMay) {
  EXPECT_NE(impl(), Impl::reference) << "a Fast suite's body ran under NPUKIT_IMPL=reference";
}

}  // namespace
}  // namespace test_reference_switch
}  // namespace npukit
