#pragma once
// Golden-file comparison with a readable line diff on mismatch.
//   EXPECT_TRUE(matches_golden("summary.table.txt", text));
// HACOBOOT_UPDATE_GOLDEN=1 rewrites the file from `actual` (then review it
// with git diff): the test still fails that run, so an update is never silent.

#include <gtest/gtest.h>

#include <string>

namespace hacoboot::test {

::testing::AssertionResult matches_golden(const std::string& name, const std::string& actual);

// Line diff of two texts ("-" expected only, "+" actual only), for messages.
std::string line_diff(const std::string& expected, const std::string& actual);

}  // namespace hacoboot::test
