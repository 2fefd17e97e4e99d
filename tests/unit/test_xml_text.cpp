// The one XML text escaper shared by the timeline SVG and `npukit compare --svg`.
#include <gtest/gtest.h>

#include <string>

#include "npukit/xml_text.hpp"

namespace npukit {
namespace test_xml_text {
namespace {

TEST(XmlText, EscapesMarkupAndBlanksControlBytes) {
  EXPECT_EQ(xml_escaped("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c'");
  EXPECT_EQ(xml_escaped(std::string("x\ny\tz\x01", 6)), "x y z ");
  EXPECT_EQ(xml_escaped(""), "");
  // Bytes >= 0x80 (UTF-8) pass unchanged.
  EXPECT_EQ(xml_escaped("\xc2\xb5s"), "\xc2\xb5s");
}

}  // namespace
}  // namespace test_xml_text
}  // namespace npukit
