#pragma once

#include <algorithm>
#include <cctype>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace hacoboot {

// ASCII case-insensitive equality, for names users type (phases, formats).
inline bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
  });
}

// ASCII lower case, for words the tool prints in two registers.
inline std::string lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return lower;
}

// Whether text is valid UTF-8 without control characters (C0, DEL, C1, and
// the line separators and bidirectional controls that make a terminal or a
// viewer show text other than it is) and without noncharacters (U+FFFE,
// U+FDD0...: XML forbids some): what a name the tool prints may hold.
bool is_printable_utf8(std::string_view text);

// User text (a value, a path, a token from a file) as an error message may
// show it: every byte is_printable_utf8 would refuse becomes \xNN, so a
// message never sends raw bytes to a terminal; longer texts are cut after
// at_most bytes with "...", so it stays one readable line.
inline constexpr std::size_t kMaxPrintable = 256;
// For a whole message or report line: nothing of it is cut.
inline constexpr std::size_t kUncut = std::numeric_limits<std::size_t>::max();
std::string printable(std::string_view text, std::size_t at_most = kMaxPrintable);

// printable, uncut, line by line: a text of several lines (libbpf's log)
// keeps its line breaks, and nothing else reaches the terminal raw.
std::string printable_lines(std::string_view text);

// How one character is written in an output format (\t in TSV, &lt; in
// XML...); every other character is copied as it is.
struct CharEscape {
  char c;
  std::string_view as;
};
std::string escape_chars(std::string_view text, std::span<const CharEscape> escapes);

// The text with & < > " ' replaced by entities, for XML text and attributes;
// characters no XML document may hold (invalid UTF-8, controls but tab and
// line breaks, noncharacters such as U+FFFE) replaced by U+FFFD.
std::string xml_escape(std::string_view text);

}  // namespace hacoboot
