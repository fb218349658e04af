#include "capture/usdt_argument.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <utility>

namespace hacoboot {
namespace {

bool is_integer(std::string_view text) {
  if (text.starts_with('-') || text.starts_with('+')) text.remove_prefix(1);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t ignored = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, ignored, base);
  return !text.empty() && ptr == end && ec == std::errc{};
}

bool is_identifier(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isalnum(c) != 0 || c == '_'; });
}

// aarch64 general registers as the assembler names them: x0-x30, w0-w30, sp.
bool is_aarch64_register(std::string_view text) {
  if (text == "sp" || text == "wsp") return true;
  if (text.size() < 2 || (text[0] != 'x' && text[0] != 'w')) return false;
  int number = -1;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data() + 1, end, number);
  return ptr == end && ec == std::errc{} && number >= 0 && number <= 30;
}

// x86-64 memory operand: [disp](%base[,%index[,scale]]), disp a number or a
// symbol (sym+8(%rip)); the parentheses hold registers only.
bool is_x86_memory(std::string_view text) {
  const auto open = text.find('(');
  if (open == std::string_view::npos || !text.ends_with(')')) return false;
  const auto inside = text.substr(open + 1, text.size() - open - 2);
  return inside.starts_with('%') || inside.starts_with(",%");
}

// The kind of an operand and the part of it shown; nullopt when not understood.
std::optional<std::pair<UsdtArgument::Kind, std::string_view>> classify(std::string_view operand) {
  using Kind = UsdtArgument::Kind;
  const bool x86_register = operand.starts_with('%') && is_identifier(operand.substr(1));
  if (x86_register || is_aarch64_register(operand)) return std::pair{Kind::Register, operand};
  if (operand.starts_with('$') && is_integer(operand.substr(1))) return std::pair{Kind::Constant, operand.substr(1)};
  if (is_integer(operand)) return std::pair{Kind::Constant, operand};
  const bool aarch64_memory = operand.starts_with('[') && operand.ends_with(']');
  if (is_x86_memory(operand) || aarch64_memory) return std::pair{Kind::Memory, operand};
  return std::nullopt;
}

UsdtArgument unrecognised(std::string_view spec) {
  UsdtArgument argument;
  argument.operand = std::string(spec);
  return argument;
}

UsdtArgument parse_spec(std::string_view spec) {
  const auto at = spec.find('@');
  if (at == std::string_view::npos) return unrecognised(spec);
  std::string_view size_text = spec.substr(0, at);
  const std::string_view operand = spec.substr(at + 1);
  UsdtArgument argument;
  argument.is_signed = size_text.starts_with('-');
  if (argument.is_signed) size_text.remove_prefix(1);
  const auto* end = size_text.data() + size_text.size();
  const auto [ptr, ec] = std::from_chars(size_text.data(), end, argument.size);
  constexpr std::array kSizes{1, 2, 4, 8};
  if (size_text.empty() || ptr != end || ec != std::errc{} ||
      std::find(kSizes.begin(), kSizes.end(), argument.size) == kSizes.end() || operand.empty()) {
    return unrecognised(spec);
  }

  const auto classified = classify(operand);
  if (!classified) return unrecognised(spec);
  argument.kind = classified->first;
  argument.operand = std::string(classified->second);
  return argument;
}

std::string type_name(const UsdtArgument& argument) {
  return fmt::format("{}int{}", argument.is_signed ? "" : "u", argument.size * 8);
}

}  // namespace

std::vector<UsdtArgument> parse_usdt_arguments(std::string_view arguments) {
  std::vector<UsdtArgument> parsed;
  std::size_t start = 0;
  int brackets = 0;
  for (std::size_t i = 0; i <= arguments.size(); ++i) {
    const char c = i < arguments.size() ? arguments[i] : ' ';
    if (c == '[') ++brackets;
    if (c == ']' && brackets > 0) --brackets;
    if (c != ' ' || (brackets > 0 && i < arguments.size())) continue;
    if (i > start) parsed.push_back(parse_spec(arguments.substr(start, i - start)));
    start = i + 1;
  }
  return parsed;
}

std::string describe(const UsdtArgument& argument) {
  switch (argument.kind) {
    case UsdtArgument::Kind::Register: return fmt::format("{} in {}", type_name(argument), argument.operand);
    case UsdtArgument::Kind::Memory: return fmt::format("{} at {}", type_name(argument), argument.operand);
    case UsdtArgument::Kind::Constant: return fmt::format("{} constant {}", type_name(argument), argument.operand);
    case UsdtArgument::Kind::Unrecognised: break;
  }
  return fmt::format("unrecognised spec '{}'", argument.operand);
}

}  // namespace hacoboot
