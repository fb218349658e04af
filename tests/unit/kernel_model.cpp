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

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cells;
  std::string::size_type from = 0;
  while (true) {
    const auto tab = line.find('\t', from);
    cells.push_back(line.substr(from, tab == std::string::npos ? std::string::npos : tab - from));
    if (tab == std::string::npos) return cells;
    from = tab + 1;
  }
}

template <typename T>
T number(std::string_view cell, std::size_t line, const char* column) {
  T value{};
  const auto* end = cell.data() + cell.size();
  const auto [ptr, ec] = std::from_chars(cell.data(), end, value);
  if (cell.empty() || ec != std::errc{} || ptr != end) {
    throw std::runtime_error("line " + std::to_string(line) + ": bad " + column + " '" + std::string(cell) + "'");
  }
  return value;
}

template <typename T>
std::optional<T> optional_number(std::string_view cell, std::size_t line, const char* column) {
  if (cell.empty()) return std::nullopt;
  return number<T>(cell, line, column);
}

}  // namespace

std::vector<CaptureRow> load_capture(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  static const std::string kHeader = "ts_ns\tkind\tpid\ttid\tcomm\tphase\thpid\tchild_pid\tfilename\tret\tcgroup_id";
  std::string text;
  std::getline(in, text);
  if (text != kHeader) throw std::runtime_error(path + ": unexpected header '" + text + "'");

  std::vector<CaptureRow> rows;
  std::size_t line = 1;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    const auto c = split_tabs(text);
    if (c.size() != 11) {
      throw std::runtime_error("line " + std::to_string(line) + ": " + std::to_string(c.size()) + " columns");
    }
    CaptureRow row;
    row.line = line;
    row.ts_ns = number<std::uint64_t>(c[0], line, "ts_ns");
    row.kind = c[1];
    row.pid = number<std::uint32_t>(c[2], line, "pid");
    // c[3], the tid: the tool keys processes by tgid.
    row.comm = c[4];
    row.phase = optional_number<std::int64_t>(c[5], line, "phase");
    row.hpid = optional_number<std::uint32_t>(c[6], line, "hpid");
    row.child_pid = optional_number<std::uint32_t>(c[7], line, "child_pid");
    row.filename = c[8];
    row.ret = optional_number<std::int64_t>(c[9], line, "ret");
    row.cgroup_id = number<std::uint64_t>(c[10], line, "cgroup_id");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<CaptureRow> sorted_by_time(std::vector<CaptureRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  return rows;
}

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
