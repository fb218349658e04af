// Where a step's calls blocked: kernel addresses named from a /proc/kallsyms
// text, the loader's layout decoded, the wait's short form chosen, and the
// JSON a reader gets.
#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hacoboot/contract.h"
#include "model/blocking.hpp"
#include "model/kernel_symbols.hpp"
#include "report/sched_json.hpp"

namespace hacoboot {
namespace {

// Out of order, with a data symbol, a module's symbol and a malformed line.
constexpr const char* kKallsyms =
    "ffffffff81200000 T do_nanosleep\n"
    "ffffffff81100000 T __schedule\n"
    "ffffffff81100800 T schedule\n"
    "ffffffff81300000 D some_data\n"
    "not an address line\n"
    "ffffffffc0400000 t jbd2_log_wait_commit\t[jbd2]\n"
    "ffffffff81400000 t anon_pipe_write\n"
    "ffffffff81000000 t bpf_trace_run4\n";

TEST(KernelSymbols, NameAnAddressByTheNearestTextSymbolAtOrBelowIt) {
  const auto symbols = KernelSymbols::parse(kKallsyms);
  ASSERT_FALSE(symbols.hidden());
  EXPECT_EQ(symbols.describe(0xffffffff8120006eU), "do_nanosleep+0x6e");
  EXPECT_EQ(symbols.describe(0xffffffff81100000U), "__schedule+0x0");
  // The data symbol is no text: the nearest text symbol below names it.
  EXPECT_EQ(symbols.describe(0xffffffff81300010U), "do_nanosleep+0x100010");
  EXPECT_EQ(symbols.describe(0xffffffffc0400020U), "jbd2_log_wait_commit+0x20 [jbd2]");
  EXPECT_EQ(symbols.describe(0x1000U), "0x1000");
}

TEST(KernelSymbols, HiddenAddressesLeaveThemRaw) {
  // kptr_restrict: every address 0.
  const auto symbols = KernelSymbols::parse(
      "0000000000000000 T do_nanosleep\n"
      "0000000000000000 T schedule\n");
  EXPECT_TRUE(symbols.hidden());
  EXPECT_EQ(symbols.describe(0xffffffff8120006eU), "0xffffffff8120006e");
}

template <typename T>
void append(std::vector<std::byte>& bytes, const T& value) {
  const auto* begin = reinterpret_cast<const std::byte*>(&value);
  bytes.insert(bytes.end(), begin, begin + sizeof value);
}

TEST(BlockingAggregates, DecodeTheLoadersLayoutWithoutTheTracersFrames) {
  std::vector<std::byte> bytes;
  append(bytes, hacoboot_blocking_key{.segment_ns = 1'000,
                                      .launch = 7,
                                      .tid = 12,
                                      .nr = SYS_read,
                                      .stack_id = 3,
                                      .waker_tid = 14,
                                      .waker_stack_id = 4});
  append(bytes, hacoboot_blocking_totals{.count = 2, .time_ns = 5'000});
  append(bytes, hacoboot_blocking_frames{.frames = 3, .waker_frames = 1});
  for (const std::uint64_t address : {0xffffffff81000010U, 0xffffffff81100808U, 0xffffffff81200004U}) {
    append(bytes, address);
  }
  append(bytes, std::uint64_t{0xffffffff81400040U});
  const auto aggregates = decode_blocking(bytes, KernelSymbols::parse(kKallsyms));
  ASSERT_TRUE(aggregates.has_value());
  ASSERT_EQ(aggregates->size(), 1U);
  EXPECT_EQ(aggregates->front(), (BlockingAggregate{.tid = 12,
                                                    .segment_ns = 1'000,
                                                    .nr = SYS_read,
                                                    .count = 2,
                                                    .time_ns = 5'000,
                                                    .frames = {"schedule+0x8", "do_nanosleep+0x4"},
                                                    .waker_tid = 14,
                                                    .waker_frames = {"anon_pipe_write+0x40"}}));
  // Cut short: no whole entry.
  bytes.pop_back();
  EXPECT_FALSE(decode_blocking(bytes, KernelSymbols::parse(kKallsyms)).has_value());
}

TEST(BlockingShortForm, TheFirstFrameThatNamesTheWait) {
  EXPECT_EQ(wait_frame({"__schedule+0x628", "schedule+0x23", "do_nanosleep+0x6e", "hrtimer_nanosleep+0xd0"}),
            "do_nanosleep");
  EXPECT_EQ(wait_frame({"__schedule+0x628", "schedule+0x23", "schedule_timeout+0x9e", "__wait_for_common+0x9a",
                        "wait_for_completion_io+0x1a", "submit_bio_wait+0x5b"}),
            "submit_bio_wait");
  EXPECT_EQ(wait_frame({"__schedule+0x1", "io_schedule+0x4", "jbd2_log_wait_commit+0x9 [jbd2]"}),
            "jbd2_log_wait_commit");
  EXPECT_EQ(wait_frame({"schedule+0x23", "anon_pipe_read+0x4fa"}), "anon_pipe_read");
  // All plumbing: the first frame.
  EXPECT_EQ(wait_frame({"__schedule+0x1", "schedule+0x23"}), "__schedule");
  // Raw addresses (kptr_restrict): the first is the tracer's own program,
  // in every stack; named nothing, not that. An unnamed frame among named ones is passed.
  EXPECT_EQ(wait_frame({"0xffffffffc002f4af", "0xffffffff814cc73d"}), kHiddenFrame);
  EXPECT_EQ(waking_frame({"0xffffffffc00304da", "0xffffffff814cc1ae"}), kHiddenFrame);
  EXPECT_EQ(wait_frame({"schedule+0x23", "0xffffffff81100808", "do_nanosleep+0x6e"}), "do_nanosleep");
  EXPECT_EQ(wait_frame({}), "");
  EXPECT_EQ(waking_frame({"try_to_wake_up+0x3b6", "autoremove_wake_function+0x12", "__wake_up_common+0x72",
                          "__wake_up_sync_key+0x3f", "anon_pipe_write+0x3ad", "vfs_write+0x400"}),
            "anon_pipe_write");
}

// The path a flame graph draws under a call: from past the syscall's entry
// to the wait, outermost first, names alone.
TEST(BlockingFrames, TheWaitPathRunsFromTheCallsEntryToTheWait) {
  EXPECT_EQ(wait_path({"__schedule+0x628", "schedule+0x23", "schedule_timeout+0xb6", "io_schedule_timeout+0x51",
                       "wait_for_completion_io_timeout+0x7f", "submit_bio_wait+0x74", "blkdev_issue_flush+0x1c",
                       "ext4_sync_file+0x2a [ext4]", "__x64_sys_fsync+0x3b", "do_syscall_64+0x71",
                       "entry_SYSCALL_64_after_hwframe+0x76"}),
            (std::vector<std::string>{"ext4_sync_file", "blkdev_issue_flush", "submit_bio_wait"}));
  // A wait in the call's own frame keeps it.
  EXPECT_EQ(wait_path({"__schedule+0x1", "schedule+0x2", "__x64_sys_pause+0x3", "do_syscall_64+0x4"}),
            (std::vector<std::string>{"__x64_sys_pause"}));
  // Raw addresses (kptr_restrict): all of them, outermost first.
  EXPECT_EQ(wait_path({"0xffffffff81100808", "0xffffffff81200004"}),
            (std::vector<std::string>{"0xffffffff81200004", "0xffffffff81100808"}));
  EXPECT_TRUE(wait_path({}).empty());
}

TEST(BlockingPoints, AStepSumsItsSegmentsAndTheTableByTheirShortForm) {
  const std::vector<BlockingAggregate> aggregates{
      {.tid = 5,
       .segment_ns = 100,
       .nr = SYS_read,
       .count = 1,
       .time_ns = 300,
       .frames = {"schedule+0x1", "pipe_read+0x2"}},
      {.tid = 5,
       .segment_ns = 200,
       .nr = SYS_read,
       .count = 2,
       .time_ns = 500,
       .frames = {"schedule+0x1", "pipe_read+0x2"}},
      // Another stack under the same wait: one line in the table.
      {.tid = 5,
       .segment_ns = 200,
       .nr = SYS_read,
       .count = 1,
       .time_ns = 50,
       .frames = {"schedule+0x9", "pipe_read+0x2"}},
      {.tid = 5, .segment_ns = 400, .nr = SYS_fsync, .count = 1, .time_ns = 900, .frames = {"io_schedule+0x1"}},
      {.tid = 6, .segment_ns = 200, .nr = SYS_fsync, .count = 1, .time_ns = 900, .frames = {"io_schedule+0x1"}}};
  const auto points = blocking_between(aggregates, 5, 100, 400, {});
  ASSERT_EQ(points.size(), 2U);
  EXPECT_EQ(points[0].count, 3U);
  EXPECT_EQ(points[0].time_ns, 800U);
  EXPECT_EQ(summarize_blocking(points),
            (std::vector<BlockingSummary>{{.nr = SYS_read, .wait = "pipe_read", .count = 4, .time_ns = 850}}));
}

// The supervisor's read woken by the container, twice: its role is the
// container's, from the boot's lanes; a waker the boot has no lane for (a
// thread of another launch) has none.
TEST(BlockingPoints, AWakerOfTheBootIsNamedByItsLane) {
  const std::vector<std::string> read{"schedule+0x1", "pipe_read+0x2"};
  const std::vector<std::string> write{"try_to_wake_up+0x3b6", "pipe_write+0x4"};
  const std::vector<BlockingAggregate> aggregates{{.tid = 5,
                                                   .segment_ns = 100,
                                                   .nr = SYS_read,
                                                   .count = 1,
                                                   .time_ns = 300,
                                                   .frames = read,
                                                   .waker_tid = 14,
                                                   .waker_frames = write},
                                                  {.tid = 5,
                                                   .segment_ns = 200,
                                                   .nr = SYS_read,
                                                   .count = 1,
                                                   .time_ns = 200,
                                                   .frames = read,
                                                   .waker_tid = 14,
                                                   .waker_frames = write},
                                                  {.tid = 5,
                                                   .segment_ns = 200,
                                                   .nr = SYS_fsync,
                                                   .count = 1,
                                                   .time_ns = 100,
                                                   .frames = {"io_schedule+0x1"},
                                                   .waker_tid = 99,
                                                   .waker_frames = {"blk_mq_end_request+0x1"}}};
  const ThreadLanes lanes{{5, Lane::Supervisor}, {14, Lane::Container}};
  const auto points = blocking_between(aggregates, 5, 100, 300, lanes);
  ASSERT_EQ(points.size(), 2U);
  EXPECT_EQ(points[0].waker_tid, 14U);
  EXPECT_EQ(points[0].waker_lane, Lane::Container);
  EXPECT_EQ(points[0].time_ns, 500U);
  EXPECT_EQ(points[1].waker_tid, 99U);
  EXPECT_EQ(points[1].waker_lane, std::nullopt);
  EXPECT_EQ(summarize_blocking(points).front().waker_lane, Lane::Container);
}

// Across boots the waker's tid differs and its role does not: the role
// stays; wakers of two roles leave none.
TEST(BlockingPoints, AddedPointsKeepTheRoleTheirWakersShare) {
  const BlockingPoint container{.nr = SYS_read,
                                .frames = {"pipe_read+0x2"},
                                .waker_tid = 14,
                                .waker_lane = Lane::Container,
                                .waker_frames = {"pipe_write+0x4"},
                                .count = 1,
                                .time_ns = 300};
  std::vector<BlockingPoint> points{container};
  auto next_boot = container;
  next_boot.waker_tid = 24;
  add_blocking_point(points, next_boot);
  ASSERT_EQ(points.size(), 1U);
  EXPECT_EQ(points[0].count, 2U);
  EXPECT_EQ(points[0].waker_tid, 0U);
  EXPECT_EQ(points[0].waker_lane, Lane::Container);
  auto other = container;
  other.waker_lane = Lane::Other;
  add_blocking_point(points, other);
  EXPECT_EQ(points[0].waker_lane, std::nullopt);
}

// Points come one by one (a step's aggregates, then every boot's steps):
// each place once, the most time first, equal times in the order they came.
TEST(BlockingPoints, AddedOneByOneTheyStayTheMostTimeFirst) {
  const auto at = [](std::string frame, std::uint64_t time_ns) {
    return BlockingPoint{.nr = SYS_read, .frames = {std::move(frame)}, .count = 1, .time_ns = time_ns};
  };
  std::vector<BlockingPoint> points;
  for (const auto& point : {at("a", 10), at("b", 30), at("c", 20), at("d", 20), at("a", 25), at("d", 0)}) {
    add_blocking_point(points, point);
  }
  std::vector<std::pair<std::string, std::uint64_t>> order;
  for (const auto& point : points) order.emplace_back(point.frames.front(), point.time_ns);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, std::uint64_t>>{{"a", 35}, {"b", 30}, {"c", 20}, {"d", 20}}));
  EXPECT_EQ(points.front().count, 2U);
}

TEST(BlockingJson, EachPointWithItsFramesAndWaker) {
  StepSyscalls step;
  step.blocking = {{.nr = SYS_read,
                    .frames = {"pipe_read+0x2"},
                    .waker_tid = 14,
                    .waker_lane = Lane::Container,
                    .waker_frames = {"pipe_write+0x4"},
                    .count = 1,
                    .time_ns = 300},
                   {.nr = SYS_clock_nanosleep, .frames = {"do_nanosleep+0x6e"}, .count = 1, .time_ns = 200}};
  const auto json = syscalls_json(step);
  ASSERT_EQ(json["blocking"].size(), 2U);
  EXPECT_EQ(json["blocking"][0],
            nlohmann::ordered_json::parse(R"({"name": "read", "nr": )" + std::to_string(SYS_read) +
                                          R"(, "time_ns": 300, "count": 1, "frames": ["pipe_read+0x2"],
                                "waker": {"tid": 14, "role": "container", "frames": ["pipe_write+0x4"]}})"));
  EXPECT_EQ(json["blocking"][1]["name"], "clock_nanosleep");
  EXPECT_TRUE(json["blocking"][1]["waker"].is_null());
}

}  // namespace
}  // namespace hacoboot
