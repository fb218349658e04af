// What the summary counts: boots cut off by the end of tracing are in flight
// at stop, not incomplete; warm-up boots are none of -n's; and failed boots
// say where they failed and how their container ended.
#include <algorithm>
#include <regex>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

std::string status_and_stderr(const ProcessResult& result) {
  return result.status.describe() + "\n" + result.err;
}

class CountingTest : public IntegrationTest {
 protected:
  // Traces `run` (a shell command) in `format` with `sampler_args`; its
  // boots may fail, so the command's status is not the test's.
  ProcessResult trace(const std::string& run, const std::vector<std::string>& sampler_args,
                      const std::string& format = "json") {
    std::vector<std::string> args{"--run", run + "; true", "--format", format};
    args.insert(args.end(), sampler_args.begin(), sampler_args.end());
    args.push_back(app().string());
    auto result = run_sampler(args);
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << status_and_stderr(result);
    return result;
  }

  nlohmann::json trace_json(const std::string& run, const std::vector<std::string>& sampler_args = {}) {
    const auto result = trace(run, sampler_args);
    try {
      return nlohmann::json::parse(result.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unreadable summary: " << e.what() << '\n' << status_and_stderr(result);
      return {};
    }
  }
};

nlohmann::json boots_of(const nlohmann::json& summary) {
  return summary.value("boots", nlohmann::json::object());
}

// -n 3 while two slow boots are still setting up: those two are cut off by
// the stop, which is no failure of theirs. The fast boots begin once both
// slow ones have passed START_SV (their truth's start_hi lines).
TEST_F(CountingTest, CountReachedWithBootsStillBootingReportsThemInFlightNotIncomplete) {
  const auto slow_truth = new_file("slow-truth.tsv");
  const auto slow =
      launcher_command({"--truth", slow_truth.string(), "-n", "2", "-j", "2", "--phase-delay", "13:20000"});
  const auto fast = launcher_command({"-n", "3"});
  const auto summary =
      trace_json("{ " + slow + " & } ; " + wait_for_truth_command(slow_truth, "start_hi", 2) + "; " + fast + "; wait",
                 {"-n", "3"});
  ASSERT_FALSE(HasFailure());
  const auto boots = boots_of(summary);
  EXPECT_EQ(boots.value("started", ~0ULL), 5U) << summary.dump(2);
  EXPECT_EQ(boots.value("listen", ~0ULL), 3U) << summary.dump(2);
  EXPECT_EQ(boots.value("in_flight", ~0ULL), 2U) << summary.dump(2);
  EXPECT_EQ(boots.value("incomplete", ~0ULL), 0U) << summary.dump(2);
  EXPECT_EQ(boots.value("failures", nlohmann::json()), nlohmann::json::array()) << summary.dump(2);
}

TEST_F(CountingTest, WarmupBootsDoNotCountTowardsCount) {
  // Eight boots one after the other: -n 2 past 3 warm-up boots stops after the fifth.
  const auto summary = trace_json(launcher_command({"-n", "8"}), {"-n", "2", "--warmup", "3"});
  ASSERT_FALSE(HasFailure());
  const auto boots = boots_of(summary);
  EXPECT_EQ(boots.value("listen", ~0ULL), 2U) << summary.dump(2);
  EXPECT_EQ(boots.value("started", ~0ULL) - boots.value("in_flight", 0ULL), 2U) << summary.dump(2);
  EXPECT_EQ(boots.value("incomplete", ~0ULL), 0U) << summary.dump(2);
  EXPECT_EQ(summary.value("metrics", nlohmann::json::object())
                .value("listen", nlohmann::json::object())
                .value("count", ~0ULL),
            2U);
}

// A boot whose container dies where a real Haconiwa boot's died at
// pivot_root: after step 17, before passing 18.
TEST_F(CountingTest, ContainerExitingAfterStep17IsOneFailureLineInJson) {
  const auto summary = trace_json(launcher_command({"-n", "2", "--fail-at", "18"}));
  ASSERT_FALSE(HasFailure());
  const auto boots = boots_of(summary);
  EXPECT_EQ(boots.value("started", ~0ULL), 2U) << summary.dump(2);
  EXPECT_EQ(boots.value("incomplete", ~0ULL), 2U) << summary.dump(2);
  EXPECT_EQ(boots.value("in_flight", ~0ULL), 0U) << summary.dump(2);
  const auto failures = boots.value("failures", nlohmann::json::array());
  ASSERT_EQ(failures.size(), 1U) << summary.dump(2);
  const auto& group = failures.at(0);
  EXPECT_EQ(group.value("boots", 0), 2);
  EXPECT_EQ(group.value("last_phase", 0), 17);
  EXPECT_EQ(group.value("last_step", ""), "CONTAINER_UID_MAPPING_SETUP");
  EXPECT_EQ(group.value("process", ""), "container");
  EXPECT_EQ(group.value("exit_status", -1), 1);
  EXPECT_FALSE(group.contains("signal"));
  EXPECT_EQ(group.value("description", ""), "container exited 1 after 17 CONTAINER_UID_MAPPING_SETUP");
}

TEST_F(CountingTest, ContainerExitingAfterStep17IsOneFailureLineInTheTable) {
  const auto result = trace(launcher_command({"-n", "1", "--fail-at", "18:3"}), {}, "table");
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(result.out.find("Boots: 1 started, 0 reached execve, 0 reached listen, 1 incomplete\n"
                            "1 incomplete: container exited 3 after 17 CONTAINER_UID_MAPPING_SETUP\n"),
            std::string::npos)
      << result.out;
}

// The container is no pid namespace's init here: it can kill itself.
TEST_F(CountingTest, ContainerKilledByASignalSaysWhichSignal) {
  const auto summary = trace_json(launcher_command({"-n", "1", "--no-namespaces", "--fail-at", "18:KILL"}));
  ASSERT_FALSE(HasFailure());
  const auto failures = boots_of(summary).value("failures", nlohmann::json::array());
  ASSERT_EQ(failures.size(), 1U) << summary.dump(2);
  const auto& group = failures.at(0);
  EXPECT_EQ(group.value("signal", 0), 9);
  EXPECT_FALSE(group.contains("exit_status"));
  EXPECT_EQ(group.value("description", ""),
            "container killed by signal 9 (SIGKILL) after 17 CONTAINER_UID_MAPPING_SETUP");
}

TEST_F(CountingTest, SupervisorDyingBeforeItsForkIsTheFailedProcess) {
  const auto summary = trace_json(launcher_command({"-n", "1", "--fail-at", "2:SIGTERM"}));
  ASSERT_FALSE(HasFailure());
  const auto failures = boots_of(summary).value("failures", nlohmann::json::array());
  ASSERT_EQ(failures.size(), 1U) << summary.dump(2);
  EXPECT_EQ(failures.at(0).value("description", ""), "supervisor killed by signal 15 (SIGTERM) after 1 START_SV");
}

// --duration over while the boot sleeps in its setup: in flight at stop.
TEST_F(CountingTest, DurationOverMidBootIsInFlightAtStop) {
  const auto result = trace(launcher_command({"-n", "1", "--phase-delay", "13:20000"}), {"--duration", "2s"}, "table");
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(result.out.find("Boots: 1 started, 0 reached execve, 0 reached listen, 0 incomplete, 1 in flight at stop\n"
                            "execve of: "),
            std::string::npos)
      << result.out;
}

}  // namespace
}  // namespace hacoboot::it
