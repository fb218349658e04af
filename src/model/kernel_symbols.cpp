#include "model/kernel_symbols.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace hacoboot {

namespace {

// The next field of `line` separated by spaces or tabs, consumed.
std::string_view next_field(std::string_view& line) {
  const auto begin = line.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(begin);
  const auto end = std::min(line.find_first_of(" \t"), line.size());
  const auto field = line.substr(0, end);
  line.remove_prefix(end);
  return field;
}

// Text symbols only: code addresses are what stacks hold.
bool is_text(std::string_view type) {
  return type.size() == 1 && std::string_view("tTwW").find(type[0]) != std::string_view::npos;
}

}  // namespace

KernelSymbols KernelSymbols::parse(std::string_view text) {
  KernelSymbols symbols;
  while (!text.empty()) {
    const auto end = std::min(text.find('\n'), text.size());
    auto line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const auto address_text = next_field(line);
    const auto type = next_field(line);
    const auto name = next_field(line);
    auto module = next_field(line);
    std::uint64_t address = 0;
    const auto parsed = std::from_chars(address_text.data(), address_text.data() + address_text.size(), address, 16);
    if (parsed.ec != std::errc{} || parsed.ptr != address_text.data() + address_text.size() || name.empty() ||
        !is_text(type) || address == 0) {
      continue;
    }
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']') {
      module = module.substr(1, module.size() - 2);
    }
    symbols.symbols_.push_back({.address = address, .name = std::string(name), .module = std::string(module)});
  }
  std::stable_sort(symbols.symbols_.begin(), symbols.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return symbols;
}

std::string KernelSymbols::describe(std::uint64_t address) const {
  const auto above =
      std::upper_bound(symbols_.begin(), symbols_.end(), address,
                       [](std::uint64_t wanted, const Symbol& symbol) { return wanted < symbol.address; });
  if (above == symbols_.begin()) return fmt::format("{:#x}", address);
  const auto& symbol = *std::prev(above);
  if (symbol.module.empty()) return fmt::format("{}+{:#x}", symbol.name, address - symbol.address);
  return fmt::format("{}+{:#x} [{}]", symbol.name, address - symbol.address, symbol.module);
}

}  // namespace hacoboot
