#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hacoboot {

// The kernel's text symbols as /proc/kallsyms lists them, to name the
// addresses of kernel stacks. Parsing only: the caller reads the file.
class KernelSymbols {
 public:
  KernelSymbols() = default;
  // Lines "ffffffff81000000 T name" or "... t name\t[module]"; other
  // symbol types (data) and malformed lines are left out.
  static KernelSymbols parse(std::string_view text);

  // Whether the addresses are hidden (kptr_restrict: every address 0) or
  // none was read: addresses then stay raw.
  [[nodiscard]] bool hidden() const { return symbols_.empty(); }
  // "name+0x1a", "name+0x1a [module]" from the nearest symbol at or below
  // `address`; "0xffffffff81234567" when none is.
  [[nodiscard]] std::string describe(std::uint64_t address) const;
  // The `count` addresses in `bytes` (the contract's unsigned long longs,
  // innermost first) described, the tracer's own leading frames (the BPF
  // program and the tracepoint or perf event that ran it) left out.
  [[nodiscard]] std::vector<std::string> stack(std::span<const std::byte> bytes, std::size_t count) const;

 private:
  struct Symbol {
    std::uint64_t address = 0;
    std::string name;
    std::string module;  // empty: the kernel's own
  };
  std::vector<Symbol> symbols_;  // by address
};

// "do_nanosleep+0x6e [mod]" -> "do_nanosleep".
std::string_view symbol_of(std::string_view frame);
bool starts_with_any(std::string_view name, std::span<const std::string_view> prefixes);
// A frame of the tracer's own (its BPF program, the tracepoint or perf event that ran it).
bool is_tracer_frame(std::string_view frame);
// How a syscall enters the kernel (x86-64, its 32-bit entries, arm64):
// frames outside the call's own work.
bool is_syscall_entry(std::string_view frame);

// The short form of a stack whose frames are all raw addresses
// (kptr_restrict hides the kernel's symbols).
inline constexpr std::string_view kHiddenFrame = "(hidden)";

inline bool is_raw_address(std::string_view frame) {
  return frame.starts_with("0x");
}

// The first frame (innermost first) that is neither a raw address nor one
// `plumbing` takes for generic; the first frame when all are; end() without
// frames.
template <typename Plumbing>
std::vector<std::string>::const_iterator first_named_at(const std::vector<std::string>& frames, Plumbing plumbing) {
  const auto found = std::find_if(frames.begin(), frames.end(), [&plumbing](const std::string& frame) {
    return !is_raw_address(frame) && !plumbing(symbol_of(frame));
  });
  return found == frames.end() ? frames.begin() : found;
}

// That frame's symbol; kHiddenFrame when all are raw addresses (the first
// of them is the tracer's own program, the same in every stack: it names
// nothing); empty without frames.
template <typename Plumbing>
std::string first_named_frame(const std::vector<std::string>& frames, Plumbing plumbing) {
  if (frames.empty()) return {};
  if (std::all_of(frames.begin(), frames.end(), is_raw_address)) return std::string(kHiddenFrame);
  return std::string(symbol_of(*first_named_at(frames, plumbing)));
}

}  // namespace hacoboot
