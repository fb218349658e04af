#include "model/blocking.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <string_view>
#include <tuple>

#include "hacoboot/contract.h"
#include "model/ranked_points.hpp"

namespace hacoboot {

namespace {

struct BlockingHead {
  hacoboot_blocking_key key;
  hacoboot_blocking_totals totals;
  hacoboot_blocking_frames frames;
};

bool is_blocking_plumbing(std::string_view name) {
  // schedule, __schedule, schedule_timeout, io_schedule, schedule_hrtimeout_range_clock, ...
  constexpr std::array<std::string_view, 3> kWaitHelpers{"__wait_for_common", "wait_for_completion",
                                                         "do_wait_for_common"};
  return is_tracer_frame(name) || name.find("schedule") != std::string_view::npos ||
         starts_with_any(name, kWaitHelpers);
}

bool is_waking_plumbing(std::string_view name) {
  // try_to_wake_up, __wake_up_common, autoremove_wake_function, pollwake, wake_up_q, ttwu_...
  return is_tracer_frame(name) || name.find("wake") != std::string_view::npos || name.starts_with("ttwu");
}

// Added figures keep the waker's tid and role where both agree.
template <typename Point>
void keep_agreed_waker(Point& sum, const Point& added) {
  if (sum.waker_tid != added.waker_tid) sum.waker_tid = 0;
  if (sum.waker_lane != added.waker_lane) sum.waker_lane.reset();
}

std::optional<Lane> lane_in(const ThreadLanes& lanes, std::uint32_t tid) {
  const auto found = lanes.find(tid);
  return found == lanes.end() ? std::nullopt : std::optional(found->second);
}

}  // namespace

std::optional<std::vector<BlockingAggregate>> decode_blocking(std::span<const std::byte> bytes,
                                                              const KernelSymbols& symbols) {
  std::vector<BlockingAggregate> aggregates;
  while (!bytes.empty()) {
    BlockingHead head{};
    if (bytes.size() < sizeof head) return std::nullopt;
    std::memcpy(&head, bytes.data(), sizeof head);
    bytes = bytes.subspan(sizeof head);
    const std::size_t addresses = std::size_t{head.frames.frames} + head.frames.waker_frames;
    if (head.frames.frames > HACOBOOT_STACK_DEPTH || head.frames.waker_frames > HACOBOOT_STACK_DEPTH ||
        bytes.size() < addresses * sizeof(std::uint64_t)) {
      return std::nullopt;
    }
    const auto stack = bytes.first(head.frames.frames * sizeof(std::uint64_t));
    const auto waker = bytes.subspan(stack.size(), head.frames.waker_frames * sizeof(std::uint64_t));
    bytes = bytes.subspan(addresses * sizeof(std::uint64_t));
    aggregates.push_back({.tid = head.key.tid,
                          .segment_ns = head.key.segment_ns,
                          .nr = head.key.nr,
                          .count = head.totals.count,
                          .time_ns = head.totals.time_ns,
                          .frames = symbols.stack(stack, head.frames.frames),
                          .waker_tid = head.key.waker_tid,
                          .waker_frames = symbols.stack(waker, head.frames.waker_frames)});
  }
  // In a stable order whatever order the kernel's map gave them in.
  std::sort(aggregates.begin(), aggregates.end(), [](const BlockingAggregate& a, const BlockingAggregate& b) {
    return std::tie(a.tid, a.segment_ns, a.nr, a.frames, a.waker_tid, a.waker_frames) <
           std::tie(b.tid, b.segment_ns, b.nr, b.frames, b.waker_tid, b.waker_frames);
  });
  return aggregates;
}

void add_blocking_point(std::vector<BlockingPoint>& points, const BlockingPoint& point) {
  auto same = std::find_if(points.begin(), points.end(),
                           [&point](const BlockingPoint& mine) { return mine.same_place(point); });
  if (same == points.end()) {
    points.push_back(point);
    same = std::prev(points.end());
  } else {
    same->count += point.count;
    same->time_ns += point.time_ns;
    keep_agreed_waker(*same, point);
  }
  move_up_ranked(points, same, [](const BlockingPoint& mine) { return mine.time_ns; });
}

std::vector<BlockingPoint> blocking_between(const std::vector<BlockingAggregate>& aggregates, std::uint32_t tid,
                                            std::uint64_t begin_ns, std::uint64_t end_ns, const ThreadLanes& lanes) {
  std::vector<BlockingPoint> points;
  for (const auto& aggregate : aggregates) {
    if (aggregate.tid != tid || aggregate.segment_ns < begin_ns || aggregate.segment_ns >= end_ns) continue;
    add_blocking_point(points, {.nr = aggregate.nr,
                                .frames = aggregate.frames,
                                .waker_tid = aggregate.waker_tid,
                                .waker_lane = lane_in(lanes, aggregate.waker_tid),
                                .waker_frames = aggregate.waker_frames,
                                .count = aggregate.count,
                                .time_ns = aggregate.time_ns});
  }
  return points;
}

std::vector<BlockingSummary> summarize_blocking(const std::vector<BlockingPoint>& points) {
  std::vector<BlockingSummary> summaries;
  for (const auto& point : points) {
    BlockingSummary summary{.nr = point.nr,
                            .wait = wait_frame(point.frames),
                            .waking = waking_frame(point.waker_frames),
                            .waker_tid = point.waker_tid,
                            .waker_lane = point.waker_lane,
                            .count = point.count,
                            .time_ns = point.time_ns};
    auto same = std::find_if(summaries.begin(), summaries.end(), [&summary](const BlockingSummary& mine) {
      return std::tie(mine.nr, mine.wait, mine.waking) == std::tie(summary.nr, summary.wait, summary.waking);
    });
    if (same == summaries.end()) {
      summaries.push_back(std::move(summary));
      continue;
    }
    same->count += summary.count;
    same->time_ns += summary.time_ns;
    keep_agreed_waker(*same, summary);
  }
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const BlockingSummary& a, const BlockingSummary& b) { return a.time_ns > b.time_ns; });
  return summaries;
}

std::string wait_frame(const std::vector<std::string>& frames) {
  return first_named_frame(frames, is_blocking_plumbing);
}

std::string waking_frame(const std::vector<std::string>& frames) {
  return first_named_frame(frames, is_waking_plumbing);
}

std::vector<std::string> wait_path(const std::vector<std::string>& frames) {
  const auto wait = first_named_at(frames, is_blocking_plumbing);
  if (wait == frames.end()) return {};
  const auto entry = std::find_if(std::next(wait), frames.end(), is_syscall_entry);
  std::vector<std::string> path;
  for (auto frame = entry; frame != wait;) path.emplace_back(symbol_of(*--frame));
  return path;
}

}  // namespace hacoboot
