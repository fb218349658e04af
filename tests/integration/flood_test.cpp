// A flood of phase events whose hpid is no launch the tool saw start (a
// process passing made-up hpids) while real boots run: the kernel side drops
// and counts them, and the real boots lose nothing.
#include <string>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

using FloodTest = IntegrationTest;

TEST_F(FloodTest, PhasesOfUnknownLaunchesAreCountedAndTheRealBootsAreWhole) {
  constexpr std::uint64_t kFlood = 200'000;
  constexpr std::uint64_t kBoots = 5;
  const auto flood = shell_command({launcher().string(), "--flood", std::to_string(kFlood)});
  const auto traced = trace_boots({"-n", std::to_string(kBoots)}, {}, {}, flood);
  ASSERT_FALSE(HasFailure());

  EXPECT_EQ(traced.summary.value("untracked_phase_events", ~0ULL), kFlood) << traced.summary.dump(2);
  expect_boot_counts(traced.summary, kBoots, kBoots, kBoots, 0);
  EXPECT_EQ(traced.summary.value("boots", nlohmann::json::object()).value("unstarted", ~0ULL), 0U)
      << "a made-up hpid became a boot\n"
      << traced.summary.dump(2);
  EXPECT_EQ(traced.summary.value("lost_events", ~0ULL), 0U);
  expect_boots_match_truth(traced, kBoots);
  EXPECT_NE(traced.result.err.find(std::to_string(kFlood) + " phase events ignored"), std::string::npos)
      << traced.result.err;
}

}  // namespace
}  // namespace hacoboot::it
