#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

namespace hacoboot {
namespace {

struct Utf8Char {
  char32_t code;
  std::size_t length;
};

// The first byte of a multi-byte sequence: its bits, its length, and the
// smallest code point that needs that length (anything below is overlong).
struct Utf8Lead {
  unsigned char mask;
  unsigned char pattern;
  std::size_t length;
  char32_t smallest;
};
constexpr std::array<Utf8Lead, 3> kUtf8Leads{{
    {0xE0, 0xC0, 2, 0x80},
    {0xF0, 0xE0, 3, 0x800},
    {0xF8, 0xF0, 4, 0x10000},
}};

// The character at the start of text; nullopt for a byte that does not
// start a valid sequence (truncated, overlong, a surrogate, beyond U+10FFFF).
std::optional<Utf8Char> decode_utf8(std::string_view text) {
  const auto byte = [text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (byte(0) < 0x80) return Utf8Char{byte(0), 1};
  const auto* lead = std::find_if(kUtf8Leads.begin(), kUtf8Leads.end(),
                                  [&](const Utf8Lead& l) { return (byte(0) & l.mask) == l.pattern; });
  if (lead == kUtf8Leads.end() || text.size() < lead->length) return std::nullopt;
  char32_t code = byte(0) & static_cast<unsigned char>(~lead->mask);
  for (std::size_t i = 1; i < lead->length; ++i) {
    if ((byte(i) & 0xC0U) != 0x80U) return std::nullopt;
    code = (code << 6U) | (byte(i) & 0x3FU);
  }
  if (code < lead->smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
  return Utf8Char{code, lead->length};
}

bool is_control(char32_t code) {
  return code < 0x20 || (code >= 0x7F && code <= 0x9F) ||  // C0, DEL, C1
         code == 0x2028 || code == 0x2029 ||               // line and paragraph separators
         (code >= 0x202A && code <= 0x202E) ||             // bidirectional embeddings, overrides
         (code >= 0x2066 && code <= 0x2069);               // bidirectional isolates
}

// Code points Unicode keeps out of interchange: U+FDD0..U+FDEF and the last
// two of every plane. XML forbids U+FFFE and U+FFFF outright (a JUnit file or
// an SVG holding one is not well-formed), and discourages the others.
bool is_noncharacter(char32_t code) {
  return (code >= 0xFDD0 && code <= 0xFDEF) || (code & 0xFFFEU) == 0xFFFEU;
}

// Length of the printable character at the start of text, or 0.
std::size_t printable_length(std::string_view text) {
  const auto c = decode_utf8(text);
  return c && !is_control(c->code) && !is_noncharacter(c->code) ? c->length : 0;
}

// Whether XML 1.0 allows the character in a document: its Char production
// (tab, newline and carriage return of the C0 controls, no surrogates, no
// U+FFFE or U+FFFF), less the other noncharacters.
bool is_xml_char(char32_t code) {
  return (code >= 0x20 || code == '\t' || code == '\n' || code == '\r') && !is_noncharacter(code);
}

}  // namespace

bool is_printable_utf8(std::string_view text) {
  while (!text.empty()) {
    const auto length = printable_length(text);
    if (length == 0) return false;
    text.remove_prefix(length);
  }
  return true;
}

std::string printable(std::string_view text, std::size_t at_most) {
  std::string shown;
  std::size_t taken = 0;
  while (taken < text.size() && taken < at_most) {
    const auto rest = text.substr(taken);
    if (const auto length = printable_length(rest); length > 0) {
      shown += rest.substr(0, length);
      taken += length;
    } else {
      shown += fmt::format("\\x{:02X}", static_cast<unsigned char>(rest.front()));
      ++taken;
    }
  }
  if (taken < text.size()) shown += "...";
  return shown;
}

std::string printable_lines(std::string_view text) {
  std::string shown;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    shown += printable(text.substr(start, end - start), kUncut);
    if (end < text.size()) shown += '\n';
    start = end + 1;
  }
  return shown;
}

std::string escape_chars(std::string_view text, std::span<const CharEscape> escapes) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    const auto escape = std::find_if(escapes.begin(), escapes.end(), [c](const CharEscape& e) { return e.c == c; });
    if (escape != escapes.end()) {
      escaped += escape->as;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string xml_escape(std::string_view text) {
  static constexpr std::array<CharEscape, 5> kXml{
      {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&apos;"}}};
  // What XML cannot hold (a byte of invalid UTF-8, a control, a
  // noncharacter) reads as U+FFFD: the document stays well-formed whatever
  // the text.
  constexpr std::string_view kReplacement = "\uFFFD";
  std::string kept;
  kept.reserve(text.size());
  while (!text.empty()) {
    const auto c = decode_utf8(text);
    const auto length = c ? c->length : 1;
    kept += c && is_xml_char(c->code) ? text.substr(0, length) : kReplacement;
    text.remove_prefix(length);
  }
  return escape_chars(kept, kXml);
}

}  // namespace hacoboot
