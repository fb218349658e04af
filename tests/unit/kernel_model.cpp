#include "kernel_model.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace hacoboot::test {
namespace {

// The BPF side's HACOBOOT_PHASE_START_FORK.
constexpr std::int64_t kStartFork = 2;

}  // namespace

Event KernelModel::base(const CaptureRow& row, EventKind kind) {
  Event e;
  e.kind = kind;
  e.ts_ns = row.ts_ns;
  e.pid = row.pid;
  e.cgroup_id = row.cgroup_id;
  return e;
}

const KernelModel::Tracked* KernelModel::member_of_container(std::uint32_t pid) const {
  const auto it = tracked_.find(pid);
  return it != tracked_.end() && it->second.role != Role::Launcher ? &it->second : nullptr;
}

// launch_of: the emitter belongs to the launch, or its supervisor is tracked.
bool KernelModel::of_tracked_launch(std::uint32_t pid, std::uint32_t hpid) const {
  if (const auto emitter = tracked_.find(pid); emitter != tracked_.end() && emitter->second.hpid == hpid) return true;
  const auto supervisor = tracked_.find(hpid);
  return supervisor != tracked_.end() && supervisor->second.role == Role::Launcher;
}

std::optional<std::pair<std::uint32_t, Role>> KernelModel::tracked(std::uint32_t pid) const {
  const auto it = tracked_.find(pid);
  if (it == tracked_.end()) return std::nullopt;
  return std::pair{it->second.hpid, it->second.role};
}

std::optional<Event> KernelModel::on_row(const CaptureRow& row) {
  const auto where = [&row] { return "line " + std::to_string(row.line) + " (" + row.kind + ")"; };

  if (row.kind == "phase") {  // on_phase: phases of tracked launches are emitted, untagged
    if (!row.phase || !row.hpid) throw std::runtime_error(where() + ": phase without phase/hpid");
    if (*row.phase <= kStartFork && row.pid == *row.hpid) {
      tracked_[row.pid] = Tracked{row.pid, Role::Launcher, *row.phase == kStartFork};
    } else if (!of_tracked_launch(row.pid, *row.hpid)) {
      ++untracked_phases_;
      return std::nullopt;
    }
    auto e = base(row, EventKind::Phase);
    e.phase = *row.phase;
    e.hpid = *row.hpid;
    e.role = Role::Untracked;
    return e;
  }
  if (row.kind == "fork") {  // on_fork: only forks by tracked processes
    if (!row.child_pid) throw std::runtime_error(where() + ": fork without child_pid");
    const auto parent = tracked_.find(row.pid);
    if (parent == tracked_.end()) return std::nullopt;
    Tracked child{parent->second.hpid, Role::Untracked, false};
    if (parent->second.role != Role::Launcher) {
      child.role = Role::Member;
    } else if (parent->second.armed) {
      child.role = Role::Container;
      parent->second.armed = false;
    }
    // Other launcher forks are emitted untracked: they link a CLI to its supervisor.
    if (child.role != Role::Untracked) tracked_[*row.child_pid] = child;
    auto e = base(row, EventKind::Fork);
    e.child_pid = *row.child_pid;
    e.hpid = child.hpid;
    e.role = child.role;
    return e;
  }
  if (row.kind == "execve") {
    // The capture records execve at entry, each followed by a successful
    // exec: the BPF program emits it at sched_process_exec with the entry time.
    const auto* t = member_of_container(row.pid);
    if (!t) return std::nullopt;
    auto e = base(row, EventKind::Exec);
    e.hpid = t->hpid;
    e.role = t->role;
    e.filename = row.filename;
    return e;
  }
  if (row.kind == "listen") {  // sys_exit of listen: successful, members only
    if (!row.ret) throw std::runtime_error(where() + ": listen without ret");
    const auto* t = member_of_container(row.pid);
    if (*row.ret != 0 || !t) return std::nullopt;
    auto e = base(row, EventKind::Listen);
    e.hpid = t->hpid;
    e.role = t->role;
    return e;
  }
  if (row.kind == "exit") {  // sched_process_exit of any tracked process, then untracked
    const auto it = tracked_.find(row.pid);
    if (it == tracked_.end()) return std::nullopt;
    auto e = base(row, EventKind::Exit);
    e.hpid = it->second.hpid;
    e.role = it->second.role;
    tracked_.erase(it);
    return e;
  }
  throw std::runtime_error(where() + ": unknown kind");
}

std::vector<Event> KernelModel::replay(const std::vector<CaptureRow>& rows) {
  KernelModel model;
  std::vector<Event> events;
  for (const auto& row : rows) {
    if (auto e = model.on_row(row)) events.push_back(std::move(*e));
  }
  return events;
}

}  // namespace hacoboot::test
