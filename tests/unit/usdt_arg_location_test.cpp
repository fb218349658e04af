#include "capture/usdt_arg_location.hpp"

#include <gtest/gtest.h>

#include "capture/usdt_argument.hpp"

namespace hacoboot {
namespace {

using Type = UsdtArgLocation::Type;

std::optional<UsdtArgLocation> locate(std::string_view spec) {
  const auto arguments = parse_usdt_arguments(spec);
  EXPECT_EQ(arguments.size(), 1U) << spec;
  return arguments.empty() ? std::nullopt : locate_usdt_argument(arguments.front());
}

#if defined(__x86_64__)
// What the demo launcher's and Haconiwa's probes carry: "-8@%rdi -8@%rsi".
TEST(UsdtArgLocation, SignedRegisterArgumentsOfTheLauncherProbe) {
  const auto arguments = parse_usdt_arguments("-8@%rdi -8@%rsi");
  ASSERT_EQ(arguments.size(), 2U);
  EXPECT_EQ(locate_usdt_argument(arguments[0]), (UsdtArgLocation{Type::Register, 0, 112, true, 0}));
  EXPECT_EQ(locate_usdt_argument(arguments[1]), (UsdtArgLocation{Type::Register, 0, 104, true, 0}));
}

TEST(UsdtArgLocation, NarrowRegistersReadTheWholeRegisterAndShift) {
  EXPECT_EQ(locate("4@%eax"), (UsdtArgLocation{Type::Register, 0, 80, false, 32}));
  EXPECT_EQ(locate("-2@%r9w"), (UsdtArgLocation{Type::Register, 0, 64, true, 48}));
  EXPECT_EQ(locate("1@%sil"), (UsdtArgLocation{Type::Register, 0, 104, false, 56}));
  EXPECT_EQ(locate("8@%r15"), (UsdtArgLocation{Type::Register, 0, 0, false, 0}));
}

TEST(UsdtArgLocation, StackSlotsAreReadThroughTheirBaseRegister) {
  EXPECT_EQ(locate("-4@-12(%rbp)"),
            (UsdtArgLocation{Type::RegisterDeref, static_cast<std::uint64_t>(-12), 32, true, 32}));
  EXPECT_EQ(locate("8@(%rsp)"), (UsdtArgLocation{Type::RegisterDeref, 0, 152, false, 0}));
  EXPECT_EQ(locate("8@16(%rax)"), (UsdtArgLocation{Type::RegisterDeref, 16, 80, false, 0}));
}

TEST(UsdtArgLocation, Constants) {
  EXPECT_EQ(locate("-4@$-5"), (UsdtArgLocation{Type::Constant, static_cast<std::uint64_t>(-5), 0, true, 32}));
  EXPECT_EQ(locate("8@$42"), (UsdtArgLocation{Type::Constant, 42, 0, false, 0}));
}

// Left to libbpf's own attach: what needs the load address or an index.
TEST(UsdtArgLocation, RipRelativeIndexedAndUnknownAreNotLocated) {
  EXPECT_FALSE(locate("8@sym+8(%rip)"));
  EXPECT_FALSE(locate("8@8(%rip)"));
  EXPECT_FALSE(locate("8@(%rax,%rbx,8)"));
  EXPECT_FALSE(locate("8@%xmm0"));
  EXPECT_FALSE(locate("8@%rip"));
  EXPECT_FALSE(locate("bogus"));
}
#else
TEST(UsdtArgLocation, OtherArchitecturesAreLeftToLibbpf) {
  EXPECT_FALSE(locate("8@x0"));
}
#endif

}  // namespace
}  // namespace hacoboot
