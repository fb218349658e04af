#pragma once
// Replays the kernel side's tagging (bpf/hacoboot.bpf.c) over a system-wide,
// untagged capture such as tests/fixtures/real-haconiwa-3boots.tsv, so that
// the BootTracker sees the events the BPF program would have sent.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/event.hpp"

namespace hacoboot::test {

// One line of a capture (format: tests/fixtures/README.md).
struct CaptureRow {
  std::size_t line = 0;  // 1-based line in the file, for messages
  std::uint64_t ts_ns = 0;
  std::string kind;  // phase | fork | execve | listen | exit
  std::uint32_t pid = 0;
  std::string comm;
  std::optional<std::int64_t> phase;
  std::optional<std::uint32_t> hpid;
  std::optional<std::uint32_t> child_pid;
  std::string filename;
  std::optional<std::int64_t> ret;
  std::uint64_t cgroup_id = 0;
};

// Rows in file order. Throws std::runtime_error naming the line on a bad row.
std::vector<CaptureRow> load_capture(const std::string& path);

class KernelModel {
 public:
  // The event the BPF program emits for this row, if any. Rows must come in
  // an order that keeps causes before effects (file order or ts order).
  std::optional<Event> on_row(const CaptureRow& row);

  // Every event for these rows, in the order given.
  static std::vector<Event> replay(const std::vector<CaptureRow>& rows);

  // What the `tracked` map holds for pid, as (hpid, role).
  [[nodiscard]] std::optional<std::pair<std::uint32_t, Role>> tracked(std::uint32_t pid) const;
  // Phase rows dropped as of no tracked launch (the untracked_phases map).
  [[nodiscard]] std::uint64_t untracked_phases() const { return untracked_phases_; }

 private:
  struct Tracked {
    std::uint32_t hpid = 0;
    Role role = Role::Untracked;
    bool armed = false;
  };

  [[nodiscard]] const Tracked* member_of_container(std::uint32_t pid) const;
  [[nodiscard]] bool of_tracked_launch(std::uint32_t pid, std::uint32_t hpid) const;
  static Event base(const CaptureRow& row, EventKind kind);

  std::unordered_map<std::uint32_t, Tracked> tracked_;  // keyed by tgid
  std::uint64_t untracked_phases_ = 0;
};

std::vector<CaptureRow> sorted_by_time(std::vector<CaptureRow> rows);

}  // namespace hacoboot::test
