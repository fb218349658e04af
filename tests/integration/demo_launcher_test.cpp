// The demo launcher's own contract, from its ground truth alone (no tracer):
// Haconiwa's "done" pipe and uid-mapping handshake in the right order, and
// the work injected before a phase (--burn, --sleep, --fsync) done by the
// right process, at the right point, and costing what was asked. The tracer's tests of why a boot
// is slow rely on both.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

using Facts = std::map<std::string, std::int64_t>;

constexpr std::int64_t kMs = 1'000'000;

// One boot's facts: the supervisor's (under the hpid) and its CLI's.
struct BootTruth {
  Facts supervisor;
  Facts cli;
};

// A fact the launcher must have recorded; 0 (and a failure) when it did not.
std::int64_t fact(const Facts& facts, const std::string& key) {
  const auto it = facts.find(key);
  if (it == facts.end()) {
    ADD_FAILURE() << "the ground truth lacks " << key;
    return 0;
  }
  return it->second;
}

bool has_key_starting(const Facts& facts, const std::string& prefix) {
  return std::any_of(facts.begin(), facts.end(), [&](const auto& entry) { return entry.first.rfind(prefix, 0) == 0; });
}

// The piece <what> consumed at least ms of the thread's CPU time, within its
// wall-clock span. No upper bound: the CPU clock also charges the thread
// with interrupts handled while it ran (kernels without IRQ time accounting)
// and, on a VM, with time the hypervisor took from the vCPU.
void expect_burned(const Facts& facts, const std::string& what, std::int64_t ms) {
  const auto cpu = fact(facts, what + "_cpu");
  EXPECT_GE(cpu, ms * kMs) << what << ": less CPU time than asked";
  EXPECT_LE(cpu, fact(facts, what + "_end") - fact(facts, what + "_start")) << what;
}

class DemoLauncherTest : public IntegrationTest {
 protected:
  // One boot of the demo app, as root (namespaces), with --truth.
  BootTruth boot(const std::vector<std::string>& args) {
    const auto truth_path = new_file("truth.tsv");
    std::vector<std::string> argv{launcher().string(), "--truth", truth_path.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string(), "--hold-ms", "0"});
    const auto r = run_process(argv, dir());
    EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
    BootTruth truth;
    for (const auto& [hpid, facts] : parse_truth(read_file(truth_path))) {
      (facts.count("start_lo") > 0 ? truth.supervisor : truth.cli) = facts;
    }
    EXPECT_FALSE(truth.supervisor.empty()) << "no supervisor in the ground truth";
    return truth;
  }

  ProcessResult launch(const std::vector<std::string>& args) {
    std::vector<std::string> argv{launcher().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, dir());
  }
};

// runner.rb: after its fork the supervisor reads the "done" pipe until EOF,
// which comes when the container closes its end after its last setup step
// (20); only then does it pass END_SETUP (3). The sleeps mark the steps.
// Across the two processes only causal orders hold: the writer's send_lo
// comes before the reader's wait_end, its send_hi may not (truth.hpp).
TEST_F(DemoLauncherTest, SupervisorBlocksOnTheDonePipeFromItsForkUntilTheContainerClosesIt) {
  const auto truth = boot({"--sleep", "2:1", "--sleep", "20:20", "--sleep", "3:1"}).supervisor;
  ASSERT_FALSE(HasFailure());
  const auto& t = truth;
  EXPECT_LE(fact(t, "sleep_2_end"), fact(t, "done_wait_start")) << "blocked only after START_FORK";
  EXPECT_LE(fact(t, "sleep_20_end"), fact(t, "done_send_lo")) << "the container closed after its step 20";
  EXPECT_LE(fact(t, "done_send_hi"), fact(t, "exec_lo")) << "closed before the exec, not by it";
  EXPECT_LE(fact(t, "done_send_lo"), fact(t, "done_wait_end")) << "the supervisor went on before the close";
  EXPECT_LE(fact(t, "done_wait_end"), fact(t, "sleep_3_start")) << "END_SETUP before the end of the wait";
}

TEST_F(DemoLauncherTest, NoDonePipeLeavesTheSupervisorUnblocked) {
  const auto truth = boot({"--no-done-pipe", "--sleep", "3:1"}).supervisor;
  ASSERT_FALSE(HasFailure());
  EXPECT_FALSE(has_key_starting(truth, "done_"));
  EXPECT_EQ(truth.count("sleep_3_end"), 1U);
  EXPECT_EQ(truth.count("exec_lo"), 1U);
}

// With user namespaces: the container asks in step 17 ("unshared") and
// blocks until the supervisor, having done its mapping work, answers
// "mapped"; only then does it pass 17. The supervisor then waits for "done".
TEST_F(DemoLauncherTest, UidMapHandshakePutsTheSupervisorsMappingWorkBetweenTheContainersSteps) {
  const auto truth = boot({"--uid-map-handshake", "--burn", "uid-map:20", "--sleep", "16:1", "--sleep", "17:1"});
  ASSERT_FALSE(HasFailure());
  const auto& t = truth.supervisor;
  EXPECT_LE(fact(t, "sleep_16_end"), fact(t, "unshared_send_lo")) << "asked after phase 16";
  EXPECT_LE(fact(t, "unshared_send_lo"), fact(t, "unshared_wait_end")) << "supervisor went on before the request";
  EXPECT_LE(fact(t, "unshared_wait_end"), fact(t, "burn_uidmap_start"));
  EXPECT_LE(fact(t, "burn_uidmap_end"), fact(t, "mapped_send_lo")) << "answered before its mapping work was done";
  EXPECT_LE(fact(t, "unshared_send_hi"), fact(t, "mapped_wait_start")) << "the container waited before asking";
  EXPECT_LE(fact(t, "mapped_send_lo"), fact(t, "mapped_wait_end")) << "container went on before the answer";
  EXPECT_LE(fact(t, "mapped_wait_end"), fact(t, "sleep_17_start")) << "phase 17 before the answer";
  EXPECT_LE(fact(t, "mapped_send_hi"), fact(t, "done_wait_start")) << "the done pipe is read after the handshake";
  expect_burned(t, "burn_uidmap", 20);
}

// Each process burns in its own steps: the CLI before 0 (recorded under its
// pid), the supervisor before 4 (after the done pipe), the container before
// 13 (before it closed that pipe).
TEST_F(DemoLauncherTest, BurnUsesTheAskedCpuTimeInTheProcessOfItsPhase) {
  const auto truth = boot({"--burn", "0:20", "--burn", "4:20", "--burn", "13:20"});
  ASSERT_FALSE(HasFailure());
  const auto& t = truth.supervisor;
  ASSERT_FALSE(truth.cli.empty()) << "nothing recorded under the CLI's pid " << fact(t, "cli_pid");
  expect_burned(truth.cli, "burn_0", 20);
  expect_burned(t, "burn_4", 20);
  expect_burned(t, "burn_13", 20);
  EXPECT_LE(fact(truth.cli, "burn_0_end"), fact(t, "start_lo")) << "the CLI burns before its supervisor starts";
  EXPECT_LE(fact(t, "burn_13_end"), fact(t, "done_send_lo")) << "the container burns before closing the done pipe";
  EXPECT_LE(fact(t, "done_wait_end"), fact(t, "burn_4_start")) << "the supervisor burns after its wait";
}

// --sleep, and --phase-delay, sleep at least the time asked.
TEST_F(DemoLauncherTest, SleepAndPhaseDelaySleepTheAskedTime) {
  const auto truth = boot({"--sleep", "14:30", "--phase-delay", "5:30"}).supervisor;
  ASSERT_FALSE(HasFailure());
  for (const std::string what : {"sleep_14", "delay_5"}) {
    const auto slept = fact(truth, what + "_end") - fact(truth, what + "_start");
    EXPECT_GE(slept, 30 * kMs) << what;
    EXPECT_LE(fact(truth, what + "_cpu"), slept) << what;
  }
}

// The tracer names a step by the phase that ends it: work asked for PHASE
// is done before passing it, in step PHASE, and --phase-delay holds the
// process after passing it. The start phase's probe is bracketed by
// start_lo/start_hi, the container's last one (21) precedes exec_lo.
TEST_F(DemoLauncherTest, WorkPrecedesItsPhaseAndPhaseDelayFollowsIt) {
  const auto truth = boot({"--sleep", "1:1", "--phase-delay", "1:1", "--burn", "21:1"}).supervisor;
  ASSERT_FALSE(HasFailure());
  const auto& t = truth;
  EXPECT_LE(fact(t, "sleep_1_end"), fact(t, "start_lo")) << "slept after passing START_SV";
  EXPECT_LE(fact(t, "start_hi"), fact(t, "delay_1_start")) << "held before passing START_SV";
  EXPECT_LE(fact(t, "done_send_hi"), fact(t, "burn_21_start")) << "step 21 begins with the close of the done pipe";
  EXPECT_LE(fact(t, "burn_21_end"), fact(t, "exec_lo")) << "burned after passing CONTAINER_EXECING";
}

// Whether the fsyncs wait for a device depends on the filesystem: only the
// pieces and the cleanup are the launcher's to check.
TEST_F(DemoLauncherTest, FsyncWritesInTheIoDirectoryAndLeavesNothingThere) {
  const auto io_dir = dir() / "io";
  std::filesystem::create_directory(io_dir);
  const auto truth = boot({"--fsync", "15:3", "--fsync", "2:1", "--io-dir", io_dir.string()}).supervisor;
  ASSERT_FALSE(HasFailure());
  for (const std::string what : {"fsync_15", "fsync_2"}) {
    EXPECT_LE(fact(truth, what + "_cpu"), fact(truth, what + "_end") - fact(truth, what + "_start")) << what;
  }
  EXPECT_TRUE(std::filesystem::is_empty(io_dir)) << "the launcher left a file in " << io_dir;
}

TEST_F(DemoLauncherTest, UnwritableIoDirectoryFailsBeforeAnyBoot) {
  const auto truth_path = new_file("truth.tsv");
  const auto missing = (dir() / "no-such-dir").string();
  const auto r = launch({"--truth", truth_path.string(), "--fsync", "13:1", "--io-dir", missing, "--", "/bin/true"});
  EXPECT_TRUE(r.status.exited && r.status.code == 1) << r.status.describe();
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(truth_path)) << "a boot started";
}

TEST_F(DemoLauncherTest, BadWorkValuesAreUsageErrors) {
  const std::vector<std::string> bad_specs{"",
                                           "13",
                                           "13:",
                                           ":5",
                                           "13:-1",
                                           "-1:5",
                                           "13:x",
                                           "x:5",
                                           "13:5x",
                                           "13:1.5",
                                           "7:5",
                                           "10:5",
                                           "22:5",
                                           "31:5",
                                           "13:3600001",
                                           "13:99999999999999999999",
                                           "99999999999999999999:1",
                                           "13:5:5"};
  for (const char* option : {"--burn", "--sleep", "--phase-delay", "--fsync"}) {
    for (const auto& spec : bad_specs) {
      const auto r = launch({option, spec, "--", "/bin/true"});
      EXPECT_TRUE(r.status.exited && r.status.code == 2) << option << " '" << spec << "': " << r.status.describe();
      EXPECT_NE(r.err.find(option), std::string::npos) << option << " '" << spec << "': " << r.err;
    }
  }
  for (const auto& args : std::vector<std::vector<std::string>>{{"--fsync", "13:1000001"},
                                                                {"--io-dir", ""},
                                                                {"--burn", "uid-map:5"},
                                                                {"--phase-delay", "uid-map:5", "--uid-map-handshake"},
                                                                {"--sleep", "uid-map:5", "--no-done-pipe"}}) {
    auto argv = args;
    argv.insert(argv.end(), {"--", "/bin/true"});
    const auto r = launch(argv);
    EXPECT_TRUE(r.status.exited && r.status.code == 2) << shell_command(args) << ": " << r.status.describe();
  }
}

TEST_F(DemoLauncherTest, HelpDescribesTheWorkAndPipeOptions) {
  const auto r = launch({"--help"});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe();
  for (const char* option : {"--burn PHASE:MS", "--sleep PHASE:MS", "--phase-delay", "--fsync PHASE:N", "--io-dir DIR",
                             "--no-done-pipe", "--uid-map-handshake", "tmpfs"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " not in --help:\n" << r.out;
  }
}

}  // namespace
}  // namespace hacoboot::it
