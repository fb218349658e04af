#pragma once
// Threads as the kernel side accounts them, for hand-built boots whose
// scheduler readings are exact: each thread is in one state at a time and
// every event it emits reads its totals.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/boot.hpp"
#include "model/phases.hpp"
#include "model/sched_totals.hpp"

namespace hacoboot::test {

enum class State : std::uint8_t { Cpu, RunQueue, Sleep, Io };

// One thread as the kernel side accounts it: the state it is in since when,
// and its totals so far.
class SimulatedThread {
 public:
  SimulatedThread(std::uint32_t tid, std::uint64_t born_ns, State state) : since_(born_ns), state_(state) {
    timeline_.tid = tid;
    timeline_.created_ns = born_ns;
  }
  SimulatedThread& forked_by(std::uint32_t parent) {
    timeline_.parent_tid = parent;
    return *this;
  }
  // From `ts` on, the thread is in `state`.
  void enter(std::uint64_t ts, State state) {
    settle(ts);
    state_ = state;
  }
  SchedTotals read(std::uint64_t ts) {
    settle(ts);
    return totals_;
  }
  // An event it emits at `ts` (it is on CPU then).
  void emit(std::uint64_t ts, std::optional<Step> step = std::nullopt) {
    timeline_.samples.push_back({ts, read(ts), step});
  }
  [[nodiscard]] std::uint32_t tid() const { return timeline_.tid; }
  [[nodiscard]] const ThreadTimeline& timeline() const { return timeline_; }

 private:
  void settle(std::uint64_t ts) {
    const std::uint64_t elapsed = ts - since_;
    switch (state_) {
      case State::Cpu: totals_.cpu += elapsed; break;
      case State::RunQueue: totals_.run_queue += elapsed; break;
      case State::Sleep: totals_.sleep += elapsed; break;
      case State::Io: totals_.io += elapsed; break;
    }
    since_ = ts;
  }

  ThreadTimeline timeline_;
  SchedTotals totals_;
  std::uint64_t since_;
  State state_;
};

// `waker` wakes the blocked `wakee` at `ts`: the wakee is runnable from then.
inline WakeupEdge wake(SimulatedThread& waker, SimulatedThread& wakee, std::uint64_t ts) {
  const SchedTotals wakee_totals = wakee.read(ts);
  wakee.enter(ts, State::RunQueue);
  return {ts, waker.tid(), wakee.tid(), waker.read(ts), wakee_totals};
}

inline Step phase(std::int64_t number) {
  return Step{Step::Kind::Phase, number};
}
inline const Step kExecve{Step::Kind::Execve, 0};
inline const Step kListen{Step::Kind::Listen, 0};

// The boot the threads' events describe, as the BootTracker keeps it: its
// start is phase 1, its steps the first pass of each.
inline BootRecord record_of(std::uint32_t hpid, std::uint32_t container, std::vector<ThreadTimeline> threads,
                            std::vector<WakeupEdge> wakeups) {
  BootRecord boot;
  boot.hpid = hpid;
  boot.container_pid = container;
  for (const auto& thread : threads) {
    for (const auto& sample : thread.samples) {
      if (!sample.step) continue;
      switch (sample.step->kind) {
        case Step::Kind::Phase:
          boot.phases.push_back({sample.step->phase, sample.ts_ns});
          if (sample.step->phase == kPhaseStartSupervisor) {
            boot.start_ns = sample.ts_ns;
            boot.start_tid = thread.tid;
          }
          break;
        case Step::Kind::Execve:
          boot.execve_ns = sample.ts_ns;
          boot.execve_tid = thread.tid;
          break;
        case Step::Kind::Listen:
          boot.listen_ns = sample.ts_ns;
          boot.listen_tid = thread.tid;
          break;
      }
    }
  }
  std::sort(boot.phases.begin(), boot.phases.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  boot.threads = std::move(threads);
  boot.wakeups = std::move(wakeups);
  return boot;
}

// Haconiwa's runner: the supervisor forks the container and blocks reading
// the "done" pipe, which the container closes after its last setup step.
struct DonePipeBoot {
  SimulatedThread supervisor{100, 0, State::Sleep};
  SimulatedThread container{200, 4'100, State::RunQueue};
  std::vector<WakeupEdge> wakeups;

  DonePipeBoot() {
    container.forked_by(100);
    supervisor.enter(900, State::Cpu);
    supervisor.emit(1'000, phase(1));
    supervisor.enter(2'000, State::RunQueue);  // preempted
    supervisor.enter(2'300, State::Cpu);
    supervisor.emit(4'000, phase(2));
    supervisor.emit(4'100);                 // the fork
    supervisor.enter(4'200, State::Sleep);  // done.read
    container.enter(4'150, State::Cpu);
    container.emit(4'500, phase(11));
    container.enter(5'000, State::Io);
    container.enter(5'600, State::Cpu);
    container.emit(7'900, phase(20));
    wakeups.push_back(wake(container, supervisor, 8'000));  // closes its end
    supervisor.enter(8'020, State::Cpu);
    supervisor.emit(8'100, phase(3));
    supervisor.emit(8'200, phase(4));
    container.emit(8'050, phase(21));
    container.emit(8'080, kExecve);
    container.enter(8'500, State::Sleep);
    container.enter(8'600, State::Cpu);
    container.emit(9'000, kListen);
  }
  [[nodiscard]] std::vector<ThreadTimeline> threads() const { return {supervisor.timeline(), container.timeline()}; }
  [[nodiscard]] BootRecord record() const { return record_of(100, 200, threads(), wakeups); }
};

// Haconiwa with user namespaces: the container blocks until the supervisor
// has written its uid/gid maps.
struct UidMapBoot {
  SimulatedThread supervisor{100, 0, State::Cpu};
  SimulatedThread container{200, 2'000, State::Cpu};
  std::vector<WakeupEdge> wakeups;

  UidMapBoot() {
    container.forked_by(100);
    supervisor.emit(1'000, phase(1));
    supervisor.emit(2'000, phase(2));
    supervisor.emit(2'000);                 // the fork
    supervisor.enter(2'100, State::Sleep);  // reads "unshared"
    container.emit(3'000, phase(11));
    wakeups.push_back(wake(container, supervisor, 3'500));  // writes "unshared"
    container.enter(3'600, State::Sleep);                   // reads "mapped"
    supervisor.enter(3'700, State::Cpu);                    // writes the maps: 2 us of work
    wakeups.push_back(wake(supervisor, container, 5'700));  // answers "mapped"
    supervisor.enter(5'800, State::Sleep);                  // done.read
    container.enter(5'900, State::Cpu);
    container.emit(6'000, phase(17));
    container.emit(6'500, kExecve);
    container.emit(7'000, kListen);
    wakeups.push_back(wake(container, supervisor, 7'500));  // closes "done"
    supervisor.enter(7'600, State::Cpu);
    supervisor.emit(7'800, phase(3));
  }
  [[nodiscard]] std::vector<ThreadTimeline> threads() const { return {supervisor.timeline(), container.timeline()}; }
  [[nodiscard]] BootRecord record() const { return record_of(100, 200, threads(), wakeups); }
};

}  // namespace hacoboot::test
