// is_printable_utf8 and printable: what a name may hold, and how user text
// appears in an error message.
#include "util/text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hacoboot {
namespace {

TEST(PrintableUtf8, AsciiAndMultiByteCharactersArePrintable) {
  for (const char* text : {"", "APP_READY", "phase 1 (ok)", "起動完了", "café", "\xF0\x9F\x9A\x80"}) {
    EXPECT_TRUE(is_printable_utf8(text)) << text;
  }
}

TEST(PrintableUtf8, ControlsAndBadSequencesAreNot) {
  const std::string nul("A\0B", 3);
  for (const std::string& text : {nul, std::string("A\x1B[31m"), std::string("tab\there"), std::string("del\x7F"),
                                  std::string("\xC2\x9B"),           // U+009B, the C1 CSI
                                  std::string("\xE2\x80\xAE"),       // U+202E, right-to-left override
                                  std::string("\xFF"),               // never in UTF-8
                                  std::string("\xC3"),               // truncated
                                  std::string("\xC0\xAF"),           // overlong '/'
                                  std::string("\xED\xA0\x80"),       // a surrogate
                                  std::string("\xF4\x90\x80\x80"),   // beyond U+10FFFF
                                  std::string("\xEF\xBF\xBE"),       // U+FFFE, a noncharacter XML forbids
                                  std::string("\xEF\xBF\xBF"),       // U+FFFF
                                  std::string("\xEF\xB7\x90"),       // U+FDD0
                                  std::string("\xEF\xB7\xAF"),       // U+FDEF
                                  std::string("\xF0\x9F\xBF\xBF"),   // U+1FFFF, the end of plane 1
                                  std::string("\xF4\x8F\xBF\xBE")})  // U+10FFFE
  {
    EXPECT_FALSE(is_printable_utf8(text)) << printable(text);
  }
}

TEST(Printable, EscapesEveryByteThatIsNotPrintable) {
  EXPECT_EQ(printable("APP_READY"), "APP_READY");
  EXPECT_EQ(printable("起動"), "起動");
  EXPECT_EQ(printable(std::string("A\0B", 3)), "A\\x00B");
  EXPECT_EQ(printable("A\x1B[31mRED"), "A\\x1B[31mRED");
  EXPECT_EQ(printable("\xFF\xFEok"), "\\xFF\\xFEok");
  EXPECT_EQ(printable("\xE2\x80\xAE"), "\\xE2\\x80\\xAE");
}

TEST(Printable, LongTextIsCut) {
  const std::string long_text(10'000, 'a');
  EXPECT_EQ(printable(long_text), std::string(kMaxPrintable, 'a') + "...");
}

// A whole error message: escaped, never cut.
TEST(Printable, AsManyBytesAsAsked) {
  const std::string message = std::string(1'000, 'a') + "\x1B";
  EXPECT_EQ(printable(message, message.size()), std::string(1'000, 'a') + "\\x1B");
}

// libbpf's log: its lines stay lines, whatever they quote.
TEST(Printable, LineByLineKeepsOnlyTheLineBreaks) {
  EXPECT_EQ(printable_lines("libbpf: /opt/\x1B[31m/x: bad\n\nnext\r\n"),
            "libbpf: /opt/\\x1B[31m/x: bad\n\nnext\\x0D\n");
  const std::string long_line(1'000, 'a');
  EXPECT_EQ(printable_lines(long_line), long_line);
}

TEST(XmlEscape, ReplacesEveryMarkupCharacter) {
  EXPECT_EQ(xml_escape(R"(a<b>&"c"'d')"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  EXPECT_EQ(xml_escape("boot 3 (hpid 42)"), "boot 3 (hpid 42)");
  EXPECT_EQ(xml_escape("µs"), "µs");
  // What no XML document may hold reads as U+FFFD, so the JUnit file and the
  // SVG stay well-formed whatever a name holds.
  EXPECT_EQ(xml_escape("a\xEF\xBF\xBE"
                       "b\xEF\xBF\xBF"
                       "c\x01"
                       "d\xFF"
                       "e"),
            "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe");
  EXPECT_EQ(xml_escape("tab\tline\n"), "tab\tline\n");
}

}  // namespace
}  // namespace hacoboot
