// A flood of phase events whose hpid is no launch the tool saw start (a
// process passing made-up hpids) while real boots run: the kernel side drops
// and counts them, and the real boots lose nothing.
#include <csignal>
#include <string>
#include <thread>

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

// A launch already past START_FORK when tracing begins: its later phases
// (the container's 11-21, the supervisor's 3-6) are counted, and it is not
// reported, not even as a boot seen only after its start.
TEST_F(FloodTest, ALaunchPastStartForkWhenTracingBeginsIsCountedNotReported) {
  constexpr auto kStartForkDelay = 5s;  // the supervisor sleeps after START_FORK: the tracer starts meanwhile
  const auto truth = new_file("truth.tsv");
  Process launch({launcher().string(), "--truth", truth.string(), "--phase-delay",
                  "2:" + std::to_string(std::chrono::milliseconds(kStartForkDelay).count()), "--", app().string()},
                 dir());
  const auto has = [&truth](const std::string& key) {
    return read_file(truth).find("\t" + key + "\t") != std::string::npos;
  };
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; !has("start_hi");) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the launch never passed START_SV";
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(100ms);  // START_FORK comes right after START_SV

  Process tracer(sampler_argv({"--format", "json", app().string()}), dir());
  ASSERT_TRUE(tracer.wait_for_text("Hit Ctrl-C", true, 90s)) << tracer.err();
  if (has("container_pid")) GTEST_SKIP() << "the tracer was not live before the launch's container was made";
  const auto later = run_process({launcher().string(), "--", app().string()}, dir(), 120s);
  ASSERT_TRUE(later.status.exited && later.status.code == 0) << later.status.describe() << "\n" << later.err;
  const auto first = launch.wait_or_kill(60s);
  ASSERT_TRUE(first.exited && first.code == 0) << first.describe() << "\n" << launch.err();
  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(60s);
  ASSERT_TRUE(status.exited && status.code == 0) << status.describe() << "\n" << tracer.err();

  const auto summary = nlohmann::json::parse(tracer.out());
  expect_boot_counts(summary, 1, 1, 1, 0);
  EXPECT_EQ(summary.value("boots", nlohmann::json::object()).value("unstarted", ~0ULL), 0U) << summary.dump(2);
  EXPECT_EQ(summary.value("untracked_phase_events", ~0ULL), 15U) << summary.dump(2);
}

}  // namespace
}  // namespace hacoboot::it
