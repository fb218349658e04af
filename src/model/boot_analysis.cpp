#include "model/boot_analysis.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "model/phases.hpp"

namespace hacoboot {

std::optional<std::uint64_t> BootAnalysis::noise_free_listen() const {
  if (!to_listen || forks_only) return std::nullopt;
  return to_listen->noise_free();
}

std::optional<std::uint64_t> BootAnalysis::noise_free_execve() const {
  if (!to_execve || forks_only) return std::nullopt;
  return to_execve->noise_free();
}

Lane lane_of_thread(const BootRecord& boot, std::uint32_t tid) {
  if (tid == boot.hpid) return Lane::Supervisor;
  if (tid == boot.container_pid) return Lane::Container;
  if (tid == boot.listen_tid) return Lane::Listener;
  return Lane::Other;
}

namespace {

// A stretch of one thread's time.
struct Span {
  std::uint32_t tid = 0;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;

  [[nodiscard]] bool holds(const PathPiece& piece) const {
    return piece.tid == tid && begin_ns <= piece.begin_ns && piece.end_ns <= end_ns;
  }
};

// A step of the analysis and the thread time it covers: its own thread's,
// and for the container's first step also its parent's from START_FORK to
// the fork (`forking`), since its own time counts from START_FORK.
struct Row {
  LaneStep step;
  Span own;
  std::optional<Span> forking;
};

// The process group of a step (Haconiwa's numbering, see Lane), for a step
// no thread reading names the thread of.
Lane lane_of_step(const Step& step) {
  if (step.kind != Step::Kind::Phase) return Lane::Container;
  if (step.phase >= kFirstContainerPhase && step.phase < kFirstNetworkPhase) return Lane::Container;
  return Lane::Supervisor;
}

// A step by its process group, its own time as StepTiming::delta.
Row group_row(const BootRecord& boot, const StepTiming& timing) {
  Row row;
  row.step.lane = lane_of_step(timing.step);
  row.step.step = timing.step;
  row.step.tid = row.step.lane == Lane::Container ? boot.container_pid : boot.hpid;
  row.step.begin_ns = timing.ts_ns - timing.delta.value_or(0);
  row.step.end_ns = timing.ts_ns;
  row.step.since_start = timing.since_start;
  row.own = Span{row.step.tid, row.step.begin_ns, row.step.end_ns};
  return row;
}

// The readings of a boot's threads: their events' totals, and zero at
// their creation.
class Readings {
 public:
  explicit Readings(const BootRecord& boot) : boot_(boot) {}

  [[nodiscard]] const ThreadTimeline* thread(std::uint32_t tid) const {
    const auto found = std::find_if(boot_.threads.begin(), boot_.threads.end(),
                                    [tid](const ThreadTimeline& thread) { return thread.tid == tid; });
    return found == boot_.threads.end() ? nullptr : &*found;
  }

  // The thread whose event was the step, when that event carried totals.
  [[nodiscard]] const ThreadTimeline* passed_by(const Step& step, std::uint64_t ts) const {
    const auto passed = [&](const ThreadTimeline& thread) {
      return std::any_of(thread.samples.begin(), thread.samples.end(),
                         [&](const ThreadSample& sample) { return sample.ts_ns == ts && sample.step == step; });
    };
    const auto found = std::find_if(boot_.threads.begin(), boot_.threads.end(), passed);
    return found == boot_.threads.end() ? nullptr : &*found;
  }

  // What the scheduler says of a stretch of one thread; nullopt when a
  // reading at one end is missing.
  [[nodiscard]] std::optional<SchedTotals> between(const Span& span) const {
    const auto first = at(span.tid, span.begin_ns);
    const auto last = at(span.tid, span.end_ns);
    if (!first || !last) return std::nullopt;
    return *last - *first;
  }

 private:
  // Its events' readings, its creation's, and its ends of the wakeups.
  [[nodiscard]] std::optional<SchedTotals> at(std::uint32_t tid, std::uint64_t ts) const {
    if (const ThreadTimeline* timeline = thread(tid)) {
      if (timeline->parent_tid && timeline->created_ns == ts) return SchedTotals{};
      const auto reading = std::find_if(timeline->samples.begin(), timeline->samples.end(),
                                        [ts](const ThreadSample& sample) { return sample.ts_ns == ts; });
      if (reading != timeline->samples.end()) return reading->totals;
    }
    for (const auto& wakeup : boot_.wakeups) {
      if (wakeup.ts_ns != ts) continue;
      if (wakeup.waker_tid == tid) return wakeup.waker_totals;
      if (wakeup.wakee_tid == tid) return wakeup.wakee_totals;
    }
    return std::nullopt;
  }

  const BootRecord& boot_;
};

// The states of a stretch, only when the readings cover it exactly.
std::optional<SchedTotals> exact_states(const Readings& readings, const Span& span,
                                        const std::optional<Span>& before = std::nullopt) {
  auto states = readings.between(span);
  if (states && before) {
    const auto earlier = readings.between(*before);
    if (earlier) {
      *states += *earlier;
    } else {
      states.reset();
    }
  }
  const std::uint64_t length = span.end_ns - span.begin_ns + (before ? before->end_ns - before->begin_ns : 0);
  if (!states || states->total() != length) return std::nullopt;
  return states;
}

// The parent's time from START_FORK to the fork, when the thread is the
// container and its parent passed START_FORK after the start.
std::optional<Span> forking_of(const BootRecord& boot, const Readings& readings, const ThreadTimeline& thread) {
  if (thread.tid != boot.container_pid || !thread.parent_tid) return std::nullopt;
  const auto mark = std::find_if(boot.phases.begin(), boot.phases.end(),
                                 [](const PhaseMark& passed) { return passed.phase == kPhaseStartFork; });
  if (mark == boot.phases.end() || !boot.since_start(mark->ts_ns) || mark->ts_ns > thread.created_ns) {
    return std::nullopt;
  }
  const ThreadTimeline* forker = readings.passed_by({Step::Kind::Phase, kPhaseStartFork}, mark->ts_ns);
  if (forker == nullptr || forker->tid != *thread.parent_tid) return std::nullopt;
  return Span{forker->tid, mark->ts_ns, thread.created_ns};
}

// The lane of each of the boot's threads: those the kernel side timed the
// syscalls of, as it does of every accounted thread that ran (a thread of
// another launch may wake one of the boot's: it has none).
ThreadLanes thread_lanes(const BootRecord& boot) {
  ThreadLanes lanes;
  for (const auto& aggregate : boot.syscalls) lanes.try_emplace(aggregate.tid, lane_of_thread(boot, aggregate.tid));
  return lanes;
}

// What the step's thread (and for the container's first step, its parent
// from START_FORK to the fork) did in syscalls and in user space; `lanes`
// name its wakers' roles.
std::optional<StepSyscalls> step_syscalls(const BootRecord& boot, const Row& row, const ThreadLanes& lanes) {
  if (!row.step.states || boot.syscalls.empty()) return std::nullopt;
  const auto between = [&boot, &lanes](const Span& span) {
    auto syscalls = syscalls_between(boot.syscalls, span.tid, span.begin_ns, span.end_ns);
    syscalls.blocking = blocking_between(boot.blocking, span.tid, span.begin_ns, span.end_ns, lanes);
    syscalls.kernel_cpu = kernel_cpu_between(boot.kernel_profile, span.tid, span.begin_ns, span.end_ns);
    return syscalls;
  };
  auto syscalls = between(row.own);
  if (row.forking) syscalls += between(*row.forking);
  return syscalls;
}

// One row per step, from the previous step of the thread that passed it
// (the start phase counts), from its creation (the container's from
// START_FORK) for its first. start_ns: the boot's.
std::vector<Row> thread_rows(const BootRecord& boot, std::uint64_t start_ns, const std::vector<StepTiming>& timings) {
  const Readings readings(boot);
  const auto lanes = thread_lanes(boot);
  std::map<std::uint32_t, std::uint64_t> last_step{{boot.start_tid, start_ns}};
  std::vector<Row> rows;
  rows.reserve(timings.size());
  for (const auto& timing : timings) {
    const ThreadTimeline* thread = readings.passed_by(timing.step, timing.ts_ns);
    if (thread == nullptr) {
      rows.push_back(group_row(boot, timing));
      continue;
    }
    Row row;
    row.step.lane = lane_of_thread(boot, thread->tid);
    row.step.step = timing.step;
    row.step.tid = thread->tid;
    row.step.end_ns = timing.ts_ns;
    row.step.since_start = timing.since_start;
    std::uint64_t own_begin = timing.ts_ns - timing.delta.value_or(0);
    if (const auto previous = last_step.find(thread->tid); previous != last_step.end()) {
      own_begin = previous->second;
    } else if (thread->parent_tid) {
      own_begin = thread->created_ns;
      row.forking = forking_of(boot, readings, *thread);
    }
    row.own = Span{thread->tid, own_begin, timing.ts_ns};
    row.step.begin_ns = row.forking ? row.forking->begin_ns : own_begin;
    row.step.states = exact_states(readings, row.own, row.forking);
    row.step.syscalls = step_syscalls(boot, row, lanes);
    last_step[thread->tid] = timing.ts_ns;
    rows.push_back(row);
  }
  return rows;
}

// Without thread readings the path follows the fork: from the target back
// to the previous step of its process, from the container's first step to
// START_FORK, and so on to the start. nullopt when the steps do not chain.
std::optional<CriticalPath> fork_path(const std::vector<Row>& rows, std::uint64_t start_ns, const Step& target) {
  auto current = std::find_if(rows.begin(), rows.end(), [&target](const Row& row) { return row.step.step == target; });
  if (current == rows.end()) return std::nullopt;
  CriticalPath path;
  for (;;) {
    const LaneStep& step = current->step;
    path.pieces.push_back(PathPiece{step.tid, step.step, step.begin_ns, step.end_ns, std::nullopt});
    if (step.begin_ns == start_ns) break;
    // Rows are in time order: the one this step counts from comes before it.
    const auto ends_at_begin = [&step](const Row& row) { return row.step.end_ns == step.begin_ns; };
    const auto earlier = std::make_reverse_iterator(current);
    auto previous = std::find_if(earlier, rows.rend(),
                                 [&](const Row& row) { return ends_at_begin(row) && row.step.lane == step.lane; });
    if (previous == rows.rend()) previous = std::find_if(earlier, rows.rend(), ends_at_begin);
    if (previous == rows.rend()) return std::nullopt;
    current = std::prev(previous.base());
  }
  std::reverse(path.pieces.begin(), path.pieces.end());
  return path;
}

// Path time outside every step: a thread's time after its last step (or a
// step that is not one of the boot's, such as a phase passed again).
struct LooseTime {
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t on_listen_path_ns = 0;
  std::uint64_t on_execve_path_ns = 0;
  std::uint64_t listen_path_run_queue_ns = 0;
  std::uint64_t execve_path_run_queue_ns = 0;
};

// Where one path's time goes in a LaneStep and in a LooseTime.
struct PathFields {
  std::uint64_t LaneStep::*step_time;
  std::uint64_t LaneStep::*step_run_queue;
  std::uint64_t LooseTime::*loose_time;
  std::uint64_t LooseTime::*loose_run_queue;
};
constexpr PathFields kListenPath{&LaneStep::on_listen_path_ns, &LaneStep::listen_path_run_queue_ns,
                                 &LooseTime::on_listen_path_ns, &LooseTime::listen_path_run_queue_ns};
constexpr PathFields kExecvePath{&LaneStep::on_execve_path_ns, &LaneStep::execve_path_run_queue_ns,
                                 &LooseTime::on_execve_path_ns, &LooseTime::execve_path_run_queue_ns};

using LooseKey = std::pair<std::uint32_t, std::optional<Step>>;

// Adds each piece of a path to the row it lies in on its thread; the
// supervisor's time from START_FORK to the fork goes to the container's
// first step before the supervisor's next one.
void attribute(const CriticalPath& path, const PathFields& fields, std::vector<Row>& rows,
               std::map<LooseKey, LooseTime>& loose) {
  for (const auto& piece : path.pieces) {
    const std::uint64_t run_queue = piece.states ? std::min(piece.states->run_queue, piece.duration()) : 0;
    auto holder = std::find_if(rows.begin(), rows.end(),
                               [&piece](const Row& row) { return row.forking && row.forking->holds(piece); });
    if (holder == rows.end()) {
      holder = std::find_if(rows.begin(), rows.end(), [&piece](const Row& row) { return row.own.holds(piece); });
    }
    if (holder != rows.end()) {
      holder->step.*fields.step_time += piece.duration();
      holder->step.*fields.step_run_queue += run_queue;
      continue;
    }
    const auto [entry, inserted] = loose.try_emplace({piece.tid, piece.step}, LooseTime{piece.begin_ns, piece.end_ns});
    auto& time = entry->second;
    time.begin_ns = std::min(time.begin_ns, piece.begin_ns);
    time.end_ns = std::max(time.end_ns, piece.end_ns);
    time.*fields.loose_time += piece.duration();
    time.*fields.loose_run_queue += run_queue;
  }
}

// A row for path time outside the steps: from the thread's last step (or
// its creation) before it, to where the path left the thread.
LaneStep loose_row(const BootRecord& boot, const Readings& readings, const std::vector<Row>& rows, const LooseKey& key,
                   const LooseTime& time) {
  const auto [tid, step] = key;
  std::optional<std::uint64_t> since;
  const ThreadTimeline* thread = readings.thread(tid);
  if (thread != nullptr && thread->parent_tid && thread->created_ns <= time.begin_ns) since = thread->created_ns;
  for (const auto& row : rows) {
    if (row.own.tid == tid && row.own.end_ns <= time.begin_ns && (!since || row.own.end_ns > *since)) {
      since = row.own.end_ns;
    }
  }
  const std::uint64_t begin = since.value_or(time.begin_ns);
  LaneStep row;
  row.lane = lane_of_thread(boot, tid);
  row.step = step;
  row.tid = tid;
  row.begin_ns = begin;
  row.end_ns = time.end_ns;
  row.since_start = boot.since_start(time.end_ns);
  row.states = exact_states(readings, Span{tid, begin, time.end_ns});
  row.on_listen_path_ns = time.on_listen_path_ns;
  row.on_execve_path_ns = time.on_execve_path_ns;
  row.listen_path_run_queue_ns = time.listen_path_run_queue_ns;
  row.execve_path_run_queue_ns = time.execve_path_run_queue_ns;
  return row;
}

}  // namespace

BootAnalysis analyse_boot(const BootRecord& boot) {
  BootAnalysis analysis;
  if (!boot.start_ns) return analysis;
  const auto timings = boot.steps_after_start();
  analysis.forks_only = boot.threads.empty();
  std::vector<Row> rows;
  if (analysis.forks_only) {
    rows.reserve(timings.size());
    for (const auto& timing : timings) rows.push_back(group_row(boot, timing));
    if (boot.execve_ns) analysis.to_execve = fork_path(rows, *boot.start_ns, {Step::Kind::Execve});
    if (boot.listen_ns) analysis.to_listen = fork_path(rows, *boot.start_ns, {Step::Kind::Listen});
  } else {
    rows = thread_rows(boot, *boot.start_ns, timings);
    analysis.to_execve = path_to_execve(boot);
    analysis.to_listen = path_to_listen(boot);
  }

  std::map<LooseKey, LooseTime> loose;
  if (analysis.to_listen) {
    attribute(*analysis.to_listen, kListenPath, rows, loose);
  }
  if (analysis.to_execve) {
    attribute(*analysis.to_execve, kExecvePath, rows, loose);
  }
  const Readings readings(boot);
  analysis.steps.reserve(rows.size() + loose.size());
  for (const auto& row : rows) analysis.steps.push_back(row.step);
  for (const auto& [key, time] : loose) analysis.steps.push_back(loose_row(boot, readings, rows, key, time));
  std::stable_sort(analysis.steps.begin(), analysis.steps.end(),
                   [](const LaneStep& a, const LaneStep& b) { return a.end_ns < b.end_ns; });
  return analysis;
}

}  // namespace hacoboot
