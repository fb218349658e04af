#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "model/boot.hpp"
#include "model/path_breakdown.hpp"
#include "model/sample_stats.hpp"

namespace hacoboot {

struct BootCounts {
  // Failure groups kept at most: only a kernel side sending made-up phase
  // numbers would make more, and a long-running exporter must stay flat.
  static constexpr std::size_t kMaxFailureGroups = 256;

  std::uint64_t started = 0;     // passed the start phase while traced
  std::uint64_t execve = 0;      // ... and then exec'd the command
  std::uint64_t listen = 0;      // ... and then listened
  std::uint64_t incomplete = 0;  // started, but failed before execve or listen (BootOutcome::Failed)
  std::uint64_t in_flight = 0;   // started, cut off by the end of tracing before execve or listen
  std::uint64_t unstarted = 0;   // seen only after their start (tracing began mid-launch)
  // The incomplete boots by where and how they failed; a boot of a group
  // beyond kMaxFailureGroups counts in `incomplete` only.
  std::map<BootFailure, std::uint64_t> failures;

  // Counts one finished boot; a milestone counts only when it came after the start.
  void add(const BootRecord& boot);
  // The failure groups, the most boots first.
  [[nodiscard]] std::vector<std::pair<BootFailure, std::uint64_t>> failures_by_count() const;
};

// Both timings of one step across boots.
struct StepStats {
  SampleStats since_start;
  SampleStats delta;  // the step's own cost, see StepTiming
};

// Aggregate of finished boots. Times are measured from each boot's start.
class Summary {
 public:
  void add(const BootRecord& boot);
  // `analysis` is analyse_boot(boot), when the caller has it already.
  void add(const BootRecord& boot, const BootAnalysis& analysis);

  [[nodiscard]] const BootCounts& boots() const { return boots_; }
  // The reference script's two metrics: time from start to execve / listen.
  [[nodiscard]] const SampleStats& execve() const { return since_start_of({Step::Kind::Execve}); }
  [[nodiscard]] const SampleStats& listen() const { return since_start_of({Step::Kind::Listen}); }
  // Every phase and milestone passed after the start, but the start itself.
  [[nodiscard]] const std::map<Step, StepStats>& steps() const { return steps_; }
  // The steps in the order a boot passes them: by mean time since the start.
  [[nodiscard]] std::vector<std::pair<Step, const StepStats*>> steps_in_boot_order() const;
  // The same steps by lane, with their scheduler states and their share of
  // each boot's critical path.
  [[nodiscard]] const PathBreakdown& paths() const { return paths_; }

 private:
  [[nodiscard]] const SampleStats& since_start_of(const Step& step) const;

  BootCounts boots_;
  std::map<Step, StepStats> steps_;
  PathBreakdown paths_;
};

}  // namespace hacoboot
