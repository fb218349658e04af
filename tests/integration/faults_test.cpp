// Reliability: boots killed half-way, a ring buffer too small for the burst,
// stop signals, a closed output pipe, concurrent tracers, reused pids, and a
// load test (names starting with Load, so that it can be filtered).
//
// No assertion here depends on how fast anything runs: every wait is for an
// observable state (a truth-file line, a process asleep in nanosleep or
// blocked in write, a process gone) with a generous timeout as a hang guard.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "fixture.hpp"

extern char** environ;

namespace hacoboot::it {
namespace {

constexpr std::uint64_t kAbsent = ~0ULL;

std::uint64_t count_of(const nlohmann::json& summary, const char* key) {
  return summary.value("boots", nlohmann::json::object()).value(key, kAbsent);
}

// Polls until done() holds; false when the guard ran out first.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds guard) {
  const auto deadline = std::chrono::steady_clock::now() + guard;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// CLOCK_MONOTONIC, as the truth file and the tracer's t_ns.
std::int64_t monotonic_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Truth read_truth(const std::filesystem::path& path) {
  try {
    return parse_truth(read_file(path));
  } catch (const std::exception&) {
    return {};  // not written yet
  }
}

// The supervisor (hpid) that recorded `key`, if exactly one did.
std::optional<std::uint32_t> only_hpid_with(const Truth& truth, const std::string& key) {
  std::optional<std::uint32_t> found;
  for (const auto& [hpid, facts] : truth) {
    if (facts.count(key) == 0) continue;
    if (found) return std::nullopt;
    found = hpid;
  }
  return found;
}

std::string proc_text(pid_t pid, const char* file) {
  return read_file(std::filesystem::path("/proc") / std::to_string(pid) / file);
}

// First two fields of /proc/PID/syscall: the syscall a blocked task sits in
// and its first argument ("1 0x1 ..." is write(1, ...) on x86-64).
std::pair<long, std::string> current_syscall(pid_t pid) {
  std::istringstream fields(proc_text(pid, "syscall"));
  long number = -1;
  std::string first_arg;
  if (!(fields >> number)) return {-1, ""};
  fields >> first_arg;
  return {number, first_arg};
}

// Whether pid holds a BPF map fd: libbpf creates the maps before it loads
// the programs and attaches them.
bool holds_bpf_map(pid_t pid) {
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator(std::filesystem::path("/proc") / std::to_string(pid) / "fd", ec)) {
    if (std::filesystem::read_symlink(fd.path(), ec) == "anon_inode:bpf-map") return true;
  }
  return false;
}

char proc_state(pid_t pid) {
  const auto stat = proc_stat(pid);
  return stat ? stat->state : '?';
}

bool asleep_in_nanosleep(pid_t pid) {
  const auto [number, arg] = current_syscall(pid);
#ifdef SYS_nanosleep
  if (number == SYS_nanosleep) return true;
#endif
  return number == SYS_clock_nanosleep;
}

// Exited: no such process, or a zombie no one has reaped yet.
bool has_exited(pid_t pid) {
  const auto stat = proc_stat(pid);
  return !stat || stat->state == 'Z' || stat->state == 'X';
}

// Live (not zombie) processes of process group `group`.
std::vector<pid_t> live_members_of(pid_t group) {
  std::vector<pid_t> members;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const auto stat = proc_stat(pid);
    if (stat && stat->pgrp == group && !has_exited(pid)) members.push_back(pid);
  }
  return members;
}

// Whether `signal` was sent to the process and not yet taken (ShdPnd in
// /proc/PID/status).
bool signal_pending(pid_t pid, int signal) {
  const auto status = proc_text(pid, "status");
  const auto at = status.find("ShdPnd:");
  if (at == std::string::npos) return false;
  const auto pending = std::stoull(status.substr(at + std::string_view("ShdPnd:").size()), nullptr, 16);
  return ((pending >> (signal - 1)) & 1U) != 0;
}

bool blocked_writing_stdout(pid_t pid) {
  const auto [number, fd] = current_syscall(pid);
  return (number == SYS_write || number == SYS_writev) && fd == "0x1";
}

// Processes other than the tracer (whose own argv holds the --run command)
// that mention marker: the --run command and what it started. Children the
// tracer forks for itself (they carry its argv until they exec) are not.
std::size_t others_mentioning(const std::string& marker, pid_t tracer) {
  const std::string tracer_argv0 = HACOBOOT_SAMPLER_PATH;
  const auto pids = processes_mentioning(marker);
  return static_cast<std::size_t>(std::count_if(pids.begin(), pids.end(), [&](pid_t p) {
    if (p == tracer) return false;
    const auto cmdline = proc_text(p, "cmdline");
    return cmdline.substr(0, cmdline.find('\0')) != tracer_argv0;
  }));
}

// Sends signal to pid only if its command line shows it is one of ours.
void signal_ours(pid_t pid, int signal, const std::string& marker) {
  const auto cmdline = proc_text(pid, "cmdline");
  ASSERT_NE(cmdline.find(marker), std::string::npos)
      << "pid " << pid << " is not ours (no '" << marker << "' in its command line): not signalling it";
  ASSERT_EQ(::kill(pid, signal), 0) << "kill " << pid << ": " << std::strerror(errno);
}

// ---------------------------------------------------------------------------

class FaultTest : public IntegrationTest {
 protected:
  // The tracer without --run: traces until a signal (the duration is only a
  // hang guard). Returns once its probes are live.
  std::unique_ptr<Process> start_tracer(const std::vector<std::string>& args, StdoutTo stdout_to = StdoutTo::File) {
    std::vector<std::string> all{"--duration", "900s"};
    all.insert(all.end(), args.begin(), args.end());
    auto tracer = std::make_unique<Process>(sampler_argv(all), dir(), stdout_to);
    if (!tracer->wait_for_text("Hit Ctrl-C", true, 60s)) {
      ADD_FAILURE() << "the tracer never started tracing\nstderr: " << tracer->err();
    }
    return tracer;
  }

  // Ends the tracer with signal; the JSON summary it printed.
  nlohmann::json stop_tracer(Process& tracer, int signal = SIGINT) {
    tracer.send_signal(signal);
    const auto status = tracer.wait_or_kill(60s);
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
    try {
      return nlohmann::json::parse(tracer.out());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "no JSON summary on stdout (" << e.what() << "): " << tracer.out();
      return nlohmann::json::object();
    }
  }

  // Waits until no live process mentions marker (command line or environment).
  static void expect_all_gone(const std::string& marker) {
    EXPECT_TRUE(wait_until([&] { return processes_mentioning(marker).empty(); }, 30s))
        << processes_mentioning(marker).size() << " processes mentioning " << marker << " still alive";
  }

  // The tracer's BPF programs and links, once it holds all of them.
  static BpfIds held_bpf_ids(pid_t pid) {
    BpfIds ids;
    wait_until(
        [&] {
          ids = bpf_ids_held_by(pid);
          return ids.programs.size() >= kFewestPrograms && !ids.links.empty();
        },
        60s);
    EXPECT_GE(ids.programs.size(), kFewestPrograms) << "the tracer does not hold its programs";
    EXPECT_FALSE(ids.links.empty()) << "the tracer holds no BPF link";
    return ids;
  }

  // The kernel frees the links when the last fd goes: none of ids may stay.
  void expect_detached(const BpfIds& ids) {
    std::vector<std::string> present;
    wait_until(
        [&] {
          present = bpf_objects_still_present(ids, dir());
          return present.empty();
        },
        20s);
    std::string listing;
    for (const auto& p : present) listing += p + "\n";
    EXPECT_TRUE(present.empty()) << "still in the kernel after the tracer exited:\n" << listing;
  }

  static void expect_nothing_left_tracked(const nlohmann::json& summary) {
    EXPECT_EQ(summary.value("tracked_at_exit", kAbsent), 0U) << summary.dump(2);
    EXPECT_EQ(count_of(summary, "unstarted"), 0U) << summary.dump(2);
  }

  // `launcher --truth TRUTH ARGS -- app`, as argv.
  std::vector<std::string> launcher_argv(const std::filesystem::path& truth, const std::vector<std::string>& args) {
    std::vector<std::string> argv{launcher().string(), "--truth", truth.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string()});
    return argv;
  }
};

// Rows of the one boot in rows (fails when there is not exactly one).
std::vector<BootRow> single_boot(const std::vector<BootRow>& rows) {
  const auto boots = rows_by_boot(rows);
  EXPECT_EQ(boots.size(), 1U) << "boots in the --events rows";
  return boots.empty() ? std::vector<BootRow>{} : boots.begin()->second;
}

bool has_kind(const std::vector<BootRow>& rows, const std::string& kind) {
  return std::any_of(rows.begin(), rows.end(), [&](const BootRow& r) { return r.kind == kind; });
}

std::set<std::int64_t> phases_of(const std::vector<BootRow>& rows) {
  std::set<std::int64_t> phases;
  for (const auto& r : rows) {
    if (r.phase) phases.insert(*r.phase);
  }
  return phases;
}

// ---------------------------------------------------------------------------
// Boots killed half-way
// ---------------------------------------------------------------------------
// One launch traced with --events, a process of it SIGKILLed while asleep in
// a --phase-delay, the launch left to end, the tracer stopped.
class FaultKillTest : public FaultTest {
 protected:
  enum class Victim : std::uint8_t { Supervisor, Container };

  struct KilledLaunch {
    std::uint32_t hpid = 0;
    std::int64_t container = 0;  // 0: killed before its fork
    std::int64_t killed_at_ns = 0;
    nlohmann::json summary;
    std::vector<BootRow> rows;
    Truth truth;
  };

  // `ready_key`: the truth key the supervisor writes once the victim's delay
  // is near (start_hi before the fork, container_pid after it).
  void kill_mid_boot(const std::vector<std::string>& launcher_args, const char* ready_key, Victim victim,
                     KilledLaunch& out) {
    const auto truth_path = new_file("truth.tsv");
    const auto rows_path = new_file("rows.tsv");
    auto tracer = start_tracer({"--format", "json", "--events", rows_path.string(), app().string()});
    ASSERT_FALSE(HasFailure());
    Process boot(launcher_argv(truth_path, launcher_args), dir());
    pid_t target = 0;
    ASSERT_TRUE(wait_until(
        [&] {
          const auto truth = read_truth(truth_path);
          const auto hpid = only_hpid_with(truth, ready_key);
          if (!hpid) return false;
          out.hpid = *hpid;
          const auto& facts = truth.at(*hpid);
          out.container = facts.count("container_pid") > 0 ? facts.at("container_pid") : 0;
          target = static_cast<pid_t>(victim == Victim::Supervisor ? out.hpid : out.container);
          return target > 0 && asleep_in_nanosleep(target);
        },
        60s))
        << "the " << (victim == Victim::Supervisor ? "supervisor" : "container") << " never reached its delay";
    out.killed_at_ns = monotonic_now_ns();
    ASSERT_NO_FATAL_FAILURE(signal_ours(target, SIGKILL, launcher().string()));
    boot.wait_or_kill(60s);
    expect_all_gone(truth_path.string());
    // An orphaned container is looked for by pid too: in the middle of its
    // execve its /proc cmdline and environ read empty for a moment.
    if (out.container > 0) {
      EXPECT_TRUE(wait_until([&] { return has_exited(static_cast<pid_t>(out.container)); }, 30s))
          << "container " << out.container << " still running";
    }
    out.summary = stop_tracer(*tracer);
    out.rows = parse_boot_rows(read_file(rows_path));
    out.truth = parse_truth(read_file(truth_path));
  }
};

TEST_F(FaultKillTest, SupervisorKilledBeforeForkIsIncomplete) {
  // The supervisor sleeps right after START_SV (the truth's start lines), before its fork.
  KilledLaunch killed;
  ASSERT_NO_FATAL_FAILURE(kill_mid_boot({"--phase-delay", "1:600000"}, "start_hi", Victim::Supervisor, killed));

  expect_boot_counts(killed.summary, 1, 0, 0, 1);
  expect_nothing_left_tracked(killed.summary);
  const auto rows = single_boot(killed.rows);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().hpid, killed.hpid);
  EXPECT_EQ(rows.front().container_pid, 0U) << "there never was a container";
  EXPECT_FALSE(has_kind(rows, "execve") || has_kind(rows, "listen"));
  EXPECT_EQ(phases_of(rows), (std::set<std::int64_t>{0, 1})) << "CLI_START and START_SV only";
}

TEST_F(FaultKillTest, ContainerKilledBeforeExecveIsIncomplete) {
  // The container sleeps after CONTAINER_CGROUP_SETUP (15), long before its
  // execve; the supervisor then reports the dead container and exits 1.
  KilledLaunch killed;
  ASSERT_NO_FATAL_FAILURE(kill_mid_boot({"--phase-delay", "15:600000"}, "container_pid", Victim::Container, killed));

  expect_boot_counts(killed.summary, 1, 0, 0, 1);
  expect_nothing_left_tracked(killed.summary);
  const auto rows = single_boot(killed.rows);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().hpid, killed.hpid);
  EXPECT_EQ(static_cast<std::int64_t>(rows.front().container_pid), killed.container);
  EXPECT_FALSE(has_kind(rows, "execve") || has_kind(rows, "listen"));
  const auto phases = phases_of(rows);
  EXPECT_EQ(phases.count(15), 1U) << "CONTAINER_CGROUP_SETUP was passed";
  for (std::int64_t later = 16; later <= 21; ++later) EXPECT_EQ(phases.count(later), 0U) << "phase " << later;
  EXPECT_EQ(phases.count(5), 1U) << "the supervisor's END_WAIT after its container died";
}

// Killing the supervisor does not kill its container: that boot goes on and
// is counted once the container is done, not cut short.
TEST_F(FaultKillTest, SupervisorKilledAfterForkLeavesItsContainerBooting) {
  // Supervisor asleep after END_SETUP (3, after its fork); the container
  // pauses at 15, then runs on, orphaned, to listen and exits. With the
  // "done" pipe the supervisor would reach END_SETUP only after the
  // container's setup: --no-done-pipe.
  KilledLaunch killed;
  ASSERT_NO_FATAL_FAILURE(kill_mid_boot({"--no-done-pipe", "--phase-delay", "3:600000", "--phase-delay", "15:1000"},
                                        "container_pid", Victim::Supervisor, killed));

  TracedBoots traced;
  traced.summary = killed.summary;
  traced.rows = killed.rows;
  traced.truth = killed.truth;
  const auto& fact = traced.truth[killed.hpid];
  if (fact.count("exec_lo") > 0 && fact.at("exec_lo") < killed.killed_at_ns) {
    std::cout << "[   NOTE   ] the container had already exec'd when its supervisor was killed\n";
  }
  expect_boot_counts(traced.summary, 1, 1, 1, 0);
  expect_nothing_left_tracked(traced.summary);
  expect_boots_match_truth(traced, 1);
  const auto phases = phases_of(traced.rows);
  EXPECT_EQ(phases.count(3), 1U);
  EXPECT_EQ(phases.count(4), 0U) << "the supervisor died before START_WAIT";
}

TEST_F(FaultKillTest, ContainerExitingAfterExecveBeforeListenIsIncomplete) {
  const auto truth_path = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  const auto run = shell_command({launcher().string(), "--truth", truth_path.string(), "--", "/bin/true"});
  const auto r = run_sampler({"--format", "json", "--events", rows_path.string(), "--run", run, "/bin/true"});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  expect_boot_counts(summary, 1, 1, 0, 1);
  expect_nothing_left_tracked(summary);
  const auto metrics = summary.value("metrics", nlohmann::json::object());
  EXPECT_EQ(metrics.value("execve", nlohmann::json::object()).value("count", kAbsent), 1U) << summary.dump(2);
  EXPECT_EQ(metrics.value("listen", nlohmann::json::object()).value("count", kAbsent), 0U) << summary.dump(2);

  const auto truth = parse_truth(read_file(truth_path));
  const auto rows = single_boot(parse_boot_rows(read_file(rows_path)));
  ASSERT_FALSE(rows.empty());
  ASSERT_EQ(truth.count(rows.front().hpid), 1U);
  EXPECT_EQ(static_cast<std::int64_t>(rows.front().container_pid), truth.at(rows.front().hpid).at("container_pid"));
  EXPECT_TRUE(has_kind(rows, "execve"));
  EXPECT_FALSE(has_kind(rows, "listen"));
}

// ---------------------------------------------------------------------------
// Ring buffer overflow: every event is delivered or counted as lost
// ---------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------
// Signals and the output pipe
// ---------------------------------------------------------------------------
class FaultStopSignalTest : public FaultTest, public ::testing::WithParamInterface<int> {};

TEST_P(FaultStopSignalTest, PrintsTheSummaryExits0AndDetaches) {
  const int signal = GetParam();
  auto tracer = start_tracer({"--format", "json", app().string()});
  ASSERT_FALSE(HasFailure());
  const auto ids = held_bpf_ids(tracer->pid());
  const auto boot = run_process({launcher().string(), "-n", "1", "--", app().string()}, dir(), 60s);
  ASSERT_TRUE(boot.status.exited && boot.status.code == 0) << boot.status.describe() << '\n' << boot.err;

  const auto summary = stop_tracer(*tracer, signal);
  expect_boot_counts(summary, 1, 1, 1, 0);
  expect_nothing_left_tracked(summary);
  expect_detached(ids);
}

INSTANTIATE_TEST_SUITE_P(Fault, FaultStopSignalTest, ::testing::Values(SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& signal) {
                           return std::string("SIG") + sigabbrev_np(signal.param);
                         });

using FaultSignalTest = FaultTest;

// The --run command: a shell that waits for a sleep, both carrying marker
// (the shell in its command line, the sleep in its environment).
std::string long_running_command(const std::string& marker) {
  return "HACOBOOT_IT_MARKER=" + shell_quote(marker) + " sleep 300; true";
}

TEST_F(FaultSignalTest, SigintEndsTheRunCommand) {
  const auto marker = (dir() / "sigint-run").string();
  Process tracer(sampler_argv({"--format", "json", "--run", long_running_command(marker)}), dir());
  // The shell and its sleep.
  ASSERT_TRUE(wait_until([&] { return others_mentioning(marker, tracer.pid()) >= 2 || !tracer.running(); }, 60s));
  ASSERT_TRUE(tracer.running()) << tracer.err();

  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
  nlohmann::json summary;
  EXPECT_NO_THROW(summary = nlohmann::json::parse(tracer.out())) << "no summary: " << tracer.out();
  expect_all_gone(marker);
}

// A second SIGINT while the first one's summary is being written: the
// summary write is held up by a full stdout pipe, so the second signal is
// sure to come after the first was handled.
TEST_F(FaultSignalTest, SecondSigintExits130EndsTheRunCommandAndDetaches) {
  const auto marker = (dir() / "double-sigint-run").string();
  Process tracer(sampler_argv({"--format", "json", "--run", long_running_command(marker)}), dir(), StdoutTo::FullPipe);
  // The shell and its sleep.
  ASSERT_TRUE(wait_until([&] { return others_mentioning(marker, tracer.pid()) >= 2 || !tracer.running(); }, 60s));
  ASSERT_TRUE(tracer.running()) << tracer.err();
  const auto ids = held_bpf_ids(tracer.pid());

  tracer.send_signal(SIGINT);
  ASSERT_TRUE(wait_until([&] { return blocked_writing_stdout(tracer.pid()) || !tracer.running(); }, 60s))
      << "the tracer never blocked writing its summary";
  ASSERT_TRUE(tracer.running()) << "exited on the first SIGINT?\n" << tracer.err();
  tracer.send_signal(SIGINT);
  const auto end = tracer.wait_or_kill(30s);
  EXPECT_TRUE(end.exited && end.code == 128 + SIGINT) << end.describe() << "\nstderr: " << tracer.err();
  expect_all_gone(marker);
  expect_detached(ids);
}

// Two stop signals sent one right after the other: the second decides
// (128 + it). Both usually reach the tool before it runs again, and the
// kernel then hands over SIGINT first: the SIGTERM must wait until that
// handler is done instead of running inside it before SIGINT was recorded
// (which made this 130). Stdout is a full pipe, so that the tool cannot end
// on the first signal before the second one came.
TEST_F(FaultSignalTest, SigintThenSigtermBackToBackExits143) {
  constexpr int kRuns = 20;
  for (int run = 1; run <= kRuns; ++run) {
    const auto tracer = start_tracer({"--format", "json", app().string()}, StdoutTo::FullPipe);
    ASSERT_FALSE(HasFailure());
    tracer->send_signal(SIGINT);
    tracer->send_signal(SIGTERM);
    const auto end = tracer->wait_or_kill(60s);
    ASSERT_TRUE(end.exited && end.code == 128 + SIGTERM)
        << "run " << run << " of " << kRuns << ": " << end.describe() << "\nstderr: " << tracer->err();
  }
}

// The other order. The SIGINT goes once the tool has taken the SIGTERM:
// two signals pending at once are taken lowest number first, whatever order
// they were sent in (the man page says so).
TEST_F(FaultSignalTest, SigtermThenSigintExits130) {
  const auto tracer = start_tracer({"--format", "json", app().string()}, StdoutTo::FullPipe);
  ASSERT_FALSE(HasFailure());
  tracer->send_signal(SIGTERM);
  ASSERT_TRUE(wait_until([&] { return !signal_pending(tracer->pid(), SIGTERM) || !tracer->running(); }, 60s));
  tracer->send_signal(SIGINT);
  const auto end = tracer->wait_or_kill(60s);
  EXPECT_TRUE(end.exited && end.code == 128 + SIGINT) << end.describe() << "\nstderr: " << tracer->err();
}

TEST_F(FaultSignalTest, ClosedStdoutPipeIsAReportedWriteError) {
  const auto done = dir() / "done";
  const auto run = wait_for_file_command(done);
  Process tracer(sampler_argv({"--format", "json", "--run", run}), dir(), StdoutTo::ClosedPipe);
  ASSERT_TRUE(wait_until([&] { return others_mentioning(done.string(), tracer.pid()) > 0 || !tracer.running(); }, 60s));
  ASSERT_TRUE(tracer.running()) << tracer.err();
  const auto ids = held_bpf_ids(tracer.pid());

  std::ofstream(done.string()).put('\n');
  const auto end = tracer.wait_or_kill(60s);
  EXPECT_FALSE(end.timed_out) << "hung writing to a closed pipe";
  EXPECT_TRUE(end.exited && end.code != 0) << end.describe() << "\nstderr: " << tracer.err();
  EXPECT_NE(tracer.err().find("failed"), std::string::npos) << "stderr: " << tracer.err();
  expect_detached(ids);
}

// The tool ignores SIGPIPE and handles SIGINT/SIGTERM/SIGHUP for itself; the
// --run command is an ordinary program and must start with the default
// dispositions (an ignored SIGPIPE is inherited across exec: a pipeline such
// as `producer | head -1` would then never see its producer end).
TEST_F(FaultSignalTest, RunCommandStartsWithDefaultSignalDispositions) {
  const auto status_copy = new_file("status.txt");
  const auto r =
      run_sampler({"--run", "grep -E '^Sig(Ign|Blk):' /proc/self/status > " + shell_quote(status_copy.string())});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  std::uint64_t ignored = 0;
  std::uint64_t blocked = 0;
  for (const auto& line : split_lines(read_file(status_copy))) {
    const auto value = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
    (line.rfind("SigIgn:", 0) == 0 ? ignored : blocked) = value;
  }
  for (const int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) {
    const auto bit = std::uint64_t{1} << (sig - 1);
    EXPECT_EQ(ignored & bit, 0U) << "the --run command starts with SIG" << sigabbrev_np(sig) << " ignored";
    EXPECT_EQ(blocked & bit, 0U) << "the --run command starts with SIG" << sigabbrev_np(sig) << " blocked";
  }
}

// SIGINT while the programs are being loaded and attached. The tracer is
// frozen as soon as it holds a BPF map and no link yet, so the signal is sure
// to land mid-attach: it must still end with a summary and exit 0, never
// start the --run command (the run is over before it began), and leave
// nothing it held in the kernel.
TEST_F(FaultSignalTest, SigintWhileAttachingEndsWithASummaryAndStartsNothing) {
  constexpr int kAttempts = 10;
  const auto ran = dir() / "run-command-ran";
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    std::filesystem::remove(ran);
    // Without the BTF cache the window from the maps' creation to the first
    // link is widest: CO-RE then searches the whole kernel BTF.
    Process tracer(
        sampler_argv({"--btf-cache", "off", "--format", "json", "--run", "touch " + shell_quote(ran.string())}), dir());
    BpfIds held;
    while (tracer.running() && !holds_bpf_map(tracer.pid())) {
    }
    tracer.send_signal(SIGSTOP);
    ASSERT_TRUE(wait_until([&] { return !tracer.running() || proc_state(tracer.pid()) == 'T'; }, 10s));
    held = bpf_ids_held_by(tracer.pid());
    if (!held.links.empty()) {
      std::cout << "[  NOTE    ] attempt " << attempt << ": frozen after attaching began; again\n";
      tracer.send_signal(SIGKILL);
      continue;
    }
    tracer.send_signal(SIGINT);
    tracer.send_signal(SIGCONT);
    const auto status = tracer.wait_or_kill(60s);
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
    nlohmann::json summary;
    ASSERT_NO_THROW(summary = nlohmann::json::parse(tracer.out())) << "no summary: " << tracer.out();
    expect_boot_counts(summary, 0, 0, 0, 0);
    EXPECT_FALSE(std::filesystem::exists(ran)) << "the --run command was started after the interruption";
    expect_detached(held);
    return;
  }
  FAIL() << "never caught the tracer between loading and attaching in " << kAttempts << " attempts";
}

// An exporter runs for days: SIGHUP makes it reopen --events (logrotate has
// moved the file away) and go on tracing, where a one-off run would stop.
TEST_F(FaultSignalTest, SighupMakesAnExporterReopenItsEventsFileAndGoOn) {
  const auto rows = new_file("rows.tsv");
  const auto rotated = new_file("rows.1.tsv");
  Process tracer(sampler_argv({"--serve", "127.0.0.1:0", "-o", "/dev/null", "--events", rows.string(), app().string()}),
                 dir());
  ASSERT_TRUE(tracer.wait_for_text("Serving Prometheus metrics", true, 60s)) << tracer.err();
  const auto boot = [&](int n) {
    const auto r = run_process({launcher().string(), "-n", std::to_string(n), "--", app().string()}, dir(), 60s);
    ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  };
  const auto boots_in = [](const std::filesystem::path& path) {
    return rows_by_boot(parse_boot_rows(read_file(path))).size();
  };
  boot(1);
  ASSERT_TRUE(wait_until([&] { return boots_in(rows) == 1; }, 30s)) << read_file(rows);
  std::filesystem::rename(rows, rotated);
  tracer.send_signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(rows); }, 30s)) << "not reopened";
  boot(2);
  EXPECT_TRUE(wait_until([&] { return boots_in(rows) == 2; }, 30s)) << read_file(rows);
  EXPECT_EQ(boots_in(rotated), 1U);
  EXPECT_TRUE(tracer.running()) << "SIGHUP stopped the exporter";
  tracer.send_signal(SIGTERM);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
}

// ---------------------------------------------------------------------------
// --run-as: the traced command without root's privileges
// ---------------------------------------------------------------------------
using RunAsTest = FaultTest;

TEST_F(RunAsTest, RunCommandHasTheUsersIdentityAndNoCapabilities) {
  const auto r =
      run_sampler({"--run-as", "nobody", "--run",
                   "test \"$(id -un)\" = nobody && test \"$(id -G)\" = \"$(id -g nobody)\" && "
                   "test \"$USER\" = nobody && test \"$HOME\" = \"$(getent passwd nobody | cut -d: -f6)\" && "
                   "grep -Eq '^CapEff:[[:space:]]+0+$' /proc/self/status"});
  EXPECT_TRUE(r.status.exited && r.status.code == 0)
      << "the command did not run as nobody (uid, groups, USER, HOME, no capabilities): " << r.status.describe()
      << "\nstderr: " << r.err;
}

// Boots launched by an unprivileged --run command are traced like any other
// (the launcher without namespaces: nobody may not create them).
TEST_F(RunAsTest, BootsOfTheUnprivilegedCommandAreTraced) {
  open_to_other_users();
  const auto r = run_sampler({"--format", "json", "--run-as", "nobody", "--run",
                              launcher_command({"-n", "2", "--no-namespaces"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_boot_counts(nlohmann::json::parse(r.out), 2, 2, 2, 0);
}

// ---------------------------------------------------------------------------
// The --run command's process group: nothing of it outlives the tool
// ---------------------------------------------------------------------------
// The command's shell starts a sleep that ignores SIGTERM, in its process
// group, and ends on the first SIGTERM itself: however the run ends, the
// whole group is gone after the tool, the sleep SIGKILLed once the grace
// period is over.
class RunGroupTest : public FaultTest {
 protected:
  void TearDown() override {
    // Nothing left behind by a failed test: everything carrying the marker.
    for (const pid_t pid : processes_mentioning(marker())) ::kill(pid, SIGKILL);
    FaultTest::TearDown();
  }

  // Starts the sleep, records its pid once it ignores SIGTERM, then the
  // group's, then runs `rest`.
  [[nodiscard]] std::string command(const std::string& rest) const {
    const auto sleep = shell_quote(sleep_file().string());
    const std::string ignoring =
        "trap '' TERM; echo $$ > " + sleep + "; exec env HACOBOOT_IT_MARKER=" + shell_quote(marker()) + " sleep 600";
    return "sh -c " + shell_quote(ignoring) + " & until [ -s " + sleep + " ]; do sleep 0.01; done; echo $$ > " +
           shell_quote(group_file().string()) + "; " + rest;
  }

  // Waits until the command has recorded both pids.
  bool command_started(Process& tracer) const {
    return wait_until([&] { return (recorded(group_file()) && recorded(sleep_file())) || !tracer.running(); }, 60s) &&
           recorded(group_file()) && recorded(sleep_file());
  }

  // Waits until the sleep and every other process of the group have exited,
  // and nothing mentions the marker any more (the tool's guard does).
  void expect_group_gone() const {
    const auto group = recorded(group_file());
    const auto sleep = recorded(sleep_file());
    ASSERT_TRUE(group && sleep) << "the --run command never recorded its pids";
    std::vector<pid_t> left;
    EXPECT_TRUE(wait_until(
        [&] {
          left = live_members_of(*group);
          return has_exited(*sleep) && left.empty();
        },
        30s))
        << "the sleep (" << *sleep << ") " << (has_exited(*sleep) ? "exited" : "still runs") << "; " << left.size()
        << " processes left in the command's group " << *group;
    expect_all_gone(marker());
  }

 private:
  [[nodiscard]] std::string marker() const { return (dir() / "run-group").string(); }
  [[nodiscard]] std::filesystem::path group_file() const { return dir() / "group.pid"; }
  [[nodiscard]] std::filesystem::path sleep_file() const { return dir() / "sleep.pid"; }

  // The pid in file once written in full.
  static std::optional<pid_t> recorded(const std::filesystem::path& file) {
    const auto text = read_file(file);
    if (text.empty() || text.back() != '\n') return std::nullopt;
    return std::stoi(text);
  }
};

TEST_F(RunGroupTest, CtrlCEndsACommandThatIgnoresSigterm) {
  Process tracer(sampler_argv({"--format", "json", "--run", command("wait")}), dir());
  ASSERT_TRUE(command_started(tracer)) << tracer.err();
  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
  expect_group_gone();
}

TEST_F(RunGroupTest, ReachingTheCountEndsACommandThatIgnoresSigterm) {
  const auto r = run_sampler(
      {"-n", "1", "--format", "json", "--run", command(launcher_command({"-n", "1"}) + "; wait"), app().string()});
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_group_gone();
}

// The second Ctrl-C comes while the summary is being written (held up by a
// full stdout pipe): the tool exits at once, and its guard ends the group.
TEST_F(RunGroupTest, SecondCtrlCEndsACommandThatIgnoresSigterm) {
  Process tracer(sampler_argv({"--format", "json", "--run", command("wait")}), dir(), StdoutTo::FullPipe);
  ASSERT_TRUE(command_started(tracer)) << tracer.err();
  tracer.send_signal(SIGINT);
  ASSERT_TRUE(wait_until([&] { return blocked_writing_stdout(tracer.pid()) || !tracer.running(); }, 60s))
      << "the tracer never blocked writing its summary";
  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 128 + SIGINT) << status.describe() << "\nstderr: " << tracer.err();
  expect_group_gone();
}

// The shell exits at once, the sleep still running in its group.
TEST_F(RunGroupTest, WhatTheCommandLeftRunningEndsWithIt) {
  const auto r = run_sampler({"--format", "json", "--run", command("true")});
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_group_gone();
}

// kill -9 leaves the tool no say: the kernel signals the shell and the
// tool's guard, which ends the rest of the group.
TEST_F(RunGroupTest, KillingTheToolEndsTheCommand) {
  Process tracer(sampler_argv({"--format", "json", "--run", command("wait")}), dir());
  ASSERT_TRUE(command_started(tracer)) << tracer.err();
  tracer.send_signal(SIGKILL);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_EQ(status.signal, SIGKILL) << status.describe();
  expect_group_gone();
}

// ---------------------------------------------------------------------------
// Two tracers at once, each on its own launcher copy
// ---------------------------------------------------------------------------
using FaultConcurrencyTest = FaultTest;

TEST_F(FaultConcurrencyTest, TwoInstancesEachCountExactlyTheirOwnBoots) {
  const auto second_launcher = dir() / "second" / "hacoboot-launcher";
  std::filesystem::create_directory(dir() / "second");
  std::filesystem::copy_file(launcher(), second_launcher);

  struct Instance {
    std::filesystem::path launcher;
    std::size_t boots;
    std::filesystem::path truth;
    std::filesystem::path rows;
    std::unique_ptr<Process> tracer;
  };
  std::vector<Instance> instances;
  instances.push_back({launcher(), 7, new_file("truth-a.tsv"), new_file("rows-a.tsv"), nullptr});
  instances.push_back({second_launcher, 11, new_file("truth-b.tsv"), new_file("rows-b.tsv"), nullptr});
  for (auto& in : instances) {
    const auto run = shell_command({in.launcher.string(), "--truth", in.truth.string(), "-n", std::to_string(in.boots),
                                    "-j", "3", "--", app().string()});
    in.tracer = std::make_unique<Process>(
        std::vector<std::string>{sampler().string(), "--haconiwa", in.launcher.string(), "--format", "json", "--events",
                                 in.rows.string(), "--run", run, app().string()},
        dir());
  }
  for (auto& in : instances) {
    SCOPED_TRACE(in.launcher.string());
    TracedBoots traced;
    const auto status = in.tracer->wait_or_kill(120s);
    ASSERT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << in.tracer->err();
    traced.summary = nlohmann::json::parse(in.tracer->out());
    traced.rows = parse_boot_rows(read_file(in.rows));
    traced.truth = parse_truth(read_file(in.truth));
    expect_boot_counts(traced.summary, in.boots, in.boots, in.boots, 0);
    EXPECT_EQ(count_of(traced.summary, "unstarted"), 0U);
    expect_boots_match_truth(traced, in.boots);
  }
}

// ---------------------------------------------------------------------------
// Reused pids. Forced with /proc/sys/kernel/ns_last_pid (the pid the kernel
// allocated last): a launcher spawned right after setting it to P-3 makes
// driver P-2, CLI P-1 and supervisor P, unless another process on the host
// forks in between; each attempt is checked in the truth file and retried.
// Skipped where ns_last_pid cannot be written.
// ---------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------
using LoadTest = FaultTest;

// The size of the load run: 2000 boots, 100 in flight, unless
// HACOBOOT_LOAD_BOOTS / HACOBOOT_LOAD_IN_FLIGHT say otherwise (the issue's
// 10,000 x 200 takes minutes: run it by hand or in a nightly job).
std::uint64_t load_setting(const char* variable, std::uint64_t fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? std::stoull(value) : fallback;
}

TEST_F(LoadTest, ManyBootsInFlightAllAccountedWithFlatMemory) {
  const std::uint64_t launches = load_setting("HACOBOOT_LOAD_BOOTS", 2000);
  const std::uint64_t in_flight = load_setting("HACOBOOT_LOAD_IN_FLIGHT", 100);
  constexpr long kMaxRssKb = 64 * 1024;
  // The tool keeps each step's first 10,000 samples exactly (SampleStats; a
  // fixed histogram after that): 20 steps x 8 bytes, twice for the vectors'
  // spare capacity, is what memory may grow by from the first quarter of the
  // run to its end. A leak of 1 kB per boot exceeds it on any run of more
  // than a few thousand boots.
  constexpr long kStepsPerBoot = 20;
  constexpr std::uint64_t kExactSamples = 10'000;
  const auto truth_path = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  const auto run = launcher_command(
      {"--truth", truth_path.string(), "-n", std::to_string(launches), "-j", std::to_string(in_flight)},
      {"--hold-ms", "0"});
  const auto began = std::chrono::steady_clock::now();
  Process tracer(sampler_argv({"-q", "--format", "json", "--events", rows_path.string(), "--run", run, app().string()}),
                 dir());
  std::vector<long> rss_kb;  // sampled every 200 ms
  std::optional<ExitStatus> end;
  const auto guard = std::chrono::steady_clock::now() + 3600s;
  while (!(end = tracer.wait_for(200ms)) && std::chrono::steady_clock::now() < guard) {
    if (const auto kb = tracer.status_kb("VmRSS"); kb > 0) rss_kb.push_back(kb);
  }
  if (!end) end = tracer.wait_or_kill(0ms);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  ASSERT_TRUE(end->exited && end->code == 0) << end->describe() << "\nstderr: " << tracer.err();
  // After start-up (the first quarter holds the BTF parse's peak): the
  // median of the second quarter against the peak of the last one.
  ASSERT_GE(rss_kb.size(), 8U) << "too short a run to judge memory";
  const auto quarter = static_cast<std::ptrdiff_t>(rss_kb.size() / 4);
  std::vector<long> second_quarter(rss_kb.begin() + quarter, rss_kb.begin() + 2 * quarter);
  std::nth_element(second_quarter.begin(), second_quarter.begin() + quarter / 2, second_quarter.end());
  const long early_kb = second_quarter[static_cast<std::size_t>(quarter / 2)];
  const long late_peak_kb = *std::max_element(rss_kb.end() - quarter, rss_kb.end());
  const long allowed_growth_kb =
      1024 + static_cast<long>(std::min(launches, kExactSamples)) * kStepsPerBoot * 8 * 2 / 1024;

  RecordProperty("duration_s", std::to_string(seconds));
  RecordProperty("max_rss_kb", std::to_string(tracer.max_rss_kb()));
  std::cout << "[  FIGURE  ] " << launches << " boots, " << in_flight << " in flight: " << seconds << " s; tool RSS "
            << early_kb << " kB in the second quarter of the run, peak " << late_peak_kb
            << " kB in the last (growth allowed " << allowed_growth_kb
            << " kB); wait4 ru_maxrss (tool and reaped descendants) " << tracer.max_rss_kb() << " kB\n";
  EXPECT_LT(tracer.max_rss_kb(), kMaxRssKb);
  EXPECT_LE(late_peak_kb, early_kb + allowed_growth_kb) << "the tool's memory grows with the boots it saw";

  const auto summary = nlohmann::json::parse(tracer.out());
  expect_boot_counts(summary, launches, launches, launches, 0);
  EXPECT_EQ(summary.value("lost_events", kAbsent), 0U);
  expect_nothing_left_tracked(summary);

  // Join by hpid. A supervisor pid used twice in the run (pid wrap-around)
  // would make the join ambiguous: such hpids are counted, not judged.
  const auto truth_text = read_file(truth_path);
  std::map<std::uint32_t, int> starts;
  for (const auto& line : split_lines(truth_text)) {
    if (line.find("\tstart_hi\t") != std::string::npos) ++starts[static_cast<std::uint32_t>(std::stoul(line))];
  }
  const auto truth = parse_truth(truth_text);
  std::size_t ambiguous = 0;
  std::size_t phantom = 0;
  std::size_t misattributed = 0;
  std::size_t duplicate = 0;
  std::size_t out_of_bracket = 0;
  std::set<std::uint32_t> seen;
  std::string examples;
  const auto boots = rows_by_boot(parse_boot_rows(read_file(rows_path)));
  for (const auto& [sequence, rows] : boots) {
    const auto hpid = rows.front().hpid;
    if (!seen.insert(hpid).second) ++duplicate;
    if (starts[hpid] > 1) {
      ++ambiguous;
      continue;
    }
    const auto fact = truth.find(hpid);
    if (fact == truth.end() || fact->second.count("container_pid") == 0) {
      ++phantom;
      continue;
    }
    const auto& f = fact->second;
    bool wrong = false;
    std::size_t execs = 0;
    std::size_t listens = 0;
    for (const auto& row : rows) {
      wrong = wrong || static_cast<std::int64_t>(row.container_pid) != f.at("container_pid") || row.hpid != hpid;
      if (row.kind == "execve") ++execs;
      if (row.kind == "listen") ++listens;
      if ((row.kind == "execve" || row.kind == "listen") && row.since_start_ns) {
        const auto lo = f.at(row.kind == "execve" ? "exec_lo" : "listen_lo") - f.at("start_hi");
        const auto hi = f.at(row.kind == "execve" ? "exec_hi" : "listen_hi") - f.at("start_lo");
        const auto value = static_cast<std::int64_t>(*row.since_start_ns);
        if (value < lo || value > hi) ++out_of_bracket;
      }
    }
    if (wrong || execs != 1 || listens != 1) {
      ++misattributed;
      if (misattributed <= 5) {
        examples += "boot " + std::to_string(sequence) + " hpid " + std::to_string(hpid) + " container_pid " +
                    std::to_string(rows.front().container_pid) + " (truth " + std::to_string(f.at("container_pid")) +
                    "), " + std::to_string(execs) + " execve, " + std::to_string(listens) + " listen rows\n";
      }
    }
  }
  std::cout << "[  FIGURE  ] join with the truth: " << boots.size() << " boots, " << misattributed << " misattributed, "
            << phantom << " phantom, " << duplicate << " duplicate hpids, " << ambiguous
            << " ambiguous (hpid reused within the run), " << out_of_bracket << " times outside the truth bracket\n";
  EXPECT_EQ(boots.size(), launches);
  EXPECT_EQ(misattributed, 0U) << examples;
  EXPECT_EQ(phantom, 0U);
  EXPECT_EQ(duplicate, ambiguous) << "an hpid in two boots though the launcher used it once";
  EXPECT_EQ(out_of_bracket, 0U);
}

// Unrelated host activity while N boots are traced: processes that fork,
// exec and listen outside any boot, and boots of the launcher binary the
// tracer was not pointed at. Exactly the N boots are seen.
TEST_F(LoadTest, UnrelatedHostActivityAddsNoBoot) {
  constexpr std::size_t kBoots = 20;
  const auto truth_path = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  const auto app_path = shell_quote(app().string());
  const auto noise =
      "{ i=0; while [ $i -lt 300 ]; do " + app_path + " --hold-ms 0 || exit 1; " + app_path +
      " --hold-ms 0 --listen-from child || exit 1; i=$((i+1)); done; } & a=$!; " +
      shell_command({HACOBOOT_LAUNCHER_PATH, "-n", "20", "-j", "2", "--", app().string(), "--hold-ms", "0"}) +
      " & b=$!; ";
  const auto run = noise + launcher_command({"--truth", truth_path.string(), "-n", std::to_string(kBoots), "-j", "2"}) +
                   "; s=$?; wait $a || s=1; wait $b || s=1; exit $s";
  TracedBoots traced;
  traced.result = run_sampler({"--format", "json", "--events", rows_path.string(), "--run", run, app().string()});
  ASSERT_TRUE(traced.result.status.exited && traced.result.status.code == 0)
      << traced.result.status.describe() << "\nstderr: " << traced.result.err;
  traced.summary = nlohmann::json::parse(traced.result.out);
  traced.rows = parse_boot_rows(read_file(rows_path));
  traced.truth = parse_truth(read_file(truth_path));
  expect_boot_counts(traced.summary, kBoots, kBoots, kBoots, 0);
  EXPECT_EQ(count_of(traced.summary, "unstarted"), 0U) << traced.summary.dump(2);
  EXPECT_EQ(traced.summary.value("tracked_at_exit", kAbsent), 0U);
  expect_boots_match_truth(traced, kBoots);
}

}  // namespace
}  // namespace hacoboot::it
