#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hacoboot {

// One argument of a USDT probe, decoded from its SDT spec ("-8@%rdi").
// Specs are what the assembler wrote for the probe site's operand:
//   x86-64   -8@%rdi (register), -4@-12(%rbp) (memory), 8@$5 (constant)
//   aarch64  -8@x0 (register), -4@[sp, 12] (memory), 8@5 (constant)
struct UsdtArgument {
  enum class Kind : std::uint8_t { Register, Memory, Constant, Unrecognised };
  Kind kind = Kind::Unrecognised;
  int size = 0;            // bytes: 1, 2, 4 or 8
  bool is_signed = false;  // a '-' before the size
  std::string operand;     // "%rdi", "-12(%rbp)", "5"; for Unrecognised, the whole spec
};

// Splits a probe's argument string on the spaces between specs (not those
// inside an aarch64 "[sp, 12]") and decodes each one.
std::vector<UsdtArgument> parse_usdt_arguments(std::string_view arguments);

// "int64 in %rdi", "int32 at -12(%rbp)", "uint64 constant 5",
// "unrecognised spec 'x'".
std::string describe(const UsdtArgument& argument);

}  // namespace hacoboot
