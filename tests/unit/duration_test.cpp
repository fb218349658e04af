#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "cli/duration.hpp"

namespace hacoboot {
namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

TEST(ParseDuration, EveryUnit) {
  EXPECT_EQ(parse_duration("100ns"), nanoseconds(100));
  EXPECT_EQ(parse_duration("250us"), nanoseconds(250us));
  EXPECT_EQ(parse_duration("500ms"), nanoseconds(500ms));
  EXPECT_EQ(parse_duration("30s"), nanoseconds(30s));
  EXPECT_EQ(parse_duration("5m"), nanoseconds(5min));
  EXPECT_EQ(parse_duration("1h"), nanoseconds(1h));
}

TEST(ParseDuration, BareNumberIsSeconds) {
  EXPECT_EQ(parse_duration("30"), nanoseconds(30s));
  EXPECT_EQ(parse_duration("1"), nanoseconds(1s));
}

TEST(ParseDuration, LargestValuesThatFit) {
  EXPECT_EQ(parse_duration("9223372036854775807ns"), nanoseconds(9223372036854775807LL));
  EXPECT_EQ(parse_duration("2562047h"), nanoseconds(std::chrono::hours(2562047)));
}

TEST(ParseDuration, RejectsZeroAndNegative) {
  for (const char* text : {"0", "0s", "0ms", "-5", "-5s", "-1ns"}) {
    EXPECT_EQ(parse_duration(text), std::nullopt) << text;
  }
}

TEST(ParseDuration, RejectsUnknownUnitsAndMissingNumbers) {
  for (const char* text : {"5x", "5 s", "5S", "5sec", "5ms5", "ms", "s", "", "1.5s", " 5s", "+5s", "5M"}) {
    EXPECT_EQ(parse_duration(text), std::nullopt) << '"' << text << '"';
  }
}

TEST(ParseDuration, RejectsOverflow) {
  for (const char* text : {"9223372036854775808ns", "99999999999999999999", "9223372037s", "2562048h", "153722868m"}) {
    EXPECT_EQ(parse_duration(text), std::nullopt) << text;
  }
}

}  // namespace
}  // namespace hacoboot
