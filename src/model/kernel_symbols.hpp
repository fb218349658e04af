#pragma once

#include <cstdint>
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

 private:
  struct Symbol {
    std::uint64_t address = 0;
    std::string name;
    std::string module;  // empty: the kernel's own
  };
  std::vector<Symbol> symbols_;  // by address
};

}  // namespace hacoboot
