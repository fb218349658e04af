// Checks of a JSON summary that the integration tests (live runs) and the
// replay tier (recordings) both make; header-only, since only the test
// executables link GoogleTest.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>

namespace hacoboot::test {

// Summary counts as JSON boots.{started,execve,listen,incomplete}.
inline void expect_boot_counts(const nlohmann::json& summary, std::uint64_t started, std::uint64_t execve,
                               std::uint64_t listen, std::uint64_t incomplete) {
  const auto boots = summary.value("boots", nlohmann::json::object());
  EXPECT_EQ(boots.value("started", ~0ULL), started) << summary.dump(2);
  EXPECT_EQ(boots.value("execve", ~0ULL), execve) << summary.dump(2);
  EXPECT_EQ(boots.value("listen", ~0ULL), listen) << summary.dump(2);
  EXPECT_EQ(boots.value("incomplete", ~0ULL), incomplete) << summary.dump(2);
}

}  // namespace hacoboot::test
