#include "model/critical_path.hpp"

#include <algorithm>
#include <iterator>
#include <map>

namespace hacoboot {

std::uint64_t CriticalPath::duration() const {
  std::uint64_t sum = 0;
  for (const auto& piece : pieces) sum += piece.duration();
  return sum;
}

SchedTotals CriticalPath::states() const {
  SchedTotals sum;
  for (const auto& piece : pieces) {
    if (piece.states) sum += *piece.states;
  }
  return sum;
}

std::uint64_t CriticalPath::noise_free() const {
  return duration() - states().run_queue;
}

namespace {

// Everything known of one thread: every reading of its totals (its events,
// its end of each wakeup, its creation) and the wakeups that ended its waits.
struct ThreadReadings {
  const ThreadTimeline* timeline = nullptr;  // null for a waker seen only in wakeups
  std::vector<ThreadSample> readings;        // time order
  std::vector<const WakeupEdge*> woken;      // time order
};

using ThreadIndex = std::map<std::uint32_t, ThreadReadings>;

ThreadIndex index_threads(const std::vector<ThreadTimeline>& threads, const std::vector<WakeupEdge>& wakeups) {
  ThreadIndex index;
  for (const auto& thread : threads) {
    auto& entry = index[thread.tid];
    entry.timeline = &thread;
    entry.readings = thread.samples;
    if (thread.parent_tid) entry.readings.push_back({thread.created_ns, {}, std::nullopt});
  }
  for (const auto& wakeup : wakeups) {
    index[wakeup.waker_tid].readings.push_back({wakeup.ts_ns, wakeup.waker_totals, std::nullopt});
    auto& wakee = index[wakeup.wakee_tid];
    wakee.readings.push_back({wakeup.ts_ns, wakeup.wakee_totals, std::nullopt});
    wakee.woken.push_back(&wakeup);
  }
  for (auto& [tid, entry] : index) {
    std::stable_sort(entry.readings.begin(), entry.readings.end(),
                     [](const ThreadSample& a, const ThreadSample& b) { return a.ts_ns < b.ts_ns; });
    std::stable_sort(entry.woken.begin(), entry.woken.end(),
                     [](const WakeupEdge* a, const WakeupEdge* b) { return a->ts_ns < b->ts_ns; });
  }
  return index;
}

// Where the path goes before `at` on a thread: the latest wakeup that ended
// one of its waits, or its creation, whichever is later; nullopt when the
// thread ran on its own since the start.
std::optional<ThreadInstant> predecessor(const ThreadReadings& thread, std::uint64_t at, std::uint64_t start_ns) {
  std::optional<ThreadInstant> before;
  // Strictly earlier, so that every hop moves back in time.
  const auto after = std::lower_bound(thread.woken.begin(), thread.woken.end(), at,
                                      [](const WakeupEdge* edge, std::uint64_t ts) { return edge->ts_ns < ts; });
  if (after != thread.woken.begin()) {
    const WakeupEdge* latest = *std::prev(after);
    if (latest->ts_ns >= start_ns) before = ThreadInstant{latest->waker_tid, latest->ts_ns};
  }
  const ThreadTimeline* timeline = thread.timeline;
  if (timeline != nullptr && timeline->parent_tid && timeline->created_ns >= start_ns && timeline->created_ns <= at &&
      (!before || timeline->created_ns > before->ts_ns)) {
    before = ThreadInstant{*timeline->parent_tid, timeline->created_ns};
  }
  return before;
}

struct Segment {
  std::uint32_t tid = 0;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
};

// The path's stretches per thread, from the start to the target.
std::vector<Segment> walk_back(const ThreadIndex& index, ThreadInstant start, ThreadInstant target) {
  std::vector<Segment> segments;
  ThreadInstant at = target;
  // Each hop moves back in time or up the fork tree; the bound only guards
  // against a fork cycle in corrupt input.
  std::size_t hops_left = index.size();
  for (const auto& [tid, thread] : index) hops_left += thread.woken.size();
  for (;;) {
    const auto thread = index.find(at.tid);
    const auto before =
        thread == index.end() || hops_left-- == 0 ? std::nullopt : predecessor(thread->second, at.ts_ns, start.ts_ns);
    if (!before) {
      segments.push_back({at.tid, start.ts_ns, at.ts_ns});
      break;
    }
    segments.push_back({at.tid, before->ts_ns, at.ts_ns});
    at = *before;
  }
  std::reverse(segments.begin(), segments.end());
  return segments;
}

std::optional<SchedTotals> totals_at(const std::vector<ThreadSample>& readings, std::uint64_t ts) {
  const auto reading =
      std::find_if(readings.begin(), readings.end(), [ts](const ThreadSample& sample) { return sample.ts_ns == ts; });
  if (reading == readings.end()) return std::nullopt;
  return reading->totals;
}

std::optional<Step> step_ending_at_or_after(const std::vector<ThreadSample>& readings, std::uint64_t ts) {
  const auto next = std::find_if(readings.begin(), readings.end(), [ts](const ThreadSample& sample) {
    return sample.ts_ns >= ts && sample.step.has_value();
  });
  if (next == readings.end()) return std::nullopt;
  return next->step;
}

PathPiece make_piece(const std::vector<ThreadSample>& readings, std::uint32_t tid, std::uint64_t begin,
                     std::uint64_t end) {
  PathPiece piece{tid, step_ending_at_or_after(readings, end), begin, end, std::nullopt};
  const auto first = totals_at(readings, begin);
  const auto last = totals_at(readings, end);
  if (first && last) piece.states = *last - *first;
  return piece;
}

// A segment cut at every reading of its thread inside it, so that each piece
// lies in one step and has exact states.
void cut(const ThreadIndex& index, const Segment& segment, std::vector<PathPiece>& pieces) {
  static const std::vector<ThreadSample> kNone;
  const auto thread = index.find(segment.tid);
  const auto& readings = thread == index.end() ? kNone : thread->second.readings;
  std::uint64_t begin = segment.begin_ns;
  for (const auto& reading : readings) {
    if (reading.ts_ns <= begin || reading.ts_ns >= segment.end_ns) continue;
    pieces.push_back(make_piece(readings, segment.tid, begin, reading.ts_ns));
    begin = reading.ts_ns;
  }
  pieces.push_back(make_piece(readings, segment.tid, begin, segment.end_ns));
}

}  // namespace

CriticalPath critical_path(const std::vector<ThreadTimeline>& threads, const std::vector<WakeupEdge>& wakeups,
                           ThreadInstant start, ThreadInstant target) {
  CriticalPath path;
  if (target.ts_ns < start.ts_ns) return path;
  const ThreadIndex index = index_threads(threads, wakeups);
  for (const auto& segment : walk_back(index, start, target)) {
    if (segment.end_ns > segment.begin_ns) cut(index, segment, path.pieces);
  }
  return path;
}

namespace {

std::optional<CriticalPath> path_to(const BootRecord& boot, const std::optional<std::uint64_t>& milestone_ns,
                                    std::uint32_t milestone_tid) {
  // A milestone before the start (--from a later phase) is not reached: no path, not one of length 0.
  if (!boot.start_ns || !milestone_ns || *milestone_ns < *boot.start_ns || boot.start_tid == 0 || milestone_tid == 0) {
    return std::nullopt;
  }
  return critical_path(boot.threads, boot.wakeups, {boot.start_tid, *boot.start_ns}, {milestone_tid, *milestone_ns});
}

}  // namespace

std::optional<CriticalPath> path_to_execve(const BootRecord& boot) {
  return path_to(boot, boot.execve_ns, boot.execve_tid);
}

std::optional<CriticalPath> path_to_listen(const BootRecord& boot) {
  return path_to(boot, boot.listen_ns, boot.listen_tid);
}

}  // namespace hacoboot
