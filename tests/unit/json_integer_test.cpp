#include "util/json_integer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace hacoboot {
namespace {

TEST(JsonInteger, AnIntegerInRangeIsRead) {
  EXPECT_EQ(json_integer<std::uint32_t>(nlohmann::json(4294967295U)), 4294967295U);
  EXPECT_EQ(json_integer<std::int64_t>(nlohmann::json(-5)), -5);
  EXPECT_EQ(json_integer<std::int32_t>(nlohmann::json(std::numeric_limits<std::int32_t>::min())),
            std::numeric_limits<std::int32_t>::min());
}

TEST(JsonInteger, OutOfRangeFloatOrTextIsNothing) {
  EXPECT_FALSE(json_integer<std::uint32_t>(nlohmann::json(4294967296ULL)));
  EXPECT_FALSE(json_integer<std::uint64_t>(nlohmann::json(-1)));
  EXPECT_FALSE(json_integer<std::int64_t>(nlohmann::json(std::numeric_limits<std::uint64_t>::max())));
  EXPECT_FALSE(json_integer<std::uint64_t>(nlohmann::json(1.5)));
  EXPECT_FALSE(json_integer<std::uint64_t>(nlohmann::json("7")));
}

// A negative integer below a narrower signed type's minimum is out of range
// too, not a narrowing cast.
TEST(JsonInteger, BelowANarrowSignedMinimumIsNothing) {
  EXPECT_FALSE(json_integer<std::int32_t>(nlohmann::json(std::int64_t{std::numeric_limits<std::int32_t>::min()} - 1)));
  EXPECT_FALSE(json_integer<std::int16_t>(nlohmann::json(-32769)));
  EXPECT_EQ(json_integer<std::int16_t>(nlohmann::json(-32768)), -32768);
}

}  // namespace
}  // namespace hacoboot
