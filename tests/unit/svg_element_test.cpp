#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "report/svg_element.hpp"

namespace hacoboot {
namespace {

TEST(SvgElement, WithoutContentItClosesItself) {
  EXPECT_EQ(SvgElement("rect").str(), "<rect/>");
  EXPECT_EQ(SvgElement("rect").attr("x", 1.25, 1).attr("fill", "#ffffff").str(), R"(<rect x="1.2" fill="#ffffff"/>)");
}

TEST(SvgElement, AttributesInTheOrderGiven) {
  EXPECT_EQ(SvgElement("line").attr("y2", 4).attr("x1", 1).attr("class", "a b").str(),
            R"(<line y2="4" x1="1" class="a b"/>)");
}

TEST(SvgElement, NumbersAsFmtWritesThem) {
  const auto element = SvgElement("rect")
                           .attr("x", 16.0)
                           .attr("height", 2.5)
                           .attr("width", 999.996, 2)
                           .attr("y", 3.0, 0)
                           .attr("data-sequence", std::uint64_t{18'446'744'073'709'551'615U})
                           .attr("data-delta", -3);
  EXPECT_EQ(
      element.str(),
      R"(<rect x="16" height="2.5" width="1000.00" y="3" data-sequence="18446744073709551615" data-delta="-3"/>)");
}

TEST(SvgElement, EscapesEveryAttributeValue) {
  EXPECT_EQ(SvgElement("g").attr("data-lane", R"(a"b'c<d>e&f)").str(),
            R"(<g data-lane="a&quot;b&apos;c&lt;d&gt;e&amp;f"/>)");
}

TEST(SvgElement, EscapesEveryTextNode) {
  EXPECT_EQ(SvgElement("title").text(R"(step "x" <y> & 'z')").str(),
            "<title>step &quot;x&quot; &lt;y&gt; &amp; &apos;z&apos;</title>");
}

// As xml_escape treats them: what no XML document may hold (controls,
// invalid UTF-8, noncharacters) reads as U+FFFD, so the SVG stays
// well-formed whatever a phase or step name holds.
TEST(SvgElement, ControlsAndNoncharactersBecomeTheReplacementCharacter) {
  const std::string hostile =
      "a\x01"
      "b\x1B[31m"
      "c\xEF\xBF\xBE"
      "d\xEF\xB7\x90"
      "e\xFF"
      "f";
  const std::string replaced = "a\uFFFDb\uFFFD[31mc\uFFFDd\uFFFDe\uFFFDf";
  EXPECT_EQ(SvgElement("text").text(hostile).str(), "<text>" + replaced + "</text>");
  EXPECT_EQ(SvgElement("text").attr("class", hostile).str(), "<text class=\"" + replaced + "\"/>");
  EXPECT_EQ(SvgElement("text").text("µs").attr("x", "µs").str(), R"(<text x="µs">µs</text>)");
}

// A reader normalises a raw tab or line break in an attribute to a space;
// a character reference survives. In a text node they stay as they are.
TEST(SvgElement, WhitespaceInAttributesAsCharacterReferences) {
  EXPECT_EQ(SvgElement("g").attr("data-x", "a\tb\nc\rd").text("a\tb\n").str(),
            "<g data-x=\"a&#9;b&#10;c&#13;d\">a\tb\n</g>");
}

TEST(SvgElement, ChildrenNestInTheOrderAdded) {
  const auto title = SvgElement("title").text("listen at 5 ms");
  const auto dot = SvgElement("circle").attr("r", 5);
  const auto group = SvgElement("g").attr("class", "listen").child(title).child(dot);
  EXPECT_EQ(group.str(), R"(<g class="listen"><title>listen at 5 ms</title><circle r="5"/></g>)");
  // open(): what is there so far, for the children a writer adds line by line.
  const auto titled = SvgElement("g").attr("class", "listen").child(title);
  EXPECT_EQ(titled.open(), R"(<g class="listen"><title>listen at 5 ms</title>)");
  EXPECT_EQ(titled.close(), "</g>");
  std::ostringstream out;
  out << dot;
  EXPECT_EQ(out.str(), R"(<circle r="5"/>)");
}

}  // namespace
}  // namespace hacoboot
