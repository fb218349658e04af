#include "util/expected.hpp"

#include <gtest/gtest.h>

#include <cstdint>
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

// A typed error: the kind a caller branches on, and the words it prints.
enum class LookupError : std::uint8_t { Missing, Unreadable };
struct LookupFailure {
  LookupError kind;
  std::string why;
};

Expected<int, LookupFailure> cached_id(int state) {
  if (state == 0) return 42;
  if (state == 1) return LookupFailure{.kind = LookupError::Missing, .why = "no cache file"};
  return LookupFailure{.kind = LookupError::Unreadable, .why = "holds no ids"};
}

// What a caller of cached_id does with each kind: the point of the type.
std::string use(const Expected<int, LookupFailure>& id) {
  if (id) return "id " + std::to_string(*id);
  switch (id.error().kind) {
    case LookupError::Missing: return "look it up (" + id.error().why + ")";
    case LookupError::Unreadable: return "remove it (" + id.error().why + ")";
  }
  return "";
}

TEST(Expected, ATypedErrorTellsTheCallerWhichWayItFailed) {
  EXPECT_EQ(use(cached_id(0)), "id 42");
  EXPECT_EQ(use(cached_id(1)), "look it up (no cache file)");
  EXPECT_EQ(use(cached_id(2)), "remove it (holds no ids)");
}

Expected<void, LookupFailure> remove_cache(bool refused) {
  if (refused) return LookupFailure{.kind = LookupError::Unreadable, .why = "read-only"};
  return {};
}

TEST(Expected, VoidWithATypedErrorToo) {
  EXPECT_TRUE(remove_cache(false));
  const auto refused = remove_cache(true);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, LookupError::Unreadable);
  EXPECT_EQ(refused.error().why, "read-only");
}

// A typed error passes up a frame unchanged, as the tracer's start does.
Expected<std::string, LookupFailure> described_id(int state) {
  const auto id = cached_id(state);
  if (!id) return id.error();
  return "id " + std::to_string(*id);
}

TEST(Expected, ATypedErrorIsPassedOnWhole) {
  EXPECT_EQ(*described_id(0), "id 42");
  const auto missing = described_id(1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, LookupError::Missing);
  EXPECT_EQ(missing.error().why, "no cache file");
}

}  // namespace
}  // namespace hacoboot
