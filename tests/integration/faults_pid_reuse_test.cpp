// Reused pids. Forced with /proc/sys/kernel/ns_last_pid (the pid the kernel
// allocated last): a launcher spawned right after setting it to P-3 makes
// driver P-2, CLI P-1 and supervisor P, unless another process on the host
// forks in between; each attempt is checked in the truth file and retried.
// Skipped where ns_last_pid cannot be written.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <thread>

#include "faults.hpp"

namespace hacoboot::it {
namespace {

class FaultPidReuseTest : public FaultTest {
 protected:
  static constexpr int kAttempts = 20;

  static bool set_last_pid(pid_t pid) {
    std::ofstream out("/proc/sys/kernel/ns_last_pid");
    out << pid;
    out.flush();
    return out.good();
  }

  static bool pid_in_use(pid_t pid) {  // threads and zombies included
    return ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0;
  }

  // The ns_last_pid after which the next two free pids (driver, CLI) come
  // just before hpid, so that the supervisor gets hpid.
  static pid_t last_pid_before(pid_t hpid) {
    int free = 0;
    for (pid_t p = hpid - 1; p > 300; --p) {
      if (!pid_in_use(p) && ++free == 2) return p - 1;
    }
    return hpid - 3;
  }

  // What happens to a launch that did not get the pid: it runs to its end
  // (a whole boot), or its supervisor is killed (a launch that would sleep
  // in a phase for minutes).
  enum class Missed : std::uint8_t { RunsToTheEnd, IsKilled };

  // Starts launches (launcher --truth <fresh file> ARGS -- app) until one's
  // supervisor has pid hpid. A launch that missed is ended before the next
  // try, so that its CLI and driver exit and free their pids. Every launch is
  // kept in launched; returns the index of the one that made it.
  std::optional<std::size_t> launch_with_hpid(
      std::uint32_t hpid, const std::vector<std::string>& args, Missed missed,
      std::vector<std::pair<std::filesystem::path, std::unique_ptr<Process>>>& launched) {
    attempts_.clear();
    const auto target = static_cast<pid_t>(hpid);
    // Something else on the host may take a pid in between: step the start
    // by one pid per miss, towards the target.
    pid_t last = last_pid_before(target);
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      if (pid_in_use(target)) {
        attempts_ += "pid in use; ";
        std::this_thread::sleep_for(50ms);
        continue;
      }
      const auto truth_path = new_file("truth-reuse.tsv");
      if (!set_last_pid(last)) {
        attempts_ = "/proc/sys/kernel/ns_last_pid not writable";
        return std::nullopt;
      }
      launched.emplace_back(truth_path, std::make_unique<Process>(launcher_argv(truth_path, args), dir()));
      auto& boot = *launched.back().second;
      std::optional<std::uint32_t> got;
      wait_until(
          [&] {
            got = only_hpid_with(read_truth(truth_path), "start_hi");
            return got.has_value() || !boot.running();
          },
          60s);
      attempts_ += "driver " + std::to_string(boot.pid()) + " supervisor " + (got ? std::to_string(*got) : "?") + "; ";
      if (got == hpid) return launched.size() - 1;
      if (got) last += *got > hpid ? -1 : 1;
      if (missed == Missed::IsKilled && got &&
          proc_text(static_cast<pid_t>(*got), "cmdline").find(truth_path.string()) != std::string::npos) {
        ::kill(static_cast<pid_t>(*got), SIGKILL);
      }
      boot.wait_or_kill(60s);
    }
    return std::nullopt;
  }

  std::string attempts_;  // what each launch got, for the skip message
};

TEST_F(FaultPidReuseTest, ASupervisorPidReusedAfterItsBootEndedIsANewBoot) {
  const auto rows_path = new_file("rows.tsv");
  auto tracer = start_tracer({"--format", "json", "--events", rows_path.string(), app().string()});
  ASSERT_FALSE(HasFailure());

  const auto first_truth = new_file("truth-first.tsv");
  const auto first = run_process(launcher_argv(first_truth, {}), dir(), 60s);
  ASSERT_TRUE(first.status.exited && first.status.code == 0) << first.err;
  const auto first_facts = parse_truth(read_file(first_truth));
  ASSERT_EQ(first_facts.size(), 1U);
  const auto hpid = first_facts.begin()->first;
  if (hpid < 400) GTEST_SKIP() << "pid " << hpid << " too close to the wrap-around";

  std::vector<std::pair<std::filesystem::path, std::unique_ptr<Process>>> launched;
  const auto reused = launch_with_hpid(hpid, {}, Missed::RunsToTheEnd, launched);
  for (auto& [truth, boot] : launched) boot->wait_or_kill(60s);
  for (auto& [truth, boot] : launched) expect_all_gone(truth.string());
  const auto summary = stop_tracer(*tracer);
  if (!reused) GTEST_SKIP() << "could not get pid " << hpid << " again: " << attempts_;
  std::cout << "[  FIGURE  ] supervisor pid " << hpid << " reused after " << launched.size()
            << " launch(es): " << attempts_ << '\n';

  const auto n = 1 + launched.size();
  expect_boot_counts(summary, n, n, n, 0);
  expect_nothing_left_tracked(summary);
  const auto second_facts = parse_truth(read_file(launched[*reused].first));
  std::vector<std::vector<BootRow>> with_hpid;
  for (const auto& [sequence, rows] : rows_by_boot(parse_boot_rows(read_file(rows_path)))) {
    if (rows.front().hpid == hpid) with_hpid.push_back(rows);
  }
  ASSERT_EQ(with_hpid.size(), 2U) << "two boots had supervisor pid " << hpid;
  EXPECT_EQ(static_cast<std::int64_t>(with_hpid[0].front().container_pid), first_facts.at(hpid).at("container_pid"));
  EXPECT_EQ(static_cast<std::int64_t>(with_hpid[1].front().container_pid), second_facts.at(hpid).at("container_pid"));
  for (const auto& rows : with_hpid) {
    EXPECT_TRUE(has_kind(rows, "execve") && has_kind(rows, "listen")) << "boot " << rows.front().boot;
  }
}

// Boot A's supervisor is killed after its fork; its container, asleep in
// phase 15, lives on. Boot B's supervisor then gets A's pid (so the same
// hpid), and is killed before it forks anything. A's container wakes up,
// execs and listens while B is live. B never had a container: nothing of A
// may be counted into B.
TEST_F(FaultPidReuseTest, AnOrphanedContainerIsNotCountedIntoTheBootThatReusedItsSupervisorsPid) {
  const auto rows_path = new_file("rows.tsv");
  auto tracer = start_tracer({"--format", "json", "--events", rows_path.string(), app().string()});
  ASSERT_FALSE(HasFailure());

  const auto a_truth = new_file("truth-a.tsv");
  // A's supervisor must be killed before A's container is past its setup,
  // which with the "done" pipe it cannot be: --no-done-pipe.
  Process a(launcher_argv(a_truth, {"--no-done-pipe", "--phase-delay", "3:600000", "--phase-delay", "15:5000"}), dir());
  std::optional<std::uint32_t> hpid;
  ASSERT_TRUE(wait_until(
      [&] {
        hpid = only_hpid_with(read_truth(a_truth), "container_pid");
        return hpid && asleep_in_nanosleep(static_cast<pid_t>(*hpid));
      },
      60s));
  ASSERT_NO_FATAL_FAILURE(signal_ours(static_cast<pid_t>(*hpid), SIGKILL, a_truth.string()));
  a.wait_or_kill(60s);  // CLI and driver end; the container sleeps on

  std::vector<std::pair<std::filesystem::path, std::unique_ptr<Process>>> launched;
  const auto reused = launch_with_hpid(*hpid, {"--phase-delay", "1:600000"}, Missed::IsKilled, launched);
  std::optional<std::int64_t> b_start_hi;
  if (reused) {
    const auto& b_truth = launched[*reused].first;
    b_start_hi = read_truth(b_truth).at(*hpid).at("start_hi");
    // A's container listens (its app records under A's truth file).
    EXPECT_TRUE(wait_until([&] { return read_truth(a_truth)[*hpid].count("listen_hi") > 0; }, 60s))
        << "A's container never listened";
    signal_ours(static_cast<pid_t>(*hpid), SIGKILL, b_truth.string());
    launched[*reused].second->wait_or_kill(60s);
  }
  expect_all_gone(a_truth.string());
  for (const auto& [truth, boot] : launched) expect_all_gone(truth.string());
  launched.clear();
  const auto summary = stop_tracer(*tracer);
  expect_nothing_left_tracked(summary);
  if (!reused) GTEST_SKIP() << "could not get pid " << *hpid << " again: " << attempts_;
  std::cout << "[  FIGURE  ] supervisor pid " << *hpid << " reused after " << attempts_ << '\n';
  const auto a_facts = read_truth(a_truth).at(*hpid);
  if (a_facts.at("exec_lo") < *b_start_hi) {
    GTEST_SKIP() << "A's container exec'd before B started: the overlap could not be arranged";
  }

  // B is the boot of hpid whose START_SV came after A's.
  std::vector<BootRow> b_rows;
  std::vector<BootRow> a_rows;
  for (const auto& [sequence, rows] : rows_by_boot(parse_boot_rows(read_file(rows_path)))) {
    if (rows.front().hpid != *hpid) continue;
    const bool is_b = std::any_of(rows.begin(), rows.end(), [&](const BootRow& row) {
      return row.kind == "phase" && row.phase == 1 && static_cast<std::int64_t>(row.t_ns) > a_facts.at("start_hi");
    });
    (is_b ? b_rows : a_rows) = rows;
  }
  ASSERT_FALSE(b_rows.empty()) << "no boot for B (the second supervisor with pid " << *hpid << ")";
  ASSERT_FALSE(a_rows.empty()) << "no boot for A";
  std::string b_listing;
  for (const auto& row : b_rows) {
    b_listing += row.kind + " " + (row.phase ? std::to_string(*row.phase) : "") + " container_pid " +
                 std::to_string(row.container_pid) + "\n";
  }
  EXPECT_FALSE(has_kind(b_rows, "execve")) << "A's container's execve was counted into B:\n" << b_listing;
  EXPECT_FALSE(has_kind(b_rows, "listen")) << "A's container's listen was counted into B:\n" << b_listing;
  EXPECT_EQ(b_rows.front().container_pid, 0U) << "B never forked a container:\n" << b_listing;
  EXPECT_EQ(static_cast<std::int64_t>(a_rows.front().container_pid), a_facts.at("container_pid"));
  std::cout << "[  FIGURE  ] boot A (hpid " << *hpid << ") rows: execve=" << has_kind(a_rows, "execve")
            << " listen=" << has_kind(a_rows, "listen") << "; boot B rows: execve=" << has_kind(b_rows, "execve")
            << " listen=" << has_kind(b_rows, "listen") << '\n';
}

}  // namespace
}  // namespace hacoboot::it
