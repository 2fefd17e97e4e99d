// npukit.hpp includes every public C++ header: each header under
// include/npukit/ (the C compat headers aside) is named in it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.hpp"

namespace test_umbrella {
namespace {

TEST(Umbrella, IncludesEveryPublicHeader) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(NPUKIT_SOURCE_DIR) / "include";
  std::ifstream in(root / "npukit" / "npukit.hpp");
  ASSERT_TRUE(in) << "cannot read npukit.hpp under " << root;
  std::stringstream text;
  text << in.rdbuf();
  int headers = 0;
  for (const auto& e : fs::recursive_directory_iterator(root / "npukit")) {
    if (e.path().extension() != ".hpp" || e.path().filename() == "npukit.hpp") continue;
    const std::string rel = fs::relative(e.path(), root).generic_string();
    if (rel.rfind("npukit/compat/", 0) == 0) continue;
    ++headers;
    EXPECT_NE(text.str().find("#include \"" + rel + "\""), std::string::npos)
        << rel << " is missing from npukit.hpp";
  }
  EXPECT_GT(headers, 30);
}

}  // namespace
}  // namespace test_umbrella
