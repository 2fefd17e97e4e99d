// `npukit compare` (tools/npukit/profile_compare.*) asks the profile table
// before running: a profile that does not cover the operator is reported with
// the table's reason, the others run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npukit/ops/profile_support.hpp"
#include "profile_compare.hpp"

namespace npukit {
namespace test_profile_compare {
namespace {

TEST(ProfileCompare, UncoveredProfilesGetTheTablesRefusal) {
  CompareConfig c;
  c.op = "qlinear_add";
  c.shape = {1, 2, 3, 3};
  const CompareReport r =
      compare_profiles(c, {Profile::onnxruntime, Profile::bm1684, Profile::pytorch});
  ASSERT_EQ(r.runs.size(), 3u);
  EXPECT_TRUE(r.runs[0].error.empty()) << r.runs[0].error;
  EXPECT_TRUE(r.runs[2].error.empty()) << r.runs[2].error;
  const std::string& why = r.runs[1].error;
  EXPECT_NE(why.find("parameter 'profile'"), std::string::npos) << why;
  EXPECT_NE(why.find(profile_support(OpFamily::qlinear_add, Profile::bm1684).semantics),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace test_profile_compare
}  // namespace npukit
