// What the summary counts when the live run ends: boots cut off by the end of
// tracing (-n reached, --duration over) are in flight at stop, not
// incomplete; warm-up boots are none of -n's. What failed boots say is the
// replay tier's (tests/unit/replay_outputs_test.cpp).
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
