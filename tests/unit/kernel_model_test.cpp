// The test helper KernelModel must tag like bpf/hacoboot.bpf.c, or the real
// capture test proves nothing: check it on hand-made rows and on the capture.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "kernel_model.hpp"
#include "support/build_paths.hpp"

namespace hacoboot::test {
namespace {

CaptureRow row(std::uint64_t ts, std::string kind, std::uint32_t pid) {
  CaptureRow r;
  r.ts_ns = ts;
  r.kind = std::move(kind);
  r.pid = pid;
  r.cgroup_id = 1;
  return r;
}
CaptureRow phase_row(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, std::int64_t n) {
  auto r = row(ts, "phase", pid);
  r.phase = n;
  r.hpid = hpid;
  return r;
}
CaptureRow fork_row(std::uint64_t ts, std::uint32_t parent, std::uint32_t child) {
  auto r = row(ts, "fork", parent);
  r.child_pid = child;
  return r;
}
CaptureRow execve_row(std::uint64_t ts, std::uint32_t pid, std::string filename) {
  auto r = row(ts, "execve", pid);
  r.filename = std::move(filename);
  return r;
}
CaptureRow listen_row(std::uint64_t ts, std::uint32_t pid, std::int64_t ret) {
  auto r = row(ts, "listen", pid);
  r.ret = ret;
  return r;
}

TEST(KernelModel, TagsLikeTheBpfProgram) {
  KernelModel m;
  // CLI 10 passes 0 and forks supervisor 20: an untracked fork.
  auto e = m.on_row(phase_row(1, 10, 10, 0));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->role, Role::Untracked);
  EXPECT_EQ(m.tracked(10), (std::pair{10u, Role::Launcher}));
  e = m.on_row(fork_row(2, 10, 20));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, EventKind::Fork);
  EXPECT_EQ(e->role, Role::Untracked);
  EXPECT_EQ(e->child_pid, 20u);
  EXPECT_EQ(m.tracked(20), std::nullopt);

  // Supervisor: 1, 2 (armed), then its next fork is the container, once.
  m.on_row(phase_row(3, 20, 20, 1));
  EXPECT_FALSE(m.on_row(execve_row(4, 20, "/bin/sh"))) << "launchers' execs are not reported";
  m.on_row(phase_row(5, 20, 20, 2));
  e = m.on_row(fork_row(6, 20, 21));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->role, Role::Container);
  EXPECT_EQ(e->hpid, 20u);
  e = m.on_row(fork_row(7, 20, 22));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->role, Role::Untracked) << "disarmed after the container fork";

  // Container phases do not re-tag it; its forks are members.
  m.on_row(phase_row(8, 21, 20, 11));
  EXPECT_EQ(m.tracked(21), (std::pair{20u, Role::Container}));
  e = m.on_row(fork_row(9, 21, 23));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->role, Role::Member);
  e = m.on_row(execve_row(10, 23, "/bin/worker"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, EventKind::Exec);
  EXPECT_EQ(e->filename, "/bin/worker");
  EXPECT_EQ(e->role, Role::Member);

  EXPECT_FALSE(m.on_row(listen_row(11, 21, -98))) << "failed listen";
  e = m.on_row(listen_row(12, 21, 0));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, EventKind::Listen);
  EXPECT_EQ(e->hpid, 20u);

  // Exits: tracked ones once, then untracked.
  e = m.on_row(row(13, "exit", 23));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->role, Role::Member);
  EXPECT_FALSE(m.on_row(row(14, "exit", 23)));
  EXPECT_FALSE(m.on_row(row(15, "exit", 22))) << "never tracked";
  e = m.on_row(row(16, "exit", 20));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->role, Role::Launcher);
  EXPECT_FALSE(m.on_row(fork_row(17, 99, 100))) << "fork by an untracked process";
}

// Phases of launches the kernel side does not track are dropped and counted:
// a flood of made-up hpids costs a lookup, not a record for the reader.
TEST(KernelModel, DropsPhasesOfLaunchesNotSeenStarting) {
  KernelModel m;
  EXPECT_FALSE(m.on_row(phase_row(1, 30, 5'000'000, 11))) << "a made-up hpid";
  EXPECT_FALSE(m.on_row(phase_row(2, 30, 31, 1))) << "START_SV under another pid starts nothing";
  EXPECT_FALSE(m.on_row(phase_row(3, 30, 30, 3))) << "a later phase under its own pid starts nothing";
  EXPECT_EQ(m.untracked_phases(), 3u);
  EXPECT_EQ(m.tracked(30), std::nullopt);

  // A launch seen starting: its supervisor's phases, its container's, and
  // those of a helper it forked (untracked) under its hpid are all sent.
  ASSERT_TRUE(m.on_row(phase_row(4, 20, 20, 1)));
  ASSERT_TRUE(m.on_row(phase_row(5, 20, 20, 2)));
  m.on_row(fork_row(6, 20, 21));
  m.on_row(fork_row(7, 20, 22));
  EXPECT_TRUE(m.on_row(phase_row(8, 21, 20, 11))) << "the container";
  EXPECT_TRUE(m.on_row(phase_row(9, 22, 20, 12))) << "an untracked helper of the supervisor";
  EXPECT_TRUE(m.on_row(phase_row(10, 20, 20, 3))) << "the supervisor";
  EXPECT_FALSE(m.on_row(phase_row(11, 21, 5'000'001, 12))) << "the container under another, unknown hpid";
  EXPECT_EQ(m.untracked_phases(), 4u);

  // Once the supervisor is gone, its helpers' phases are of no tracked launch.
  m.on_row(row(12, "exit", 20));
  EXPECT_FALSE(m.on_row(phase_row(13, 22, 20, 5)));
  EXPECT_TRUE(m.on_row(phase_row(14, 21, 20, 21))) << "the container still belongs to the launch";
  EXPECT_EQ(m.untracked_phases(), 5u);
}

class RealCaptureModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    events_ = new std::vector<Event>(
        KernelModel::replay(sorted_by_time(load_capture(test::fixtures_dir() / "real-haconiwa-3boots.tsv"))));
  }
  static void TearDownTestSuite() {
    delete events_;
    events_ = nullptr;
  }
  static std::vector<Event>* events_;
};
std::vector<Event>* RealCaptureModel::events_ = nullptr;

TEST_F(RealCaptureModel, LoadsEveryRow) {
  EXPECT_EQ(load_capture(test::fixtures_dir() / "real-haconiwa-3boots.tsv").size(), 364u);
}

TEST_F(RealCaptureModel, ExactlyThreeContainerForks) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> containers;
  for (const auto& e : *events_) {
    if (e.kind == EventKind::Fork && e.role == Role::Container) containers.emplace_back(e.hpid, e.child_pid);
  }
  EXPECT_EQ(containers,
            (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{9045, 9046}, {9083, 9086}, {9118, 9119}}));
}

TEST_F(RealCaptureModel, OnlyTheContainersExecsAreReported) {
  std::vector<std::pair<std::uint32_t, std::string>> execs;
  for (const auto& e : *events_) {
    if (e.kind == EventKind::Exec) execs.emplace_back(e.pid, e.filename);
  }
  EXPECT_EQ(execs, (std::vector<std::pair<std::uint32_t, std::string>>{
                       {9046, "/bin/busybox"}, {9086, "/bin/busybox"}, {9119, "/bin/busybox"}}));
}

// Real Haconiwa passes phases from its CLI, its supervisor and the container
// child: the kernel side must send every one of them, in either row order.
TEST_F(RealCaptureModel, EveryPhaseOfTheRealBootsIsSent) {
  const auto rows = load_capture(test::fixtures_dir() / "real-haconiwa-3boots.tsv");
  const auto phase_rows = static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.kind == "phase"; }));
  ASSERT_EQ(phase_rows, 54u);
  for (const auto& ordered : {rows, sorted_by_time(rows)}) {
    KernelModel m;
    std::size_t sent = 0;
    for (const auto& r : ordered) {
      const auto e = m.on_row(r);
      sent += e && e->kind == EventKind::Phase;
    }
    EXPECT_EQ(sent, phase_rows);
    EXPECT_EQ(m.untracked_phases(), 0u);
  }
}

TEST_F(RealCaptureModel, UnrelatedProcessesEmitNothing) {
  // bash, the boot script, sleep/date/curl, `haconiwa kill` and its sh/find.
  const std::set<std::uint32_t> unrelated{9013, 9027, 9038, 9055, 9057, 9058, 9059, 9094, 9095, 9130, 9131, 9140};
  for (const auto& e : *events_) {
    EXPECT_EQ(unrelated.count(e.pid), 0u) << "event from pid " << e.pid << " at " << e.ts_ns;
  }
}

}  // namespace
}  // namespace hacoboot::test
