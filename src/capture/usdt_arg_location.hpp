#pragma once

#include <cstdint>
#include <optional>

#include "capture/usdt_argument.hpp"

namespace hacoboot {

// Where a USDT argument is when its probe fires, in the terms of libbpf's
// bpf_usdt_arg() (usdt.bpf.h): what the loader writes into libbpf's spec map
// when it attaches the probe itself, as one uprobe_multi link.
struct UsdtArgLocation {
  // libbpf's enum __bpf_usdt_arg_type, same values (widened to the spec map's 32 bits).
  enum class Type : std::uint8_t { Constant = 0, Register = 1, RegisterDeref = 2 };
  Type type = Type::Constant;
  std::uint64_t value_or_offset = 0;  // the constant, or the displacement from the register
  std::int16_t register_offset = 0;   // of the register in the kernel's struct pt_regs
  bool is_signed = false;
  std::int8_t bitshift = 0;  // 64 minus the argument's size in bits

  bool operator==(const UsdtArgLocation&) const = default;
};

// nullopt for what only libbpf's own USDT attach understands (other
// architectures, %rip-relative symbols, index registers): the caller then
// lets libbpf attach the probe.
std::optional<UsdtArgLocation> locate_usdt_argument(const UsdtArgument& argument);

}  // namespace hacoboot
