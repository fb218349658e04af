#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/baseline.hpp"
#include "gate/gate_config.hpp"

namespace hacoboot {

// Which steps moved between two runs, and how much of a milestone's shift
// each one explains. A milestone's time since start sums every step before
// it, so comparing those times step by step (as the milestone rows do)
// reports one slow step as every later one; a step's own figures do not:
// its time on the critical path to listen (to execve), whose sum over the
// steps is the time to the milestone exactly, and its own time.

// What of a step is compared.
enum class StepMeasure : std::uint8_t {
  ListenPath,  // its time on the critical path to listen, per boot
  ExecvePath,  // ... to execve
  Own,         // its own time (since the previous step of its lane)
};
// "listen path", "execve path", "own time"
const char* step_measure_name(StepMeasure measure);

// How a step's place on a path changed: on it in at least half of one run's
// boots and in less than half of the other's.
enum class PathChange : std::uint8_t { None, Joined, Left };

// How much a step's mean time in one scheduler state moved.
struct StateShift {
  const char* state = "";  // "CPU", "run queue", "sleep", "I/O"
  double shift_ns = 0;
};

// A syscall whose mean time per boot in a moved step moved by a material
// part of the step's shift.
struct SyscallShift {
  std::string name;  // "mkdir", "syscall_1023"
  double shift_ns = 0;
};

struct StepShift {
  std::string key;   // "container phase:15"
  std::string lane;  // "container"
  std::string name;  // "CONTAINER_CGROUP_SETUP", "listen"; "" after a thread's last step
  StepMeasure measure = StepMeasure::ListenPath;
  std::uint64_t baseline_boots = 0;
  std::uint64_t boots = 0;
  // Hodges-Lehmann shift, now - baseline, and its interval.
  double shift_ns = 0;
  double low_ns = 0;
  double high_ns = 0;
  double p_value = 1;
  double adjusted_p = 1;  // Benjamini-Hochberg over every step compared
  bool moved = false;     // adjusted_p <= alpha and |shift| at least floor_ns
  // The least shift it is called moved at: StepComparison::floor_ns,
  // --max-regression of the step's baseline median, and kSpreadsOfDrift
  // times the spread (interquartile range) of its baseline boots.
  double floor_ns = 0;
  // Path measures: the step's mean part of the milestone's path per boot
  // with that path, before and after; these add up to the path's mean, so
  // their differences add up to the milestone's mean shift.
  double baseline_part_ns = 0;
  double part_ns = 0;
  PathChange path_change = PathChange::None;
  // The states that moved (of CPU, sleep and I/O when the figure compared is
  // noise-free) the way the step's mean own time did: the one that moved
  // most, then any other by at least kStateShareOfLargest of it, largest
  // first. Empty when a run did not account the step's states or none moved.
  std::vector<StateShift> states;
  // Moved steps only, when both runs traced syscalls: the calls whose mean
  // time (noise-free: without their run-queue time) moved by at least
  // kSyscallShareOfStep of the step's shift and the comparison's floor, the
  // largest first, at most kMostSyscallsNamed.
  std::vector<SyscallShift> syscalls;
};

// The steps of one milestone's path that moved, largest shift first.
struct MilestoneShift {
  std::string milestone;  // "listen", "execve"
  // The milestone's Hodges-Lehmann shift and interval on the compared figure:
  // what its gate row reports.
  double shift_ns = 0;
  double low_ns = 0;
  double high_ns = 0;
  double path_mean_shift_ns = 0;   // of the path's mean: the sum of its steps' part shifts
  bool path_same = true;           // no step joined or left the path
  std::vector<std::size_t> moved;  // indices into StepComparison::shifts
  double moved_total_ns = 0;       // the moved steps' shifts added up
  // Their intervals' bounds added up: a conservative interval of the total
  // (the steps' shifts are sharp, a few tens of us each).
  double moved_low_ns = 0;
  double moved_high_ns = 0;
  double floor_ns = 0;  // StepComparison::floor_ns: the least moved total shared out
  // Whether the moved steps account for the whole shift: their total has
  // the shift's sign, lies within the milestone's interval, is told from 0
  // by their summed intervals and reaches floor_ns. The milestone's own
  // estimate carries the boot-to-boot scatter of every step that did not
  // move (a service's start alone scatters by a millisecond a boot), the
  // moved steps' shifts hardly any; when the two agree, shares are of the
  // moved total. "Not moved" is not "did not move": what the unmoved steps
  // shifted is the remainder, reported with its interval, not told from 0.
  // Work moved nearly evenly between steps (a total of tens of us) never
  // explains a shift.
  [[nodiscard]] bool moved_explain_shift() const;
  // Whether shares of the shift mean anything: the path stayed the same and
  // what they are of is told from 0 and at least floor_ns: the moved total
  // that explains the shift, or else the milestone's shift, its interval
  // excluding 0 (work moved between steps leaves tens of us, of which any
  // step would be a wild share).
  [[nodiscard]] bool has_shares() const;
  // What shares are of: the moved total when it explains the shift, else
  // shift_ns.
  [[nodiscard]] double shared_shift_ns() const;
  // A step's share of shared_shift_ns().
  [[nodiscard]] double share_of(const StepShift& step) const;
  // shift_ns less the moved steps' shifts: the part no moved step explains
  // (what steps that were not called moved shifted, and the scatter of the
  // milestone's estimate), with its interval: the milestone's, less the
  // moved total. It includes 0 exactly when the moved total lies within the
  // milestone's interval.
  [[nodiscard]] double unattributed_ns() const;
  [[nodiscard]] double unattributed_low_ns() const;
  [[nodiscard]] double unattributed_high_ns() const;
};

struct StepComparison {
  // Why the steps were not compared ("the baseline (schema 3) kept no
  // per-step samples"); empty when they were.
  std::string unavailable;
  GateFigure figure{};                     // noise-free or wall, as the milestones'
  std::size_t tests = 0;                   // the family Benjamini-Hochberg controls
  double floor_ns = 0;                     // the least shift any step is called moved at
  std::vector<StepShift> shifts;           // every step and measure compared
  std::vector<MilestoneShift> milestones;  // listen, then execve, when both runs have their paths
  // Steps whose own time moved but not their time on a path (work off the
  // paths, or waiting that moved), largest shift first.
  std::vector<std::size_t> moved_off_path;
  // Whether both runs traced syscalls, and so the moved steps' were compared.
  bool syscalls_compared = false;
  // Why they were not when one run traced them ("syscalls were traced in the
  // baseline only"); empty otherwise.
  std::string syscalls_unavailable;
};

// A step is called moved when its shift is at least this share of the
// baseline's median time to listen: small enough for any step a user would
// chase, large enough that cache and frequency effects of a busy runner,
// which the noise-free figures do not remove, are not called.
inline constexpr double kStepFloorShare = 0.02;

// A step is called moved only past this many times the spread (interquartile
// range) of its baseline boots. In 80 runs of the same code on the demo
// launcher (each against a baseline traced seconds before it, quiet and
// under busy loops), held to one spread, 8 called a step moved, at 1.1 to
// 3.4 of its spread; to two, 4; to three, 3 (the goal: at most 1 run in 20).
inline constexpr double kSpreadsOfDrift = 3.0;

// A second state of a step is named when it moved the same way as the
// largest by at least this share of it: an fsync that spends as long in the
// journal's CPU work as waiting for the disk moved in both, and naming one
// would hide the other. A 1 ms sleep's own CPU around it (+0.3 ms quiet,
// +0.4 ms under busy loops, here) sits near the line: named under load.
inline constexpr double kStateShareOfLargest = 1.0 / 3.0;

// A syscall of a moved step is named when its mean time moved by at least
// this share of the step's shift (and by the comparison's floor): a part
// worth chasing. Its figure is a mean of each run's boots, which no rank
// test judges, so a smaller share would name the calls whose means wander.
inline constexpr double kSyscallShareOfStep = 0.10;
// At most this many syscalls are named per moved step.
inline constexpr std::size_t kMostSyscallsNamed = 3;

StepComparison compare_steps(const RunFigures& baseline, const RunFigures& now, const GateConfig& config);

}  // namespace hacoboot
