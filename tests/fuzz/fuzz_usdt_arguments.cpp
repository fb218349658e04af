// libFuzzer target: a USDT probe's argument string, as the traced binary's
// .note.stapsdt holds it (any file given to --haconiwa or --list).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "capture/usdt_arg_location.hpp"
#include "capture/usdt_argument.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& argument : hacoboot::parse_usdt_arguments(text)) {
    if (hacoboot::describe(argument).empty()) __builtin_trap();
    const bool sized = argument.size == 1 || argument.size == 2 || argument.size == 4 || argument.size == 8;
    if (argument.kind != hacoboot::UsdtArgument::Kind::Unrecognised && !sized) __builtin_trap();
    const auto location = hacoboot::locate_usdt_argument(argument);
    if (!location) continue;
    // What the BPF side trusts: a shift that keeps the argument's bits, a
    // register slot inside pt_regs (never %rip, whose value is the probe's).
    if (location->bitshift != 64 - argument.size * 8) __builtin_trap();
    if (location->type != hacoboot::UsdtArgLocation::Type::Constant &&
        (location->register_offset < 0 || location->register_offset > 152 || location->register_offset % 8 != 0 ||
         location->register_offset == 128)) {
      __builtin_trap();
    }
  }
  return 0;
}
