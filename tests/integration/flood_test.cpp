// A flood of phase events whose hpid is no launch the tool saw start (a
// process passing made-up hpids) while real boots run: the kernel side drops
// and counts them, and the real boots lose nothing.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <string>

#include "faults.hpp"
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
//
// The supervisor is held between START_FORK and its fork for as long as the
// tracer takes to start: stopped (SIGSTOP) while asleep in its delay after
// START_FORK, the only sleep it makes before the fork, and let go (SIGCONT)
// once the tracer is live.
TEST_F(FloodTest, ALaunchPastStartForkWhenTracingBeginsIsCountedNotReported) {
  // The time this test has to find the supervisor asleep and stop it.
  constexpr auto kStartForkDelay = 5s;
  const auto truth = new_file("truth.tsv");
  Process launch({launcher().string(), "--truth", truth.string(), "--phase-delay",
                  "2:" + std::to_string(std::chrono::milliseconds(kStartForkDelay).count()), "--", app().string()},
                 dir());
  std::optional<std::uint32_t> hpid;
  bool too_late = false;
  ASSERT_TRUE(wait_until(
      [&] {
        const auto facts = read_truth(truth);
        hpid = only_hpid_with(facts, "start_hi");
        if (!hpid) return !launch.running();
        too_late = facts.at(*hpid).contains("container_pid");
        return too_late || asleep_in_nanosleep(static_cast<pid_t>(*hpid));
      },
      60s))
      << "the supervisor never slept after START_FORK\n"
      << launch.err();
  ASSERT_TRUE(hpid) << "the launch ended before START_SV\n" << launch.err();
  const auto supervisor = static_cast<pid_t>(*hpid);
  if (!too_late) {
    ASSERT_NO_FATAL_FAILURE(signal_ours(supervisor, SIGSTOP, launcher().string()));
    ASSERT_TRUE(wait_until(
        [&] {
          const auto stat = proc_stat(supervisor);
          return !stat || stat->state == 'T';
        },
        30s))
        << "the supervisor did not stop";
    // Stopped in the middle of its delay, its syscall is still the sleep;
    // past it, the sleep ended before the stop came.
    too_late = !asleep_in_nanosleep(supervisor);
  }
  if (too_late) {
    // Only a test thread kept off the CPU for most of kStartForkDelay.
    const std::string lost = "the supervisor's delay after START_FORK was over before the test could hold it";
    if (bpf_required()) FAIL() << lost << " (HACOBOOT_REQUIRE_BPF=1: not skipping)";
    GTEST_SKIP() << lost;
  }

  Process tracer(sampler_argv({"--format", "json", app().string()}), dir());
  ASSERT_TRUE(tracer.wait_for_text("Hit Ctrl-C", true, 90s)) << tracer.err();
  ASSERT_FALSE(read_truth(truth).at(*hpid).contains("container_pid")) << "the held supervisor forked";
  ASSERT_EQ(::kill(supervisor, SIGCONT), 0) << std::strerror(errno);
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
