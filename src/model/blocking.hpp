#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/kernel_symbols.hpp"
#include "model/lane.hpp"

namespace hacoboot {

// One blocking aggregate the kernel side kept for a boot: where one thread
// blocked within one segment of its time, in one call (kUserTime: a wait
// outside any, a page fault's), at one kernel stack, woken by one waker.
struct BlockingAggregate {
  std::uint32_t tid = 0;
  std::uint64_t segment_ns = 0;
  std::uint32_t nr = 0;
  std::uint64_t count = 0;    // blocked stretches
  std::uint64_t time_ns = 0;  // their time blocked (sleep and I/O)
  // Innermost first, named by KernelSymbols::describe, from the first frame
  // past the tracer's own (its BPF program, the tracepoint); empty: the
  // stack was not taken.
  std::vector<std::string> frames;
  std::uint32_t waker_tid = 0;  // 0: not woken by a traced thread
  std::vector<std::string> waker_frames;

  bool operator==(const BlockingAggregate&) const = default;
};

// A launch's blocking entries as the loader takes them (Tracer::take_blocking:
// hacoboot_blocking_key, _totals, _frames, addresses), their addresses named
// by `symbols`; nullopt when the bytes are not whole entries.
std::optional<std::vector<BlockingAggregate>> decode_blocking(std::span<const std::byte> bytes,
                                                              const KernelSymbols& symbols);

// Where a step blocked: one call at one stack, woken at one place.
struct BlockingPoint {
  std::uint32_t nr = 0;
  std::vector<std::string> frames;
  std::uint32_t waker_tid = 0;  // 0: none known, or several (across boots)
  // The waker's role in the boot; nullopt: no traced waker, one of another
  // launch, or wakers of different roles.
  std::optional<Lane> waker_lane;
  std::vector<std::string> waker_frames;
  std::uint64_t count = 0;
  std::uint64_t time_ns = 0;

  bool operator==(const BlockingPoint&) const = default;
  // Whether `other` is the same place (call, stacks): their figures add up.
  [[nodiscard]] bool same_place(const BlockingPoint& other) const {
    return nr == other.nr && frames == other.frames && waker_frames == other.waker_frames;
  }
};

// The lanes of a boot's threads by tid.
using ThreadLanes = std::map<std::uint32_t, Lane>;

// The points of thread `tid` in the segments beginning in [begin, end),
// the most time first, each waker's role read from `lanes` (none for a tid
// it does not hold).
std::vector<BlockingPoint> blocking_between(const std::vector<BlockingAggregate>& aggregates, std::uint32_t tid,
                                            std::uint64_t begin_ns, std::uint64_t end_ns, const ThreadLanes& lanes);

// Adds `point` to `points` (to the same place's figures when there is one;
// the waker's tid and role kept only when both agree), keeping the order.
void add_blocking_point(std::vector<BlockingPoint>& points, const BlockingPoint& point);

// A step's blocking points as the table shows them: those of one call
// whose stacks name the same wait and waking frames added up, the most
// time first.
struct BlockingSummary {
  std::uint32_t nr = 0;
  std::string wait;             // wait_frame
  std::string waking;           // waking_frame; empty without a traced waker
  std::uint32_t waker_tid = 0;  // 0: none known, or several
  std::optional<Lane> waker_lane;
  std::uint64_t count = 0;
  std::uint64_t time_ns = 0;

  bool operator==(const BlockingSummary&) const = default;
};
std::vector<BlockingSummary> summarize_blocking(const std::vector<BlockingPoint>& points);

// The first frame of a blocked stack that names the wait ("do_nanosleep",
// "pipe_read"), past the scheduler's and the tracer's own frames and raw
// addresses, without its offset; the first frame when all are such,
// kHiddenFrame when all are raw addresses; empty without frames.
std::string wait_frame(const std::vector<std::string>& frames);
// The same for a waker's stack: the first frame past the wakeup's own
// (try_to_wake_up, __wake_up_common...), "pipe_write".
std::string waking_frame(const std::vector<std::string>& frames);

// A blocked stack as a flame graph draws it under its call: outermost
// first, function names without their offsets and modules, from the first
// frame past the syscall's entry (entry_SYSCALL_64, do_syscall_64,
// __x64_sys_read...: the call's own frame says it) down to the wait_frame,
// the scheduler's frames below it left out: "ksys_read", "vfs_read",
// "anon_pipe_read". Every frame, reversed, when none is named.
std::vector<std::string> wait_path(const std::vector<std::string>& frames);

}  // namespace hacoboot
