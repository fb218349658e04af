#include "util/expected.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace hacoboot {
namespace {

Expected<std::string> cache_entry(bool present) {
  if (present) return std::string("kernel.btf");
  return Failure{"no such entry"};
}

TEST(Expected, AValueIsThereAndHasNoError) {
  const auto entry = cache_entry(true);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(*entry, "kernel.btf");
  EXPECT_EQ(entry->size(), 10U);
}

TEST(Expected, AFailureSaysWhyEvenForAStringValue) {
  const auto entry = cache_entry(false);
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error(), "no such entry");
}

TEST(Expected, AMoveOnlyValueIsMovedOut) {
  Expected<std::unique_ptr<int>> number = std::make_unique<int>(7);
  ASSERT_TRUE(number);
  const std::unique_ptr<int> taken = *std::move(number);
  EXPECT_EQ(*taken, 7);
}

TEST(Expected, VoidIsSuccessOrWhyNot) {
  const Expected<void> done;
  EXPECT_TRUE(done);
  const Expected<void> refused = Failure{"writable by others"};
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "writable by others");
}

}  // namespace
}  // namespace hacoboot
