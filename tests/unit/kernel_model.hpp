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
#include "support/capture_tsv.hpp"

namespace hacoboot::test {

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

}  // namespace hacoboot::test
