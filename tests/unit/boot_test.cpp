#include "model/boot.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

namespace hacoboot {
namespace {

BootRecord boot_with(std::vector<PhaseMark> phases) {
  BootRecord boot;
  boot.start_ns = 1'000;
  boot.phases = std::move(phases);
  return boot;
}

// A phase lasts until the next one in time, whichever process passed it,
// even when the tracker recorded them out of time order.
TEST(BootRecordPhaseSpans, EachPhaseLastsUntilTheNextInTime) {
  const auto boot = boot_with({{1, 1'000}, {11, 1'700}, {2, 1'200}});
  const std::vector<PhaseSpan> expected{
      {.phase = 1, .begin_ns = 1'000, .end_ns = 1'200},
      {.phase = 2, .begin_ns = 1'200, .end_ns = 1'700},
      {.phase = 11, .begin_ns = 1'700, .end_ns = std::nullopt},
  };
  EXPECT_EQ(boot.phase_spans(), expected);
}

TEST(BootRecordPhaseSpans, NoPhaseNoSpan) {
  EXPECT_TRUE(boot_with({}).phase_spans().empty());
}

TEST(BootRecordExtent, FromTheEarliestToTheLatestOfPhasesAndMilestones) {
  // Phase 0 (the CLI) comes before the start; listen after the last phase.
  auto boot = boot_with({{1, 1'000}, {0, 900}, {11, 1'700}});
  boot.execve_ns = 1'500;
  boot.listen_ns = 2'400;
  EXPECT_EQ(boot.extent(), (TimeExtent{.first_ns = 900, .last_ns = 2'400}));
}

TEST(BootRecordExtent, AMilestoneAloneIsTheWholeExtent) {
  BootRecord boot;
  boot.listen_ns = 5'000;
  EXPECT_EQ(boot.extent(), (TimeExtent{.first_ns = 5'000, .last_ns = 5'000}));
}

TEST(BootRecordExtent, NothingSeenHasNoExtent) {
  EXPECT_EQ(BootRecord{}.extent(), std::nullopt);
}

}  // namespace
}  // namespace hacoboot
