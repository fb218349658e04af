#include "model/kernel_symbols.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

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

std::vector<std::string> KernelSymbols::stack(std::span<const std::byte> bytes, std::size_t count) const {
  std::vector<std::string> names;
  names.reserve(count);
  for (std::size_t i = 0; i < count && (i + 1) * sizeof(std::uint64_t) <= bytes.size(); ++i) {
    std::uint64_t address = 0;
    std::memcpy(&address, bytes.data() + i * sizeof address, sizeof address);
    names.push_back(describe(address));
  }
  names.erase(names.begin(), std::find_if_not(names.begin(), names.end(),
                                              [](const std::string& frame) { return is_tracer_frame(frame); }));
  return names;
}

std::string_view symbol_of(std::string_view frame) {
  return frame.substr(0, frame.find_first_of("+ "));
}

bool starts_with_any(std::string_view name, std::span<const std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [name](std::string_view prefix) { return name.starts_with(prefix); });
}

bool is_tracer_frame(std::string_view frame) {
  // The stack is taken inside a tracepoint's or a perf event's BPF program.
  constexpr std::array<std::string_view, 5> kTracerFrames{"bpf_", "__bpf_", "__traceiter_", "trace_", "perf_"};
  return starts_with_any(symbol_of(frame), kTracerFrames);
}

bool is_syscall_entry(std::string_view frame) {
  constexpr std::array<std::string_view, 17> kEntries{"entry_SYSCALL",
                                                      "entry_SYSENTER",
                                                      "entry_INT80",
                                                      "do_syscall_",
                                                      "x64_sys_call",
                                                      "__x64_sys_",
                                                      "__ia32_sys_",
                                                      "__arm64_sys_",
                                                      "__se_sys_",
                                                      "__do_sys_",
                                                      "do_fast_syscall_",
                                                      "__do_fast_syscall_",
                                                      "do_int80_syscall_",
                                                      "invoke_syscall",
                                                      "el0_svc",
                                                      "do_el0_svc",
                                                      "el0t_"};
  return starts_with_any(symbol_of(frame), kEntries);
}

}  // namespace hacoboot
