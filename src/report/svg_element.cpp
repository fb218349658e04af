#include "report/svg_element.hpp"

#include <array>
#include <ostream>

#include "util/text.hpp"

namespace hacoboot {

std::string xml_attribute_escape(std::string_view value) {
  static constexpr std::array<CharEscape, 3> kWhitespace{{{'\t', "&#9;"}, {'\n', "&#10;"}, {'\r', "&#13;"}}};
  return escape_chars(xml_escape(value), kWhitespace);
}

SvgElement& SvgElement::attr(std::string_view name, std::string_view value) {
  attributes_ += fmt::format(R"( {}="{}")", name, xml_attribute_escape(value));
  return *this;
}

SvgElement& SvgElement::attr(std::string_view name, double value) {
  return attr(name, std::string_view(fmt::format("{}", value)));
}

SvgElement& SvgElement::attr(std::string_view name, double value, int decimals) {
  return attr(name, std::string_view(fmt::format("{:.{}f}", value, decimals)));
}

SvgElement& SvgElement::text(std::string_view text) {
  content_ += xml_escape(text);
  return *this;
}

SvgElement& SvgElement::child(const SvgElement& element) {
  content_ += element.str();
  return *this;
}

std::string SvgElement::open() const {
  return fmt::format("<{}{}>{}", name_, attributes_, content_);
}

std::string SvgElement::close() const {
  return fmt::format("</{}>", name_);
}

std::string SvgElement::str() const {
  if (content_.empty()) return fmt::format("<{}{}/>", name_, attributes_);
  return open() + close();
}

std::ostream& operator<<(std::ostream& out, const SvgElement& element) {
  return out << element.str();
}

}  // namespace hacoboot
