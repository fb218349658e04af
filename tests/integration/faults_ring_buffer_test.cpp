// Ring buffer overflow: every event is delivered or counted as lost.
#include <signal.h>

#include <fstream>
#include <iostream>

#include "faults.hpp"

namespace hacoboot::it {
namespace {

class FaultRingBufferTest : public FaultTest {
 protected:
  static constexpr std::uint64_t kBoots = 50;

  // The invariant: with nothing lost every boot is complete; otherwise the
  // loss is reported and explains every missing milestone (one lost event
  // hides at most one start, one execve or one listen). Attribution must
  // stay right whatever was lost.
  void expect_delivered_or_counted(const nlohmann::json& summary, const std::string& err,
                                   const std::vector<BootRow>& rows, const Truth& truth, const std::string& label) {
    const auto lost = summary.value("lost_events", kAbsent);
    ASSERT_NE(lost, kAbsent) << summary.dump(2);
    const auto started = count_of(summary, "started");
    const auto execve = count_of(summary, "execve");
    const auto listen = count_of(summary, "listen");
    RecordProperty(label + "_lost_events", std::to_string(lost));
    std::cout << "[  FIGURE  ] " << label << ": lost_events=" << lost << " started=" << started << " execve=" << execve
              << " listen=" << listen << " incomplete=" << count_of(summary, "incomplete") << '\n';
    ASSERT_LE(started, kBoots) << "more boots than were launched\n" << summary.dump(2);
    ASSERT_LE(execve, started);
    ASSERT_LE(listen, started);
    if (lost == 0) {
      expect_boot_counts(summary, kBoots, kBoots, kBoots, 0);
    } else {
      EXPECT_NE(err.find("figures may be incomplete"), std::string::npos)
          << "events were lost but stderr does not say the figures may be incomplete: " << err;
      const auto missing = (kBoots - started) + (started - execve) + (started - listen);
      EXPECT_LE(missing, lost) << "milestones missing without a lost event to explain them\n" << summary.dump(2);
    }
    EXPECT_EQ(summary.value("tracked_at_exit", kAbsent), 0U);

    std::size_t unknown = 0;
    std::size_t wrong_container = 0;
    for (const auto& [sequence, boot] : rows_by_boot(rows)) {
      const auto fact = truth.find(boot.front().hpid);
      if (fact == truth.end() || fact->second.count("container_pid") == 0) {
        ++unknown;
        continue;
      }
      if (boot.front().container_pid != 0 &&
          static_cast<std::int64_t>(boot.front().container_pid) != fact->second.at("container_pid")) {
        ++wrong_container;
      }
    }
    EXPECT_EQ(unknown, 0U) << "boots whose hpid is no supervisor of the launcher";
    EXPECT_EQ(wrong_container, 0U) << "boots with another boot's container";
  }
};

TEST_F(FaultRingBufferTest, OnePageRingBufferUnderABurst) {
  const auto traced =
      trace_boots({"-n", std::to_string(kBoots), "-j", "25"}, {"--hold-ms", "0"}, {"--ringbuf-size", "4K"});
  ASSERT_FALSE(HasFailure());
  expect_delivered_or_counted(traced.summary, traced.result.err, traced.rows, traced.truth, "burst");
}

// The reader is stopped (SIGSTOP) for the whole burst: the one-page ring
// buffer must overflow, and the kernel side count what it drops.
TEST_F(FaultRingBufferTest, OnePageRingBufferWithTheReaderStopped) {
  const auto truth_path = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  const auto go = dir() / "go";
  const auto done = dir() / "done";
  const auto run = wait_for_file_command(go) + "; " +
                   launcher_command({"--truth", truth_path.string(), "-n", std::to_string(kBoots), "-j", "25"}) +
                   "; touch " + shell_quote(done.string());
  Process tracer(sampler_argv({"--ringbuf-size", "4K", "--format", "json", "--events", rows_path.string(), "--run", run,
                               app().string()}),
                 dir());
  // The --run command starts once every probe is live.
  ASSERT_TRUE(wait_until([&] { return others_mentioning(go.string(), tracer.pid()) > 0 || !tracer.running(); }, 60s));
  ASSERT_TRUE(tracer.running()) << tracer.err();
  tracer.send_signal(SIGSTOP);
  std::ofstream(go.string()).put('\n');
  const bool finished = wait_until([&] { return std::filesystem::exists(done); }, 300s);
  tracer.send_signal(SIGCONT);
  ASSERT_TRUE(finished) << "the boots never finished";
  const auto status = tracer.wait_or_kill(120s);
  ASSERT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();

  const auto summary = nlohmann::json::parse(tracer.out());
  const auto truth = parse_truth(read_file(truth_path));
  expect_delivered_or_counted(summary, tracer.err(), parse_boot_rows(read_file(rows_path)), truth, "reader_stopped");
}

}  // namespace
}  // namespace hacoboot::it
