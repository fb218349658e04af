#include "model/boot_tracker.hpp"

#include <algorithm>
#include <utility>

namespace hacoboot {
namespace {

// Helpers that forked from a CLI but never became supervisors must not pile up.
constexpr std::size_t kMaxPendingClis = 4096;

bool has_phase(const BootRecord& boot, std::int64_t phase) {
  return std::any_of(boot.phases.begin(), boot.phases.end(), [phase](const PhaseMark& m) { return m.phase == phase; });
}

void record_phase(BootRecord& boot, std::int64_t phase, std::uint64_t ts_ns) {
  auto& marks = boot.phases;
  if (has_phase(boot, phase)) return;
  // Keep time order: marks arrive nearly sorted, so this walks a step or two.
  auto pos = marks.end();
  while (pos != marks.begin() && std::prev(pos)->ts_ns > ts_ns) --pos;
  marks.insert(pos, PhaseMark{phase, ts_ns});
}

template <typename Map>
void bounded_insert(Map& map, std::uint32_t key, std::uint64_t value) {
  if (map.size() >= kMaxPendingClis) map.erase(map.begin());
  map[key] = value;
}

// A boot's readings are few (its steps, forks and exits, the wakeups
// across its processes, until its listen): the bound only keeps memory flat
// should a kernel side out of step send more.
constexpr std::size_t kMaxThreadReadings = 4096;

ThreadTimeline& timeline_of(BootRecord& boot, std::uint32_t tid) {
  const auto known = std::find_if(boot.threads.begin(), boot.threads.end(),
                                  [tid](const ThreadTimeline& thread) { return thread.tid == tid; });
  if (known != boot.threads.end()) return *known;
  auto& thread = boot.threads.emplace_back();
  thread.tid = tid;
  return thread;
}

}  // namespace

BootTracker::BootTracker(Config config, Sink on_boot_done)
    : config_(std::move(config)), sink_(std::move(on_boot_done)) {}

void BootTracker::on_event(const Event& event) {
  if (from_older_launch(event)) return;
  switch (event.kind) {
    case EventKind::Phase: on_phase(event); break;
    case EventKind::Fork: on_fork(event); break;
    case EventKind::Exec: on_exec(event); break;
    case EventKind::Listen: on_listen(event); break;
    case EventKind::Exit: on_exit(event); break;
    case EventKind::Wakeup: on_wakeup(event); break;
    case EventKind::Thread: on_thread(event); break;
  }
}

BootTracker::LiveBoot& BootTracker::boot_of(std::uint32_t hpid) {
  auto it = live_.find(hpid);
  if (it != live_.end()) return it->second;
  if (live_.size() >= config_.max_live_boots) evict_oldest();

  LiveBoot boot;
  boot.record.sequence = next_sequence_++;
  boot.record.hpid = hpid;
  boot.record.start_phase = config_.start_phase;
  if (auto cli = supervisor_cli_started_.find(hpid); cli != supervisor_cli_started_.end()) {
    record_phase(boot.record, kPhaseCliStart, cli->second);
    if (config_.start_phase == kPhaseCliStart) boot.record.start_ns = cli->second;
    supervisor_cli_started_.erase(cli);
  }
  by_sequence_.emplace(boot.record.sequence, hpid);
  return live_.emplace(hpid, std::move(boot)).first->second;
}

// An hpid is a pid, and pids come round: a container that outlived its
// supervisor may still run when a new supervisor gets the same pid. Its
// events carry its own launch id and must not land in the new boot.
bool BootTracker::from_older_launch(const Event& event) const {
  if (event.launch == 0) return false;
  if (event.kind == EventKind::Phase && event.phase == kPhaseStartSupervisor) return false;  // a new launch
  const auto it = live_.find(event.hpid);
  return it != live_.end() && it->second.record.launch != 0 && it->second.record.launch != event.launch;
}

void BootTracker::on_phase(const Event& event) {
  if (event.phase == kPhaseCliStart && event.pid == event.hpid) {
    bounded_insert(cli_started_, event.pid, event.ts_ns);
    return;
  }
  // The supervisor passing START_SV again, or the start phase coming twice:
  // its pid was reused and the first launch's exits were lost, so that
  // launch is over.
  if (const auto it = live_.find(event.hpid); it != live_.end()) {
    const auto& earlier = it->second.record;
    const bool restarted =
        event.phase == kPhaseStartSupervisor &&
        (has_phase(earlier, kPhaseStartSupervisor) || (earlier.launch != 0 && earlier.launch != event.launch));
    if (restarted || (event.phase == config_.start_phase && earlier.started())) finish(event.hpid, BootEnd::Replaced);
  }
  auto& boot = boot_of(event.hpid);
  if (boot.record.launch == 0) boot.record.launch = event.launch;
  record_phase(boot.record, event.phase, event.ts_ns);
  record_reading(boot, event, Step{Step::Kind::Phase, event.phase});
  if (event.phase == config_.start_phase) {
    boot.record.start_ns = event.ts_ns;
    boot.record.start_tid = event.tid;
    if (boot.record.listen_ns) settle(boot);  // it listened before the start phase
  }
}

void BootTracker::on_fork(const Event& event) {
  if (event.role == Role::Container) {
    auto& boot = boot_of(event.hpid);
    boot.record.container_pid = event.child_pid;
    record_fork_reading(boot, event);
    return;
  }
  if (event.role == Role::Member) {
    if (const auto it = live_.find(event.hpid); it != live_.end()) record_fork_reading(it->second, event);
    return;
  }
  if (event.role != Role::Untracked) return;
  if (auto cli = cli_started_.find(event.pid); cli != cli_started_.end()) {
    bounded_insert(supervisor_cli_started_, event.child_pid, cli->second);
    cli_started_.erase(cli);
  }
}

void BootTracker::on_exec(const Event& event) {
  auto& live = boot_of(event.hpid);
  auto& boot = live.record;
  const bool counted = !boot.execve_ns && (config_.command.empty() || event.filename == config_.command);
  record_reading(live, event, counted ? std::optional<Step>(Step{Step::Kind::Execve, 0}) : std::nullopt);
  if (!counted) return;
  boot.execve_ns = event.ts_ns;
  boot.execve_tid = event.tid;
  boot.cgroup_id = event.cgroup_id;
  boot.cgroup_path = event.cgroup_path;
}

void BootTracker::on_listen(const Event& event) {
  auto& boot = boot_of(event.hpid);
  if (boot.record.listen_ns) return;
  record_reading(boot, event, Step{Step::Kind::Listen, 0});
  boot.record.listen_ns = event.ts_ns;
  boot.record.listen_tid = event.tid;
  if (boot.record.started()) settle(boot);
}

void BootTracker::settle(LiveBoot& boot) {
  if (boot.settled) return;
  boot.settled = true;
  ++settled_;
  if (settled_sink_) settled_sink_(boot.record);
}

void BootTracker::on_exit(const Event& event) {
  if (event.role == Role::Launcher) {
    cli_started_.erase(event.pid);
    supervisor_cli_started_.erase(event.pid);
    if (event.pid != event.hpid) return;
  }
  const auto it = live_.find(event.hpid);
  if (it == live_.end()) return;
  auto& boot = it->second;
  record_reading(boot, event);
  if (event.role == Role::Launcher) {
    boot.record.supervisor_exit_status = event.exit_status;
  } else if (event.role == Role::Container) {
    boot.record.container_exit_ns = event.ts_ns;
    boot.record.container_exit_status = event.exit_status;
  } else {
    return;
  }
  finish_if_over(event.hpid, boot);
}

void BootTracker::finish_if_over(std::uint32_t hpid, const LiveBoot& boot) {
  const bool container_gone = boot.record.container_pid == 0 || boot.record.container_exit_ns;
  if (boot.record.supervisor_exit_status && container_gone) finish(hpid, BootEnd::Exited);
}

void BootTracker::finish(std::uint32_t hpid, BootEnd end) {
  auto node = live_.extract(hpid);
  if (node.empty()) return;
  by_sequence_.erase(node.mapped().record.sequence);
  if (node.mapped().record.started()) settle(node.mapped());
  auto& boot = node.mapped().record;
  boot.end = end;
  sink_(boot);
}

void BootTracker::evict_oldest() {
  if (!by_sequence_.empty()) finish(by_sequence_.begin()->second, BootEnd::Evicted);
}

void BootTracker::expire_vanished(const std::function<bool(std::uint32_t pid)>& is_alive) {
  std::vector<std::uint32_t> vanished;
  for (const auto& [hpid, boot] : live_) {
    const auto container = boot.record.container_pid;
    if (!is_alive(hpid) && (container == 0 || !is_alive(container))) vanished.push_back(hpid);
  }
  for (const auto hpid : vanished) finish(hpid, BootEnd::Vanished);
}

void BootTracker::finish_all() {
  // Hand boots over in the order they began, as they would have ended.
  while (!by_sequence_.empty()) finish(by_sequence_.begin()->second, BootEnd::TracingStopped);
}

void BootTracker::record_reading(LiveBoot& boot, const Event& event, std::optional<Step> step) {
  if (!event.sched || boot.readings >= kMaxThreadReadings) return;
  ++boot.readings;
  timeline_of(boot.record, event.tid).samples.push_back({event.ts_ns, *event.sched, step});
}

// The parent's reading, and the child's main thread, accounted from its fork.
void BootTracker::record_fork_reading(LiveBoot& boot, const Event& event) {
  record_reading(boot, event);
  if (!event.sched) return;
  auto& child = timeline_of(boot.record, event.child_pid);
  child.parent_tid = event.tid;
  child.created_ns = event.ts_ns;
}

// A thread made while its launch boots: where a path through it (a service
// listening from a thread) comes from.
void BootTracker::on_thread(const Event& event) {
  if (const auto it = live_.find(event.hpid); it != live_.end()) record_fork_reading(it->second, event);
}

// A wakeup across two processes of one launch: the edge a critical path
// follows. One of another launch (a supervisor waking a stranger) is none.
void BootTracker::on_wakeup(const Event& event) {
  const auto it = live_.find(event.hpid);
  if (it == live_.end() || !event.sched || !event.wakee || event.wakee->hpid != event.hpid) return;
  auto& boot = it->second;
  if (boot.readings >= kMaxThreadReadings) return;
  ++boot.readings;
  boot.record.wakeups.push_back({event.ts_ns, event.tid, event.wakee->tid, *event.sched, event.wakee->sched});
}

}  // namespace hacoboot
