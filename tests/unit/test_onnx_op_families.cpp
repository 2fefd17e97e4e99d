// The ONNX runner decides each node's profile from the profile table before
// planning it (src/onnx/op_families.cpp): every operator of its tables has a
// family, a family the profile does not cover falls back to onnxruntime (or
// is refused naming "profile"), and so do the cases the runner models less
// than the family (runner_gap: grouped Conv under bm1684).
#include <string>

#include "npukit/onnx/model.hpp"
#include "onnx/graph.hpp"
#include "onnx/op_families.hpp"
#include "test_util.hpp"

namespace npukit::test {
namespace test_onnx_op_families {
namespace {

onnx::Node family_test_node(const std::string& domain, const std::string& op_type,
                            int64_t group = 0) {
  onnx::Node n;
  n.domain = domain;
  n.op_type = op_type;
  if (group) {
    n.attrs["group"].kind = onnx::Attr::Kind::i;
    n.attrs["group"].i = group;
  }
  return n;
}

// The Error node_semantics raises without fallback.
Error node_semantics_refusal(const onnx::Node& n, Profile profile) {
  try {
    onnx::node_semantics(n, profile, false);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << n.op_type << " under " << profile_name(profile) << ": no refusal";
  return Error("none", "none", "none", "none");
}

TEST(OnnxOpFamilies, EveryRunnerOperatorHasAFamily) {
  const auto ops = onnx::operator_list();
  ASSERT_GT(ops.size(), 50u);
  for (const onnx::OperatorInfo& op : ops)
    EXPECT_TRUE(onnx::op_family_of(op.domain, op.op_type).has_value())
        << op.domain << "." << op.op_type << " has no family of the profile table";
  EXPECT_FALSE(onnx::op_family_of("", "NoSuchOperator").has_value());
  EXPECT_EQ(onnx::op_family_of("ai.onnx", "Conv"), OpFamily::conv2d);
}

TEST(OnnxOpFamilies, UncoveredFamilyFallsBackOrIsRefused) {
  const onnx::Node relu = family_test_node("", "Relu");  // elementwise: not ghp_rtl
  ASSERT_FALSE(supports(OpFamily::elementwise, Profile::ghp_rtl));
  EXPECT_EQ(onnx::node_semantics(relu, Profile::ghp_rtl, true), Profile::onnxruntime);
  const Error e = node_semantics_refusal(relu, Profile::ghp_rtl);
  EXPECT_EQ(e.parameter(), "profile");
  EXPECT_EQ(e.value(), "ghp_rtl");
  EXPECT_EQ(onnx::node_semantics(relu, Profile::pytorch, false), Profile::pytorch);
  // float_math is onnxruntime's only.
  EXPECT_EQ(onnx::node_semantics(family_test_node("", "Sigmoid"), Profile::pytorch, true),
            Profile::onnxruntime);
  EXPECT_EQ(node_semantics_refusal(family_test_node("", "Sigmoid"), Profile::pytorch).parameter(),
            "profile");
  EXPECT_EQ(onnx::node_semantics(family_test_node("", "Sigmoid"), Profile::onnxruntime_vnni, false),
            Profile::onnxruntime_vnni);
}

TEST(OnnxOpFamilies, GroupedConvUnderBm1684FallsBackOrIsRefused) {
  for (const auto& [domain, op] :
       {std::pair<std::string, std::string>{"", "Conv"}, {"com.microsoft", "FusedConv"}}) {
    SCOPED_TRACE(op);
    const onnx::Node grouped = family_test_node(domain, op, 2);
    ASSERT_TRUE(supports(OpFamily::conv2d, Profile::bm1684));
    EXPECT_NE(onnx::runner_gap(grouped, Profile::bm1684), "");
    EXPECT_EQ(onnx::node_semantics(grouped, Profile::bm1684, true), Profile::onnxruntime);
    const Error e = node_semantics_refusal(grouped, Profile::bm1684);
    EXPECT_EQ(e.parameter(), "profile");
    EXPECT_NE(std::string(e.what()).find("group = 2"), std::string::npos) << e.what();
    // Dense convolutions (group 1, stated or not) and other profiles keep theirs.
    EXPECT_EQ(onnx::node_semantics(family_test_node(domain, op), Profile::bm1684, false),
              Profile::bm1684);
    EXPECT_EQ(onnx::node_semantics(family_test_node(domain, op, 1), Profile::bm1684, false),
              Profile::bm1684);
    EXPECT_EQ(onnx::node_semantics(grouped, Profile::pytorch, false), Profile::pytorch);
    EXPECT_EQ(onnx::runner_gap(grouped, Profile::onnxruntime), "");
  }
}

}  // namespace
}  // namespace test_onnx_op_families
}  // namespace npukit::test
