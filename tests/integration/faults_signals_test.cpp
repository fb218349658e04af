// Stop signals (one, two, back to back, while attaching), SIGHUP of an
// exporter, the --run command's signal dispositions, and a closed stdout pipe.
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>

#include "faults.hpp"

namespace hacoboot::it {
namespace {

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

// Whether `signal` was sent to the process and not yet taken (ShdPnd in
// /proc/PID/status).
bool signal_pending(pid_t pid, int signal) {
  const auto status = proc_text(pid, "status");
  const auto at = status.find("ShdPnd:");
  if (at == std::string::npos) return false;
  const auto pending = std::stoull(status.substr(at + std::string_view("ShdPnd:").size()), nullptr, 16);
  return ((pending >> (signal - 1)) & 1U) != 0;
}

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

// What logrotate leaves at the rows' path is not the tool's to choose. A
// symbolic link there ended the exporter; a FIFO no one reads froze it in
// open() (the ring buffer not drained, the textfile not rewritten). A reopen
// that fails says so and traces on, the rows dropped and counted, until a
// later SIGHUP opens a file there again.
enum class AtTheEventsPath : std::uint8_t { Symlink, Fifo };

void PrintTo(AtTheEventsPath at, std::ostream* os) {
  *os << (at == AtTheEventsPath::Symlink ? "a symbolic link" : "a FIFO");
}

class FaultSighupTest : public FaultTest, public ::testing::WithParamInterface<AtTheEventsPath> {};

TEST_P(FaultSighupTest, AFailedReopenOfTheEventsFileTracesOn) {
  const auto rows = new_file("rows.tsv");
  const auto metrics = new_file("boots.prom");
  const auto elsewhere = dir() / "elsewhere.tsv";
  Process tracer(sampler_argv({"--textfile", metrics.string(), "--textfile-interval", "100ms", "-o", "/dev/null",
                               "--events", rows.string(), app().string()}),
                 dir());
  ASSERT_TRUE(tracer.wait_for_text("Tracing Haconiwa boots in", true, 60s)) << tracer.err();
  const auto boot = [&] {
    const auto r = run_process({launcher().string(), "-n", "1", "--", app().string()}, dir(), 60s);
    ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << '\n' << r.err;
  };
  // The textfile counts `boots` that listened, none still in flight.
  const auto counted = [&](int boots) {
    return wait_until(
        [&] {
          const auto text = read_file(metrics);
          return text.find("\nhacoboot_boot_listen_seconds_count " + std::to_string(boots) + "\n") !=
                     std::string::npos &&
                 text.find("\nhacoboot_boots_in_flight 0\n") != std::string::npos;
        },
        30s);
  };
  boot();
  ASSERT_TRUE(counted(1)) << read_file(metrics);
  std::filesystem::rename(rows, new_file("rows.1.tsv"));
  if (GetParam() == AtTheEventsPath::Symlink) {
    std::filesystem::create_symlink(elsewhere, rows);
  } else {
    ASSERT_EQ(::mkfifo(rows.c_str(), 0600), 0) << std::strerror(errno);
  }
  tracer.send_signal(SIGHUP);
  ASSERT_TRUE(tracer.wait_for_text("--events " + rows.string() + ": cannot reopen it", true, 30s)) << tracer.err();
  boot();
  EXPECT_TRUE(counted(2)) << "the textfile froze:\n" << read_file(metrics);
  EXPECT_TRUE(tracer.running()) << "SIGHUP stopped the exporter";

  std::filesystem::remove(rows);
  tracer.send_signal(SIGHUP);
  ASSERT_TRUE(tracer.wait_for_text("--events " + rows.string() + " reopened;", true, 30s)) << tracer.err();
  EXPECT_NE(tracer.err().find(" rows were dropped before"), std::string::npos) << tracer.err();
  EXPECT_EQ(tracer.err().find("reopened; 0 rows"), std::string::npos) << tracer.err();
  boot();
  EXPECT_TRUE(wait_until([&] { return rows_by_boot(parse_boot_rows(read_file(rows))).size() == 1; }, 30s))
      << read_file(rows);
  tracer.send_signal(SIGTERM);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
  EXPECT_FALSE(std::filesystem::exists(elsewhere)) << "written through the symbolic link";
}

INSTANTIATE_TEST_SUITE_P(Fault, FaultSighupTest, ::testing::Values(AtTheEventsPath::Symlink, AtTheEventsPath::Fifo),
                         [](const ::testing::TestParamInfo<AtTheEventsPath>& at) {
                           return at.param == AtTheEventsPath::Symlink ? std::string("Symlink") : std::string("Fifo");
                         });

}  // namespace
}  // namespace hacoboot::it
