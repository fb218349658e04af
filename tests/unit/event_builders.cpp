#include "event_builders.hpp"

#include <algorithm>
#include <utility>

namespace hacoboot::ev {

Event phase(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, std::int64_t n) {
  Event e;
  e.kind = EventKind::Phase;
  e.ts_ns = ts;
  e.pid = pid;
  e.hpid = hpid;
  e.role = Role::Untracked;
  e.phase = n;
  return e;
}

Event fork(std::uint64_t ts, std::uint32_t parent, std::uint32_t hpid, std::uint32_t child, Role role) {
  Event e;
  e.kind = EventKind::Fork;
  e.ts_ns = ts;
  e.pid = parent;
  e.hpid = hpid;
  e.role = role;
  e.child_pid = child;
  return e;
}

Event exec(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, std::string filename, Role role,
           std::uint64_t cgroup_id) {
  Event e;
  e.kind = EventKind::Exec;
  e.ts_ns = ts;
  e.pid = pid;
  e.hpid = hpid;
  e.role = role;
  e.cgroup_id = cgroup_id;
  e.filename = std::move(filename);
  return e;
}

Event listen(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, Role role) {
  Event e;
  e.kind = EventKind::Listen;
  e.ts_ns = ts;
  e.pid = pid;
  e.hpid = hpid;
  e.role = role;
  return e;
}

Event exit(std::uint64_t ts, std::uint32_t pid, std::uint32_t hpid, Role role, int wait_status) {
  Event e;
  e.kind = EventKind::Exit;
  e.exit_status = wait_status;
  e.ts_ns = ts;
  e.pid = pid;
  e.hpid = hpid;
  e.role = role;
  return e;
}

}  // namespace hacoboot::ev

namespace hacoboot::test {

std::vector<Event> Launch::events() const {
  const auto sv = supervisor;
  std::vector<Event> e{
      ev::phase(t0, cli, cli, 0),
      ev::fork(t0 + 100, cli, cli, sv, Role::Untracked),  // CLI -> supervisor
      ev::phase(sv_start(), sv, sv, 1),
      ev::phase(t0 + 2'000, sv, sv, 2),
      ev::fork(t0 + 2'100, sv, sv, container, Role::Container),
  };
  for (std::int64_t p = 11; p <= 21; ++p) {
    e.push_back(ev::phase(container_start() + static_cast<std::uint64_t>(p - 11) * 100, container, sv, p));
  }
  e.push_back(ev::exec(execve(), container, sv, command, Role::Container, cgroup_id));
  e.push_back(ev::phase(t0 + 5'100, sv, sv, 3));
  e.push_back(ev::phase(t0 + 5'200, sv, sv, 4));
  e.push_back(ev::listen(listen(), container, sv));
  e.push_back(ev::exit(container_exit(), container, sv, Role::Container));
  e.push_back(ev::phase(t0 + 20'100, sv, sv, 5));
  e.push_back(ev::phase(t0 + 20'200, sv, sv, 6));
  e.push_back(ev::exit(sv_exit(), sv, sv, Role::Launcher));
  e.push_back(ev::exit(t0 + 21'000, cli, cli, Role::Launcher));
  return e;
}

std::vector<Event> Launch::events_until_listen() const {
  auto all = events();
  const auto last = std::find_if(all.begin(), all.end(), [](const Event& e) { return e.kind == EventKind::Listen; });
  all.erase(std::next(last), all.end());
  return all;
}

std::vector<std::int64_t> full_launch_phases() {
  return {0, 1, 2, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 3, 4, 5, 6};
}

std::vector<Event> merge_by_time(std::vector<std::vector<Event>> lists) {
  std::vector<Event> all;
  for (auto& list : lists) all.insert(all.end(), list.begin(), list.end());
  std::stable_sort(all.begin(), all.end(), [](const Event& a, const Event& b) { return a.ts_ns < b.ts_ns; });
  return all;
}

std::vector<std::int64_t> phase_numbers(const BootRecord& boot) {
  std::vector<std::int64_t> numbers;
  for (const auto& mark : boot.phases) numbers.push_back(mark.phase);
  return numbers;
}

BootRecord started_boot(std::uint64_t start, std::vector<PhaseMark> phases, std::optional<std::uint64_t> execve,
                        std::optional<std::uint64_t> listen) {
  BootRecord b;
  b.start_phase = 1;
  b.start_ns = start;
  b.phases = std::move(phases);
  b.execve_ns = execve;
  b.listen_ns = listen;
  return b;
}

const SampleStats* phase_since_start(const Summary& summary, std::int64_t n) {
  const auto it = summary.steps().find(Step{Step::Kind::Phase, n});
  return it == summary.steps().end() ? nullptr : &it->second.since_start;
}

}  // namespace hacoboot::test
