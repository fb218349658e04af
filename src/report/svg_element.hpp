#pragma once

#include <concepts>
#include <iosfwd>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace hacoboot {

// An SVG (or any XML) element as text, built attribute by attribute:
//   SvgElement("rect").attr("x", x, 1).attr("class", css).str()
// Every attribute value and text node passes through here and is escaped
// here, so no writer formats markup by hand and no text a user or a kernel
// chose (a phase name, a step name) can break the document. Attributes are
// written in the order given; names are the writer's own, not escaped.
class SvgElement {
 public:
  explicit SvgElement(std::string_view name) : name_(name) {}

  SvgElement& attr(std::string_view name, std::string_view value);
  // A number as fmt writes it by default: 16, 2.5.
  SvgElement& attr(std::string_view name, double value);
  // A number to `decimals` places: attr("x", 3.14159, 1) is x="3.1".
  SvgElement& attr(std::string_view name, double value, int decimals);
  template <std::integral Integer>
  SvgElement& attr(std::string_view name, Integer value) {
    return attr(name, std::string_view(fmt::format("{}", value)));
  }

  // Content, in the order added: a text node, escaped, or a whole element.
  SvgElement& text(std::string_view text);
  SvgElement& child(const SvgElement& element);

  // The start tag and the content so far, for an element whose further
  // children are written line by line; close() ends it.
  [[nodiscard]] std::string open() const;
  [[nodiscard]] std::string close() const;
  // The whole element; <name .../> when it has no content.
  [[nodiscard]] std::string str() const;

 private:
  std::string name_;
  std::string attributes_;  // each with its leading space
  std::string content_;     // escaped
};

std::ostream& operator<<(std::ostream& out, const SvgElement& element);

// An attribute value as XML writes it: xml_escape, and tab and line breaks
// as character references, which a reader's attribute normalisation would
// otherwise turn into spaces.
std::string xml_attribute_escape(std::string_view value);

}  // namespace hacoboot
