#include "capture/usdt_arg_location.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>

namespace hacoboot {
namespace {

#ifdef __x86_64__
struct RegisterNames {
  std::array<std::string_view, 4> names;  // 64-, 32-, 16- and 8-bit
  std::int16_t offset = 0;                // in the kernel's x86-64 struct pt_regs
};

// The kernel's x86-64 struct pt_regs: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax
// cx dx si di orig_ax ip cs flags sp ss, eight bytes each (a stable ABI).
constexpr std::array kRegisters{
    RegisterNames{{"r15", "r15d", "r15w", "r15b"}, 0},  RegisterNames{{"r14", "r14d", "r14w", "r14b"}, 8},
    RegisterNames{{"r13", "r13d", "r13w", "r13b"}, 16}, RegisterNames{{"r12", "r12d", "r12w", "r12b"}, 24},
    RegisterNames{{"rbp", "ebp", "bp", "bpl"}, 32},     RegisterNames{{"rbx", "ebx", "bx", "bl"}, 40},
    RegisterNames{{"r11", "r11d", "r11w", "r11b"}, 48}, RegisterNames{{"r10", "r10d", "r10w", "r10b"}, 56},
    RegisterNames{{"r9", "r9d", "r9w", "r9b"}, 64},     RegisterNames{{"r8", "r8d", "r8w", "r8b"}, 72},
    RegisterNames{{"rax", "eax", "ax", "al"}, 80},      RegisterNames{{"rcx", "ecx", "cx", "cl"}, 88},
    RegisterNames{{"rdx", "edx", "dx", "dl"}, 96},      RegisterNames{{"rsi", "esi", "si", "sil"}, 104},
    RegisterNames{{"rdi", "edi", "di", "dil"}, 112},    RegisterNames{{"rip", "eip", "ip", ""}, 128},
    RegisterNames{{"rsp", "esp", "sp", "spl"}, 152},
};

std::optional<std::int16_t> register_offset(std::string_view operand) {
  if (!operand.starts_with('%')) return std::nullopt;
  operand.remove_prefix(1);
  for (const auto& reg : kRegisters) {
    if (std::find(reg.names.begin(), reg.names.end(), operand) != reg.names.end() && !operand.empty()) {
      return reg.offset;
    }
  }
  return std::nullopt;
}

// "-12(%rbp)" -> {-12, rbp}; a displacement that is a symbol, or an index
// register, is not understood here.
std::optional<std::pair<std::int64_t, std::int16_t>> memory_operand(std::string_view operand) {
  const auto open = operand.find('(');
  if (open == std::string_view::npos || !operand.ends_with(')')) return std::nullopt;
  std::int64_t displacement = 0;
  const auto text = operand.substr(0, open);
  if (!text.empty()) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), displacement);
    if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  }
  const auto reg = register_offset(operand.substr(open + 1, operand.size() - open - 2));
  if (!reg || *reg == 128) return std::nullopt;  // %rip-relative: needs the load address
  return std::pair{displacement, *reg};
}
#endif

}  // namespace

std::optional<UsdtArgLocation> locate_usdt_argument(const UsdtArgument& argument) {
#ifdef __x86_64__
  UsdtArgLocation location;
  location.is_signed = argument.is_signed;
  location.bitshift = static_cast<std::int8_t>(64 - argument.size * 8);
  switch (argument.kind) {
    case UsdtArgument::Kind::Constant: {
      std::int64_t value = 0;
      const auto& text = argument.operand;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
      location.type = UsdtArgLocation::Type::Constant;
      location.value_or_offset = static_cast<std::uint64_t>(value);
      return location;
    }
    case UsdtArgument::Kind::Register: {
      const auto reg = register_offset(argument.operand);
      if (!reg || *reg == 128) return std::nullopt;
      location.type = UsdtArgLocation::Type::Register;
      location.register_offset = *reg;
      return location;
    }
    case UsdtArgument::Kind::Memory: {
      const auto memory = memory_operand(argument.operand);
      if (!memory) return std::nullopt;
      location.type = UsdtArgLocation::Type::RegisterDeref;
      location.value_or_offset = static_cast<std::uint64_t>(memory->first);
      location.register_offset = memory->second;
      return location;
    }
    case UsdtArgument::Kind::Unrecognised: break;
  }
#else
  (void)argument;
#endif
  return std::nullopt;
}

}  // namespace hacoboot
