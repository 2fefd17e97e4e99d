// The profile table: one row per (family, base profile); each family's
// apply_profile accepts exactly the profiles the table says it supports (one
// test per pair); the README's table is the table's Markdown.
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "test_util.hpp"

namespace npukit {
namespace test_profile_support {
namespace {

// Each family's apply_profile, on parameters set up as its faces set them up.
const std::map<OpFamily, std::function<void(Profile)>>& appliers() {
  static const std::map<OpFamily, std::function<void(Profile)>> m = {
      {OpFamily::elementwise,
       [](Profile p) {
         ElementwiseParams q;
         apply_profile(q, p);
       }},
      {OpFamily::pool2d,
       [](Profile p) {
         Pool2dParams q;
         apply_profile(q, p);
       }},
      {OpFamily::conv2d,
       [](Profile p) {
         Conv2dParams q;
         apply_profile(q, p);
       }},
      {OpFamily::depthwise2d,
       [](Profile p) {
         Depthwise2dParams q;
         apply_profile(q, p);
       }},
      {OpFamily::matmul,
       [](Profile p) {
         MatmulParams q;
         apply_profile(q, p);
       }},
      {OpFamily::fp32_series,
       [](Profile p) {
         Fp32SeriesParams q;
         apply_profile(q, p);
       }},
      {OpFamily::quantize_linear,
       [](Profile p) {
         QuantizeParams q;
         apply_profile(q, p);
       }},
      {OpFamily::qlinear_average_pool,
       [](Profile p) {
         QLinearAvgPoolParams q;
         q.count_include_pad = true;  // the GHP profiles need it; none rejects it
         apply_profile(q, p);
       }},
      {OpFamily::qlinear_conv,
       [](Profile p) {
         QLinearConvParams q;
         apply_profile(q, p);
       }},
      {OpFamily::qlinear_matmul,
       [](Profile p) {
         QLinearMatMulParams q;
         apply_profile(q, p);
       }},
      {OpFamily::matmul_integer,
       [](Profile p) {
         MatMulIntegerParams q;
         apply_profile(q, p);
       }},
      {OpFamily::qlinear_add,
       [](Profile p) {
         QLinearAddParams q;
         apply_profile(q, p);
       }},
      {OpFamily::qlinear_mul,
       [](Profile p) {
         QLinearMulParams q;
         apply_profile(q, p);
       }},
      {OpFamily::qlinear_lookup,
       [](Profile p) {
         QLookupParams q;
         apply_profile(q, p);
       }},
  };
  return m;
}

struct Pair {
  OpFamily family;
  Profile profile;
};

std::vector<Pair> every_pair() {
  std::vector<Pair> v;
  for (OpFamily f : all_op_families())
    for (Profile p : all_profiles()) v.push_back({f, p});
  return v;
}

class ProfilePair : public ::testing::TestWithParam<Pair> {};

TEST_P(ProfilePair, ApplyProfileAgreesWithTheTable) {
  const auto [family, profile] = GetParam();
  const ProfileSupport& row = profile_support(family, profile);
  EXPECT_EQ(row.family, family);
  EXPECT_EQ(row.profile, semantics_base(profile));
  EXPECT_FALSE(row.semantics.empty());
  EXPECT_EQ(row.checked.empty(), !row.supported)
      << "a supported pair names what it was checked against";
  const auto it = appliers().find(family);
  if (it == appliers().end()) {
    // No apply_profile: data movement is the same everywhere; every other such
    // family is a face with one fixed profile or an operator the runner runs
    // with ONNX Runtime's arithmetic only (tests/python/test_profile_pairs.py
    // runs those pairs through the runner): exactly one base profile covers it.
    int covering = 0, bases = 0;
    for (Profile p : all_profiles()) {
      bases += semantics_base(p) == p;
      covering += semantics_base(p) == p && supports(family, p);
    }
    // One IEEE rounding per element (or none), or sums in order: the runner
    // gives ONNX Runtime's and PyTorch's bits with one kernel.
    const bool one_rounding = family == OpFamily::binary || family == OpFamily::clip ||
                              family == OpFamily::dequantize_linear || family == OpFamily::gemm;
    EXPECT_EQ(covering, family == OpFamily::data_movement ? bases
                        : one_rounding                    ? 2
                                                          : 1)
        << op_family_name(family);
    if (one_rounding) {
      EXPECT_TRUE(supports(family, Profile::onnxruntime)) << op_family_name(family);
      EXPECT_TRUE(supports(family, Profile::pytorch)) << op_family_name(family);
    }
    return;
  }
  if (row.supported) {
    EXPECT_NO_THROW(it->second(profile))
        << op_family_name(family) << " x " << profile_name(profile);
  } else {
    try {
      it->second(profile);
      ADD_FAILURE() << op_family_name(family) << " x " << profile_name(profile)
                    << ": apply_profile accepts a pair the table rejects";
    } catch (const Error& e) {
      EXPECT_EQ(e.parameter(), "profile");
      EXPECT_EQ(e.value(), profile_name(profile));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, ProfilePair, ::testing::ValuesIn(every_pair()),
                         [](const ::testing::TestParamInfo<Pair>& info) {
                           return std::string(op_family_name(info.param.family)) + "_" +
                                  profile_name(info.param.profile);
                         });

TEST(ProfileTable, OneRowPerFamilyAndBaseProfile) {
  size_t bases = 0;
  for (Profile p : all_profiles()) bases += semantics_base(p) == p;
  EXPECT_EQ(profile_table().size(), all_op_families().size() * bases);
  for (OpFamily f : all_op_families()) EXPECT_EQ(op_family_from_name(op_family_name(f)), f);
  EXPECT_TRUE(test::raises([] { op_family_from_name("conv3d"); }, "npukit::op_family_from_name",
                           "name", "conv3d"));
}

TEST(ProfileTable, ExpectSupportedNamesTheCoveringProfiles) {
  EXPECT_NO_THROW(expect_supported(OpFamily::pool2d, Profile::onnxruntime_vnni, "f"));
  try {
    expect_supported(OpFamily::pool2d, Profile::tflite, "npukit.max_pool");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.function(), "npukit.max_pool");
    EXPECT_NE(e.allowed().find("onnxruntime, pytorch, bm1684"), std::string::npos) << e.allowed();
  }
}

TEST(ProfileTable, ReadmeTableIsGeneratedFromIt) {
  std::ifstream in(std::string(NPUKIT_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string begin =
      "<!-- profile-table: generated by `npukit info --profiles --markdown` -->\n";
  const std::string s = text.str();
  const size_t at = s.find(begin);
  ASSERT_NE(at, std::string::npos) << "README.md lacks the marker line " << begin;
  EXPECT_EQ(s.substr(at + begin.size(), profile_table_markdown().size()), profile_table_markdown())
      << "regenerate it with: npukit info --profiles --markdown";
}

}  // namespace
}  // namespace test_profile_support
}  // namespace npukit
