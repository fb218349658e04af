// decode_event: one ring-buffer record -> Event, as the BPF side lays it out
// (include/hacoboot/contract.h). Most kinds are reserved with the base size only; exec
// events carry the full struct with the filename, wakeups the wakee.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hacoboot/contract.h"
#include "model/event.hpp"

namespace hacoboot {
namespace {

hacoboot_event raw_event(unsigned int kind, unsigned int role = 0) {
  hacoboot_event raw{};
  raw.ts_ns = 123'456'789'012ULL;
  raw.cgroup_id = 77;
  raw.kind = kind;
  raw.pid = 9046;
  raw.hpid = 9045;
  raw.role = role;
  return raw;
}

// The first `size` bytes of the record, as the ring buffer hands them over.
std::vector<std::byte> bytes_of(const hacoboot_event& raw, std::size_t size) {
  std::vector<std::byte> record(size);
  if (size > 0) std::memcpy(record.data(), &raw, std::min(size, sizeof raw));  // data() may be null when empty
  return record;
}

std::optional<Event> decode(const hacoboot_event& raw, std::size_t size) {
  const auto record = bytes_of(raw, size);
  return decode_event(record);
}

TEST(DecodeEvent, PhaseCarriesPhaseNumberAndCommonFields) {
  auto raw = raw_event(HACOBOOT_EV_PHASE);
  raw.arg = 21;
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Phase);
  EXPECT_EQ(e->ts_ns, 123'456'789'012ULL);
  EXPECT_EQ(e->cgroup_id, 77u);
  EXPECT_EQ(e->pid, 9046u);
  EXPECT_EQ(e->hpid, 9045u);
  EXPECT_EQ(e->role, Role::Untracked);
  EXPECT_EQ(e->phase, 21);
  // Fields of other kinds stay zero.
  EXPECT_EQ(e->child_pid, 0u);
  EXPECT_TRUE(e->filename.empty());
}

TEST(DecodeEvent, ForkCarriesChildPidAndChildRole) {
  auto raw = raw_event(HACOBOOT_EV_FORK, HACOBOOT_ROLE_CONTAINER);
  raw.arg = 9046;
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Fork);
  EXPECT_EQ(e->child_pid, 9046u);
  EXPECT_EQ(e->role, Role::Container);
  EXPECT_EQ(e->phase, 0);
}

TEST(DecodeEvent, ThreadCarriesTheNewThreadsTidAndItsProcesssRole) {
  auto raw = raw_event(HACOBOOT_EV_THREAD, HACOBOOT_ROLE_MEMBER);
  raw.arg = 9050;
  raw.tid = 9046;
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Thread);
  EXPECT_EQ(e->child_pid, 9050u);
  EXPECT_EQ(e->tid, 9046u);
  EXPECT_EQ(e->role, Role::Member);
}

TEST(DecodeEvent, ListenFromAMember) {
  auto raw = raw_event(HACOBOOT_EV_LISTEN, HACOBOOT_ROLE_MEMBER);
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Listen);
  EXPECT_EQ(e->role, Role::Member);
}

TEST(DecodeEvent, ExitOfALauncherCarriesItsWaitStatus) {
  auto raw = raw_event(HACOBOOT_EV_EXIT, HACOBOOT_ROLE_LAUNCHER);
  raw.arg = 1 << 8;  // exited 1
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Exit);
  EXPECT_EQ(e->role, Role::Launcher);
  EXPECT_EQ(e->exit_status, 1 << 8);
}

TEST(DecodeEvent, ExecCarriesFilenameUpToTheNul) {
  auto raw = raw_event(HACOBOOT_EV_EXEC, HACOBOOT_ROLE_CONTAINER);
  std::memcpy(raw.filename, "/bin/busybox\0garbage", 20);
  const auto e = decode(raw, sizeof raw);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Exec);
  EXPECT_EQ(e->filename, "/bin/busybox");
  EXPECT_EQ(e->role, Role::Container);
}

TEST(DecodeEvent, ExecFilenameWithoutNulIsBoundedByTheField) {
  auto raw = raw_event(HACOBOOT_EV_EXEC, HACOBOOT_ROLE_MEMBER);
  std::memset(raw.filename, 'a', sizeof raw.filename);  // no terminator at all
  const auto e = decode(raw, sizeof raw);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->filename, std::string(HACOBOOT_FILENAME_LEN, 'a'));
}

TEST(DecodeEvent, ExecWithEmptyFilename) {
  const auto e = decode(raw_event(HACOBOOT_EV_EXEC, HACOBOOT_ROLE_CONTAINER), sizeof(hacoboot_event));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->filename, "");
}

TEST(DecodeEvent, EveryRoleValue) {
  const std::pair<unsigned int, Role> roles[] = {{0, Role::Untracked},
                                                 {HACOBOOT_ROLE_LAUNCHER, Role::Launcher},
                                                 {HACOBOOT_ROLE_CONTAINER, Role::Container},
                                                 {HACOBOOT_ROLE_MEMBER, Role::Member}};
  for (const auto& [value, role] : roles) {
    const auto e = decode(raw_event(HACOBOOT_EV_FORK, value), HACOBOOT_EVENT_BASE_SIZE);
    ASSERT_TRUE(e.has_value()) << "role " << value;
    EXPECT_EQ(e->role, role) << "role " << value;
  }
}

TEST(DecodeEvent, RecordShorterThanTheBaseIsRejected) {
  for (std::size_t size : {std::size_t{0}, std::size_t{8}, HACOBOOT_EVENT_BASE_SIZE - 1}) {
    EXPECT_FALSE(decode(raw_event(HACOBOOT_EV_PHASE), size).has_value()) << size << " bytes";
  }
}

TEST(DecodeEvent, ExecRecordWithoutItsFilenameIsRejected) {
  const auto raw = raw_event(HACOBOOT_EV_EXEC, HACOBOOT_ROLE_CONTAINER);
  EXPECT_FALSE(decode(raw, HACOBOOT_EVENT_BASE_SIZE).has_value());
  EXPECT_FALSE(decode(raw, sizeof raw - 1).has_value());
}

TEST(DecodeEvent, NonExecRecordOfFullSizeStillDecodes) {
  auto raw = raw_event(HACOBOOT_EV_PHASE);
  raw.arg = 3;
  const auto e = decode(raw, sizeof raw);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->phase, 3);
}

TEST(DecodeEvent, UnknownKindIsRejected) {
  for (unsigned int kind : {0u, 7u, 0xffffffffu}) {
    EXPECT_FALSE(decode(raw_event(kind), sizeof(hacoboot_event)).has_value()) << "kind " << kind;
  }
}

TEST(DecodeEvent, UnknownRoleIsRejected) {
  for (unsigned int role : {4u, 0xffffffffu}) {
    EXPECT_FALSE(decode(raw_event(HACOBOOT_EV_LISTEN, role), HACOBOOT_EVENT_BASE_SIZE).has_value()) << "role " << role;
  }
}

void set_totals(hacoboot_sched_totals& totals, unsigned long long first) {
  for (unsigned long long& ns : totals.ns) ns = first++;
}

TEST(DecodeEvent, EventCarriesItsThreadAndItsSchedulerTotalsByState) {
  auto raw = raw_event(HACOBOOT_EV_LISTEN, HACOBOOT_ROLE_MEMBER);
  raw.tid = 9047;
  raw.flags = HACOBOOT_EVENT_SCHED;
  raw.sched.ns[HACOBOOT_SCHED_CPU] = 1;
  raw.sched.ns[HACOBOOT_SCHED_RUN_QUEUE] = 2;
  raw.sched.ns[HACOBOOT_SCHED_SLEEP] = 3;
  raw.sched.ns[HACOBOOT_SCHED_IO] = 4;
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->tid, 9047u);
  EXPECT_EQ(e->sched, (SchedTotals{.cpu = 1, .run_queue = 2, .sleep = 3, .io = 4}));
  EXPECT_FALSE(e->wakee.has_value());
}

TEST(DecodeEvent, ThreadNotAccountedHasNoTotals) {
  auto raw = raw_event(HACOBOOT_EV_PHASE);
  set_totals(raw.sched, 1);  // whatever the record holds: the flag says they are not the thread's
  const auto e = decode(raw, HACOBOOT_EVENT_BASE_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->sched.has_value());
}

TEST(DecodeEvent, WakeupCarriesWakerAndWakeeWithTheirTotals) {
  auto raw = raw_event(HACOBOOT_EV_WAKEUP, HACOBOOT_ROLE_CONTAINER);
  raw.launch = 5;
  raw.tid = 9046;
  raw.flags = HACOBOOT_EVENT_SCHED;
  set_totals(raw.sched, 10);
  raw.arg = 9045;
  raw.wakee = hacoboot_wakee{.pid = 9045, .tid = 9045, .hpid = 9045, .launch = 5, .role = HACOBOOT_ROLE_LAUNCHER};
  set_totals(raw.wakee.sched, 20);
  const auto e = decode(raw, HACOBOOT_WAKEUP_EVENT_SIZE);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::Wakeup);
  EXPECT_EQ(e->pid, 9046u);
  EXPECT_EQ(e->role, Role::Container);
  EXPECT_EQ(e->sched, (SchedTotals{.cpu = 10, .run_queue = 11, .sleep = 12, .io = 13}));
  ASSERT_TRUE(e->wakee.has_value());
  EXPECT_EQ(*e->wakee, (Wakee{.pid = 9045,
                              .tid = 9045,
                              .hpid = 9045,
                              .launch = 5,
                              .role = Role::Launcher,
                              .sched = {.cpu = 20, .run_queue = 21, .sleep = 22, .io = 23}}));
}

TEST(DecodeEvent, WakeupRecordWithoutItsWakeeIsRejected) {
  const auto raw = raw_event(HACOBOOT_EV_WAKEUP, HACOBOOT_ROLE_CONTAINER);
  EXPECT_FALSE(decode(raw, HACOBOOT_EVENT_BASE_SIZE).has_value());
  EXPECT_FALSE(decode(raw, HACOBOOT_WAKEUP_EVENT_SIZE - 1).has_value());
}

TEST(DecodeEvent, WakeupOfUnknownWakeeRoleIsRejected) {
  auto raw = raw_event(HACOBOOT_EV_WAKEUP, HACOBOOT_ROLE_CONTAINER);
  raw.wakee.role = 4;
  EXPECT_FALSE(decode(raw, HACOBOOT_WAKEUP_EVENT_SIZE).has_value());
}

TEST(SchedTotals, StepIsTheDifferenceStateByState) {
  const SchedTotals earlier{.cpu = 1, .run_queue = 2, .sleep = 3, .io = 4};
  const SchedTotals later{.cpu = 11, .run_queue = 2, .sleep = 33, .io = 5};
  const SchedTotals step = later - earlier;
  EXPECT_EQ(step, (SchedTotals{.cpu = 10, .run_queue = 0, .sleep = 30, .io = 1}));
  EXPECT_EQ(step.total(), later.total() - earlier.total());
}

}  // namespace
}  // namespace hacoboot
