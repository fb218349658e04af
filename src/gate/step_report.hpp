#pragma once

#include <string>
#include <vector>

#include "gate/gate_config.hpp"
#include "gate/step_comparison.hpp"

namespace hacoboot {

// The steps that moved, in the words every format of the gate's report
// shares: which step, by how much, its share of the milestone's shift and
// the scheduler states that moved.

// "container 15 CONTAINER_CGROUP_SETUP", "listener listen", "other (after its last step)"
std::string step_shown(const StepShift& shift);

// "+1.98 ms", "-310 us": a signed duration.
std::string signed_duration(double ns);

// The syscalls that moved within a moved step: "mkdir +1.90 ms, openat
// +210 us"; empty when none did or they were not compared.
std::string moved_syscalls(const StepShift& shift);

// The states that moved within a step: "CPU +1.28 ms and I/O +1.27 ms";
// empty when its states were not accounted or none moved.
std::string moved_states(const StepShift& shift);

// One moved step: "container 15 CONTAINER_CGROUP_SETUP +1.98 ms [+1.91 ms,
// +2.05 ms] (94% of the shift), CPU +1.97 ms, syscalls mkdir +1.90 ms".
std::string moved_step_line(const StepShift& shift, const MilestoneShift* milestone);

// What no moved step explains, with its interval: "-302 us [-749 us, +200 us]".
std::string unattributed_shown(const MilestoneShift& milestone);

// "listen: path +2.10 ms; moved: <line>; <line>" or "listen: no step moved",
// with a word when the path itself changed. Empty when the steps were not
// compared.
std::string milestone_attribution(const StepComparison& steps, const std::string& milestone);

// The heading of the steps' section: the figure, the correction and the floor.
std::string steps_terms(const StepComparison& steps, const GateConfig& config);

// The section as lines: the heading, each milestone's moved steps, the steps
// that moved off the paths, why the syscalls were not compared when one run
// traced them; or why the steps were not compared.
std::vector<std::string> step_report_lines(const StepComparison& steps, const GateConfig& config);

}  // namespace hacoboot
