#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "report/timeline_svg.hpp"

namespace hacoboot {
namespace {

// Just enough of XML to catch what a writer gets wrong: an element left open
// or closed out of order, a raw < or & in text or attributes, no single root.
class XmlChecker {
 public:
  explicit XmlChecker(std::string_view text) : text_(text) {}

  // Empty when well-formed, else what is wrong.
  std::string problem() {
    skip_declaration();
    while (pos_ < text_.size() && error_.empty()) {
      if (text_[pos_] == '<') {
        read_tag();
      } else {
        read_text();
      }
    }
    if (error_.empty() && !open_.empty()) fail("unclosed <" + open_.back() + ">");
    if (error_.empty() && roots_ != 1) fail("expected one root element, saw " + std::to_string(roots_));
    return error_;
  }

 private:
  void fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
  }

  void skip_declaration() {
    if (text_.starts_with("<?xml")) pos_ = text_.find("?>") + 2;
  }

  // An entity after '&': named XML ones or a character reference.
  [[nodiscard]] bool entity_at(std::size_t at) const {
    static const std::regex kEntity("^&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);");
    const auto rest = std::string(text_.substr(at, 12));
    return std::regex_search(rest, kEntity);
  }

  void read_text() {
    for (; pos_ < text_.size() && text_[pos_] != '<'; ++pos_) {
      if (text_[pos_] == '>') return fail("raw > in text");
      if (text_[pos_] == '&' && !entity_at(pos_)) return fail("raw & in text");
      if (open_.empty() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) return fail("text outside root");
    }
  }

  std::string read_name() {
    const auto start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
                                   text_[pos_] == ':' || text_[pos_] == '_')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  void read_attribute() {
    if (read_name().empty()) return fail("bad attribute name");
    if (text_.substr(pos_, 2) != "=\"") return fail("attribute without =\"");
    for (pos_ += 2; pos_ < text_.size() && text_[pos_] != '"'; ++pos_) {
      if (text_[pos_] == '<') return fail("raw < in attribute");
      if (text_[pos_] == '&' && !entity_at(pos_)) return fail("raw & in attribute");
    }
    if (pos_ == text_.size()) return fail("unterminated attribute");
    ++pos_;
  }

  void read_tag() {
    ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '/') return read_end_tag();
    const auto name = read_name();
    if (name.empty()) return fail("bad element name");
    if (open_.empty()) ++roots_;
    for (skip_space(); pos_ < text_.size() && error_.empty(); skip_space()) {
      if (text_.substr(pos_, 2) == "/>") {
        pos_ += 2;
        return;
      }
      if (text_[pos_] == '>') {
        ++pos_;
        open_.push_back(name);
        return;
      }
      read_attribute();
    }
    fail("unterminated <" + name);
  }

  void read_end_tag() {
    ++pos_;
    const auto name = read_name();
    if (pos_ >= text_.size() || text_[pos_] != '>') return fail("bad end tag </" + name);
    if (open_.empty() || open_.back() != name) return fail("</" + name + "> closes nothing open");
    open_.pop_back();
    ++pos_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<std::string> open_;
  int roots_ = 0;
  std::string error_;
};

std::size_t count(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The text of every tick label, upper and lower axis.
std::vector<std::string> tick_labels(const std::string& svg) {
  static const std::regex kTick(R"(<text class="tick"[^>]*>([^<]*)</text>)");
  std::vector<std::string> labels;
  for (std::sregex_iterator it(svg.begin(), svg.end(), kTick), end; it != end; ++it) labels.push_back((*it)[1]);
  return labels;
}

// A boot in the order Haconiwa runs one, scaled so that execve comes at
// `span_ns` * 0.7 and listen at `span_ns` after the start (phase 1).
BootRecord boot_spanning(std::uint64_t sequence, std::uint64_t span_ns) {
  constexpr std::uint64_t kStart = 5'000'000'000;
  BootRecord b;
  b.sequence = sequence;
  b.hpid = static_cast<std::uint32_t>(1000 + sequence);
  b.container_pid = b.hpid + 1;
  b.start_ns = kStart;
  const auto at = [&](std::uint64_t permille) { return kStart + span_ns * permille / 1000; };
  b.phases = {{0, kStart - span_ns / 20},
              {1, at(0)},
              {31, at(10)},
              {32, at(60)},
              {2, at(80)},
              {11, at(100)},
              {12, at(300)},
              {21, at(650)}};
  b.execve_ns = at(700);
  b.listen_ns = at(1000);
  return b;
}

std::string render(const std::vector<BootRecord>& boots) {
  std::ostringstream out;
  write_timeline_svg(boots, out);
  return out.str();
}

TEST(XmlEscape, ReplacesEveryMarkupCharacter) {
  EXPECT_EQ(xml_escape(R"(a<b>&"c"'d')"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xml_escape("boot 3 (hpid 42)"), "boot 3 (hpid 42)");
  EXPECT_EQ(xml_escape("µs"), "µs");
}

TEST(XmlChecker, CatchesWhatItIsFor) {
  EXPECT_EQ(XmlChecker("<a><b/>x</a>").problem(), "");
  EXPECT_NE(XmlChecker("<a><b></a>").problem(), "");
  EXPECT_NE(XmlChecker("<a>").problem(), "");
  EXPECT_NE(XmlChecker("<a>&</a>").problem(), "");
  EXPECT_NE(XmlChecker("<a>x<y</a>").problem(), "");
  EXPECT_NE(XmlChecker(R"(<a t="<"/>)").problem(), "");
  EXPECT_NE(XmlChecker("<a/><b/>").problem(), "");
  EXPECT_EQ(XmlChecker("<a>" + xml_escape("<&> \"'") + "</a>").problem(), "");
}

TEST(TimelineSvg, IsWellFormedWithSizeAndBackground) {
  const auto svg = render({boot_spanning(1, 8'000'000), boot_spanning(2, 9'500'000)});
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_TRUE(std::regex_search(svg, std::regex(R"(<svg [^>]*width="\d+" height="\d+" viewBox="0 0 \d+ \d+")")));
  EXPECT_NE(svg.find(R"(fill="#ffffff")"), std::string::npos);
}

TEST(TimelineSvg, OneRowPerStartedBootBySequence) {
  auto unstarted = boot_spanning(2, 8'000'000);
  unstarted.start_ns.reset();
  const auto svg = render({boot_spanning(3, 8'000'000), unstarted, boot_spanning(1, 7'000'000)});
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="boot")"), 2U);
  const auto first = svg.find(">boot 1 (hpid 1001)<");
  const auto third = svg.find(">boot 3 (hpid 1003)<");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(third, std::string::npos);
  EXPECT_LT(first, third);
  EXPECT_EQ(svg.find("boot 2 (hpid"), std::string::npos);
  EXPECT_NE(svg.find("1 boots not drawn: tracing began after their start."), std::string::npos);
}

TEST(TimelineSvg, MarksExecveAndListenWithTheirTimes) {
  auto no_listen = boot_spanning(2, 10'000'000);
  no_listen.listen_ns.reset();
  const auto svg = render({boot_spanning(1, 10'000'000), no_listen});
  EXPECT_EQ(count(svg, R"(<g class="execve">)"), 2U);
  EXPECT_EQ(count(svg, R"(<g class="listen">)"), 1U);
  EXPECT_NE(svg.find("<title>execve at 7.000 ms</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>listen at 10.000 ms</title>"), std::string::npos);
}

TEST(TimelineSvg, BarPerPhaseSpanWithNamesInTooltips) {
  const auto svg = render({boot_spanning(1, 10'000'000)});
  // 8 phases: 7 spans until the next phase, and the last one as a tick.
  EXPECT_EQ(count(svg, R"(<rect class="phase")"), 8U);
  EXPECT_NE(svg.find("<title>CONTAINER_NAMESPACE_GENERATED (phase 12): 3.000 ms to 6.500 ms, 3.500 ms</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>CONTAINER_EXECING (phase 21) at 6.500 ms, the last phase seen</title>"),
            std::string::npos);
  // The CLI's phase 0 precedes the start: negative time.
  EXPECT_NE(svg.find("<title>CLI_START (phase 0): -500.000 µs to 0 ns"), std::string::npos);
}

TEST(TimelineSvg, LabelsOnlyBarsWideEnough) {
  const auto svg = render({boot_spanning(1, 10'000'000)});
  // 3.5 of 10.5 ms: a third of the plot.
  EXPECT_NE(svg.find(">CONTAINER_NAMESPACE_GENERATED</text>"), std::string::npos);
  // 0.2 of 10.5 ms: 19 px, too narrow for its name.
  EXPECT_EQ(svg.find(">START_FORK</text>"), std::string::npos);
}

TEST(TimelineSvg, AxisUnitFollowsTheRange) {
  struct Case {
    std::uint64_t span_ns;
    std::string unit;
  };
  const std::array<Case, 3> cases{{{300'000, " µs"}, {8'000'000, " ms"}, {3'000'000'000, " s"}}};
  for (const auto& c : cases) {
    const auto labels = tick_labels(render({boot_spanning(1, c.span_ns)}));
    ASSERT_GE(labels.size(), 8U) << c.unit;
    for (const auto& label : labels) EXPECT_TRUE(label.ends_with(c.unit)) << label;
  }
  const auto labels = tick_labels(render({boot_spanning(1, 8'000'000)}));
  EXPECT_NE(std::find(labels.begin(), labels.end(), "0 ms"), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "8 ms"), labels.end());
}

TEST(TimelineSvg, CapsRowsWithANote) {
  std::vector<BootRecord> boots;
  for (std::uint64_t i = 1; i <= kTimelineMaxRows + 3; ++i) boots.push_back(boot_spanning(i, 5'000'000));
  const auto svg = render(boots);
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="boot")"), kTimelineMaxRows);
  EXPECT_NE(svg.find("3 more boots not drawn (at most 500 are, by sequence)."), std::string::npos);
  EXPECT_EQ(svg.find(">boot 501 (hpid"), std::string::npos);
}

TEST(TimelineSvg, NothingToDrawIsStillAPicture) {
  const auto svg = render({});
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="boot")"), 0U);
  EXPECT_NE(svg.find("No boot with a start to draw."), std::string::npos);
}

}  // namespace
}  // namespace hacoboot
