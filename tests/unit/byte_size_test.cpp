#include "cli/byte_size.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace hacoboot {
namespace {

TEST(ParseByteSize, BareNumberIsBytes) {
  EXPECT_EQ(parse_byte_size("65536"), 65536U);
  EXPECT_EQ(parse_byte_size("1"), 1U);
}

TEST(ParseByteSize, EverySuffixIsAPowerOf1024) {
  EXPECT_EQ(parse_byte_size("512B"), 512U);
  EXPECT_EQ(parse_byte_size("256K"), 256U << 10);
  EXPECT_EQ(parse_byte_size("256KB"), 256U << 10);
  EXPECT_EQ(parse_byte_size("256KiB"), 256U << 10);
  EXPECT_EQ(parse_byte_size("4M"), 4U << 20);
  EXPECT_EQ(parse_byte_size("4MB"), 4U << 20);
  EXPECT_EQ(parse_byte_size("4MiB"), 4U << 20);
  EXPECT_EQ(parse_byte_size("1G"), 1U << 30);
  EXPECT_EQ(parse_byte_size("1GiB"), 1U << 30);
}

TEST(ParseByteSize, SuffixesIgnoreCase) {
  EXPECT_EQ(parse_byte_size("4m"), 4U << 20);
  EXPECT_EQ(parse_byte_size("256kib"), 256U << 10);
}

TEST(ParseByteSize, LargestValuesThatFit) {
  EXPECT_EQ(parse_byte_size("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_byte_size("17179869183G"), std::uint64_t{17179869183} << 30);
}

TEST(ParseByteSize, RefusesOverflow) {
  EXPECT_EQ(parse_byte_size("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse_byte_size("17179869184G"), std::nullopt);
  EXPECT_EQ(parse_byte_size("18014398509481984K"), std::nullopt);
}

TEST(ParseByteSize, RefusesZeroSignsAndOtherText) {
  for (const auto* text : {"", "0", "0K", "-1", "+1", "1.5M", " 1M", "1M ", "1 M", "M", "1T", "1MiBB", "4x"}) {
    EXPECT_EQ(parse_byte_size(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace hacoboot
