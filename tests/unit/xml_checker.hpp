#pragma once
// A small XML well-formedness checker for the unit tests of what writes XML
// (the --timeline SVG), from hand-made boots and from replayed recordings.

#include <cctype>
#include <cstddef>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace hacoboot::test {

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

}  // namespace hacoboot::test
