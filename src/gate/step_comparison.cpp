#include "gate/step_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "gate/rank_comparison.hpp"

namespace hacoboot {
namespace {

// Fewer boots per run cannot be significant at any useful level (as the
// milestones' rank test).
constexpr std::uint64_t kFewestStepBoots = 3;

// The figure a measure of a step compares, noise-free or wall.
const FigureStats& figure_of_step(const StepFigures& step, StepMeasure measure, GateFigure figure) {
  const bool noise_free = figure == GateFigure::NoiseFree;
  switch (measure) {
    case StepMeasure::ListenPath: return noise_free ? step.listen_path.noise_free : step.listen_path.wall;
    case StepMeasure::ExecvePath: return noise_free ? step.execve_path.noise_free : step.execve_path.wall;
    case StepMeasure::Own: break;
  }
  return noise_free ? step.own_noise_free : step.own;
}

// Boots of a run that had the milestone's path: every such boot adds a value
// to each step it passed, so the step passed by most has them all.
std::uint64_t path_boots(const StepTable& steps, StepMeasure measure, GateFigure figure) {
  std::uint64_t most = 0;
  for (const auto& [key, step] : steps) most = std::max(most, figure_of_step(step, measure, figure).count);
  return most;
}

// The step's mean part of the path per boot with that path.
double part_of(const FigureStats* stats, std::uint64_t boots) {
  if (stats == nullptr || boots == 0) return 0;
  return static_cast<double>(stats->avg_ns) * static_cast<double>(stats->count) / static_cast<double>(boots);
}

// The share of a step's boots whose value is not 0: on the path in them.
double on_path_share(const FigureStats* stats) {
  if (stats == nullptr || stats->count == 0) return 0;
  std::uint64_t zero = 0;
  if (!stats->samples.counts.empty() && stats->samples.counts.front().first == 0) {
    zero = stats->samples.counts.front().second;
  }
  return static_cast<double>(stats->count - zero) / static_cast<double>(stats->count);
}

PathChange path_change_of(const FigureStats* baseline, const FigureStats* now) {
  const bool before = on_path_share(baseline) >= 0.5;
  const bool after = on_path_share(now) >= 0.5;
  if (before == after) return PathChange::None;
  return after ? PathChange::Joined : PathChange::Left;
}

// The states that moved the way the step's mean own time did (their sum):
// the largest of them, then those that moved by a material share of it. A
// state that moved the other way is the step's time changing hands (a step
// that now spins where it slept), not a cause of its shift. Of CPU, sleep
// and I/O when the figure compared is noise-free, which leaves the run queue
// out: on a busy runner a step doing more work waits longer for a CPU too,
// often longer than the work itself, and the states to name are the work's.
std::vector<StateShift> state_shifts_of(const StepFigures* baseline, const StepFigures* now, GateFigure figure) {
  if (baseline == nullptr || now == nullptr || !baseline->states || !now->states) return {};
  const auto& b = *baseline->states;
  const auto& n = *now->states;
  const auto delta = [](std::uint64_t before, std::uint64_t after) {
    return static_cast<double>(after) - static_cast<double>(before);
  };
  const double run_queue = figure == GateFigure::NoiseFree ? 0 : delta(b.run_queue, n.run_queue);
  std::vector<StateShift> shifts{{"CPU", delta(b.cpu, n.cpu)},
                                 {"run queue", run_queue},
                                 {"sleep", delta(b.sleep, n.sleep)},
                                 {"I/O", delta(b.io, n.io)}};
  double total = 0;
  for (const auto& state : shifts) total += state.shift_ns;
  std::erase_if(shifts, [total](const StateShift& state) { return state.shift_ns * total <= 0; });
  if (shifts.empty()) return {};
  std::stable_sort(shifts.begin(), shifts.end(), [](const StateShift& x, const StateShift& y) {
    return std::abs(x.shift_ns) > std::abs(y.shift_ns);
  });
  const double largest = std::abs(shifts.front().shift_ns);
  std::erase_if(
      shifts, [largest](const StateShift& state) { return std::abs(state.shift_ns) < kStateShareOfLargest * largest; });
  return shifts;
}

struct StepPair {
  const std::string* key;
  const StepFigures* baseline;  // nullptr: a step of the new run only
  const StepFigures* now;       // nullptr: of the baseline only
};

// Whether a measure of a step tells anything: both runs had it often enough,
// and it is not 0 in every boot of both (a step never on the path).
bool comparable(const FigureStats& baseline, const FigureStats& now) {
  if (baseline.count < kFewestStepBoots || now.count < kFewestStepBoots) return false;
  if (baseline.samples.empty() || now.samples.empty()) return false;
  return baseline.max_ns != 0 || now.max_ns != 0;
}

// A step's noise-free own time exists only where its scheduler states were
// accounted; past the accounting (the supervisor's wait for the container's
// end) it is the wall time, a wait that lengthens with everything the
// machine runs meanwhile, and comparing it noise-free would call that a move.
bool has_figure(const StepPair& pair, StepMeasure measure, GateFigure figure) {
  if (measure != StepMeasure::Own || figure != GateFigure::NoiseFree) return true;
  return pair.baseline->states.has_value() && pair.now->states.has_value();
}

std::vector<StepPair> pairs_of(const StepTable& baseline, const StepTable& now) {
  std::vector<StepPair> pairs;
  for (const auto& [key, step] : baseline) {
    const auto other = now.find(key);
    pairs.push_back({&key, &step, other == now.end() ? nullptr : &other->second});
  }
  for (const auto& [key, step] : now) {
    if (!baseline.contains(key)) pairs.push_back({&key, nullptr, &step});
  }
  return pairs;
}

// The rank test and the shift of one measure of a step; its part of the
// path whether or not it could be tested.
StepShift shift_of(const StepPair& pair, StepMeasure measure, GateFigure figure,
                   std::pair<std::uint64_t, std::uint64_t> boots) {
  const auto* any = pair.now != nullptr ? pair.now : pair.baseline;
  StepShift shift;
  shift.key = *pair.key;
  shift.lane = any->lane;
  shift.name = any->name;
  shift.measure = measure;
  const auto* before = pair.baseline ? &figure_of_step(*pair.baseline, measure, figure) : nullptr;
  const auto* after = pair.now ? &figure_of_step(*pair.now, measure, figure) : nullptr;
  shift.baseline_boots = before ? before->count : 0;
  shift.boots = after ? after->count : 0;
  if (measure != StepMeasure::Own) {
    shift.baseline_part_ns = part_of(before, boots.first);
    shift.part_ns = part_of(after, boots.second);
    shift.path_change = path_change_of(before, after);
  }
  shift.states = state_shifts_of(pair.baseline, pair.now, figure);
  return shift;
}

// The least shift this step is called moved at: the floor of every step;
// --max-regression of the step's own median, as the milestones are held to
// it (a busy runner stretches a long step's CPU time a little, caches and
// clock frequency, where the noise-free figure cannot see it); and
// kSpreadsOfDrift times the spread of the step's baseline boots. The rank
// test takes boots as independent, which boots on a changing machine are
// not: a step's median drifts between runs of the same code, seconds apart,
// by more than its boots within one run say (kernel work such as exec and
// creating namespaces most). The new run's spread is not used: work that
// varies from boot to boot (a mount storm) widens it as it slows the step.
double floor_of(const FigureStats& before, const std::vector<double>& ranked, double floor_ns,
                const GateConfig& config) {
  const double limit = config.max_regression_pct / 100.0 * static_cast<double>(before.p50_ns);
  const double spread = quantile_of(ranked, 0.75) - quantile_of(ranked, 0.25);
  return std::max({floor_ns, limit, kSpreadsOfDrift * spread});
}

void rank(StepShift& shift, const std::vector<double>& x, const std::vector<double>& y, double confidence) {
  if (const auto estimate = hodges_lehmann(x, y, confidence)) {
    shift.shift_ns = estimate->estimate;
    shift.low_ns = estimate->low;
    shift.high_ns = estimate->high;
  }
  shift.p_value = mann_whitney(x, y).p_value;
}

const FigureStats* milestone_figure(const RunFigures& run, const char* milestone, GateFigure figure) {
  const auto it = run.metrics.find(milestone);
  if (it == run.metrics.end()) return nullptr;
  const auto& metric = it->second;
  return figure == GateFigure::NoiseFree && metric.noise_free ? &*metric.noise_free : &metric.wall;
}

std::uint64_t milestone_median(const RunFigures& run, const char* milestone, GateFigure figure) {
  const auto* stats = milestone_figure(run, milestone, figure);
  return stats == nullptr ? 0 : stats->p50_ns;
}

// Indices of `shifts`, the largest shift first.
void largest_first(std::vector<std::size_t>& indices, const std::vector<StepShift>& shifts) {
  std::stable_sort(indices.begin(), indices.end(), [&shifts](std::size_t a, std::size_t b) {
    return std::abs(shifts[a].shift_ns) > std::abs(shifts[b].shift_ns);
  });
}

// Every measure of every step of either run into out.shifts, those both
// runs can tell ranked; returns the indices of the ranked ones.
std::vector<std::size_t> test_steps(const StepTable& before, const StepTable& after, const GateConfig& config,
                                    StepComparison& out) {
  const auto pairs = pairs_of(before, after);
  std::vector<std::size_t> tested;
  for (const auto measure : {StepMeasure::ListenPath, StepMeasure::ExecvePath, StepMeasure::Own}) {
    const std::pair boots{path_boots(before, measure, config.figure), path_boots(after, measure, config.figure)};
    for (const auto& pair : pairs) {
      auto shift = shift_of(pair, measure, config.figure, boots);
      if (pair.baseline && pair.now) {
        const auto& x = figure_of_step(*pair.baseline, measure, config.figure);
        const auto& y = figure_of_step(*pair.now, measure, config.figure);
        if (comparable(x, y) && has_figure(pair, measure, config.figure)) {
          const auto x_ranked = x.samples.ranked_values();
          const auto y_ranked = y.samples.ranked_values();
          rank(shift, x_ranked, y_ranked, 1 - config.alpha);
          shift.floor_ns = floor_of(x, x_ranked, out.floor_ns, config);
          tested.push_back(out.shifts.size());
        }
      }
      out.shifts.push_back(std::move(shift));
    }
  }
  return tested;
}

// Benjamini-Hochberg over the ranked shifts, and which of them moved.
void judge_moves(const std::vector<std::size_t>& tested, const GateConfig& config, StepComparison& out) {
  std::vector<double> p_values;
  p_values.reserve(tested.size());
  for (const auto i : tested) p_values.push_back(out.shifts[i].p_value);
  const auto adjusted = benjamini_hochberg_adjusted(p_values);
  for (std::size_t j = 0; j < tested.size(); ++j) {
    auto& shift = out.shifts[tested[j]];
    shift.adjusted_p = adjusted[j];
    shift.moved = shift.adjusted_p <= config.alpha && std::abs(shift.shift_ns) >= shift.floor_ns && out.floor_ns > 0;
  }
  out.tests = tested.size();
}

// Steps whose own time moved but not their time on any path, largest first.
std::vector<std::size_t> moved_off_paths(const std::vector<StepShift>& shifts) {
  const auto moved_on_a_path = [&shifts](const std::string& key) {
    return std::any_of(shifts.begin(), shifts.end(), [&key](const StepShift& shift) {
      return shift.key == key && shift.measure != StepMeasure::Own && shift.moved;
    });
  };
  std::vector<std::size_t> moved;
  for (std::size_t i = 0; i < shifts.size(); ++i) {
    const auto& shift = shifts[i];
    if (shift.measure == StepMeasure::Own && shift.moved && !moved_on_a_path(shift.key)) moved.push_back(i);
  }
  largest_first(moved, shifts);
  return moved;
}

// The milestone's shift as its gate row has it, its moved path steps,
// largest shift first, and its path's mean shift.
MilestoneShift milestone_of(const char* milestone, StepMeasure measure, const std::vector<StepShift>& shifts,
                            std::pair<const FigureStats*, const FigureStats*> figures, double confidence,
                            double floor_ns) {
  MilestoneShift out;
  out.milestone = milestone;
  out.floor_ns = floor_ns;
  if (const auto estimate =
          hodges_lehmann(figures.first->samples.ranked_values(), figures.second->samples.ranked_values(), confidence)) {
    out.shift_ns = estimate->estimate;
    out.low_ns = estimate->low;
    out.high_ns = estimate->high;
  }
  for (std::size_t i = 0; i < shifts.size(); ++i) {
    const auto& shift = shifts[i];
    if (shift.measure != measure) continue;
    out.path_mean_shift_ns += shift.part_ns - shift.baseline_part_ns;
    if (shift.path_change != PathChange::None) out.path_same = false;
    if (shift.moved) out.moved.push_back(i);
  }
  largest_first(out.moved, shifts);
  for (const auto i : out.moved) {
    out.moved_total_ns += shifts[i].shift_ns;
    out.moved_low_ns += shifts[i].low_ns;
    out.moved_high_ns += shifts[i].high_ns;
  }
  return out;
}

// Whether any step of the run has its syscalls: the run traced them.
bool traced_syscalls(const StepTable& steps) {
  return std::any_of(steps.begin(), steps.end(), [](const auto& entry) { return entry.second.syscalls.has_value(); });
}

// A syscall's mean time per boot on the compared figure: without the run
// queue when noise-free, as the step's own figure.
double syscall_time(const SyscallMeans& means, const std::string& name, GateFigure figure) {
  const auto it = means.find(name);
  if (it == means.end()) return 0;
  const auto& states = it->second;
  const auto time = figure == GateFigure::NoiseFree ? states.total() - states.run_queue : states.total();
  return static_cast<double>(time);
}

// The syscalls of a moved step whose mean time moved by a material part of
// its shift; a call of one run only moved by all of its time.
std::vector<SyscallShift> syscall_shifts(const SyscallMeans& before, const SyscallMeans& after, const StepShift& step,
                                         GateFigure figure, double floor_ns) {
  std::vector<std::string> names;
  for (const auto& [name, states] : before) names.push_back(name);
  for (const auto& [name, states] : after) {
    if (!before.contains(name)) names.push_back(name);
  }
  const double least = std::max(kSyscallShareOfStep * std::abs(step.shift_ns), floor_ns);
  std::vector<SyscallShift> moved;
  for (auto& name : names) {
    const double shift = syscall_time(after, name, figure) - syscall_time(before, name, figure);
    if (std::abs(shift) >= least && shift != 0) moved.push_back({.name = std::move(name), .shift_ns = shift});
  }
  std::stable_sort(moved.begin(), moved.end(), [](const SyscallShift& a, const SyscallShift& b) {
    return std::abs(a.shift_ns) > std::abs(b.shift_ns);
  });
  if (moved.size() > kMostSyscallsNamed) moved.resize(kMostSyscallsNamed);
  return moved;
}

// Within each moved step, the syscalls that moved, when both runs traced
// them; or why they were not compared when one did.
void compare_syscalls(const StepTable& before, const StepTable& after, StepComparison& out) {
  const bool baseline_traced = traced_syscalls(before);
  const bool now_traced = traced_syscalls(after);
  out.syscalls_compared = baseline_traced && now_traced;
  if (baseline_traced != now_traced) {
    const char* traced = baseline_traced ? "baseline" : "new run";
    out.syscalls_unavailable =
        fmt::format("syscalls were traced in the {} only (--syscalls): the moved steps' syscalls not compared", traced);
  }
  if (!out.syscalls_compared) return;
  for (auto& shift : out.shifts) {
    if (!shift.moved) continue;
    const auto& x = before.at(shift.key).syscalls;
    const auto& y = after.at(shift.key).syscalls;
    if (x && y) shift.syscalls = syscall_shifts(*x, *y, shift, out.figure, out.floor_ns);
  }
}

// A shift worth sharing out: its interval excludes 0 and it reaches the
// floor a step is called moved at.
bool material(double shift_ns, double low_ns, double high_ns, double floor_ns) {
  return (low_ns > 0 || high_ns < 0) && std::abs(shift_ns) >= floor_ns;
}

}  // namespace

const char* step_measure_name(StepMeasure measure) {
  switch (measure) {
    case StepMeasure::ListenPath: return "listen path";
    case StepMeasure::ExecvePath: return "execve path";
    case StepMeasure::Own: return "own time";
  }
  return "?";
}

bool MilestoneShift::has_shares() const {
  return path_same && (moved_explain_shift() || material(shift_ns, low_ns, high_ns, floor_ns));
}

bool MilestoneShift::moved_explain_shift() const {
  const bool same_sign = moved_total_ns * shift_ns > 0;
  const bool within = moved_total_ns >= low_ns && moved_total_ns <= high_ns;
  return !moved.empty() && same_sign && within && material(moved_total_ns, moved_low_ns, moved_high_ns, floor_ns);
}

double MilestoneShift::shared_shift_ns() const {
  return moved_explain_shift() ? moved_total_ns : shift_ns;
}

double MilestoneShift::share_of(const StepShift& step) const {
  const double whole = shared_shift_ns();
  if (whole == 0) return 0;
  return step.shift_ns / whole;
}

double MilestoneShift::unattributed_ns() const {
  return shift_ns - moved_total_ns;
}

double MilestoneShift::unattributed_low_ns() const {
  return low_ns - moved_total_ns;
}

double MilestoneShift::unattributed_high_ns() const {
  return high_ns - moved_total_ns;
}

StepComparison compare_steps(const RunFigures& baseline, const RunFigures& now, const GateConfig& config) {
  StepComparison out;
  out.figure = config.figure;
  if (!baseline.steps || !now.steps) {
    const auto& older = !baseline.steps ? baseline : now;
    out.unavailable = fmt::format("the {} (schema {}) kept no per-step samples: steps not compared",
                                  !baseline.steps ? "baseline" : "new summary", older.origin.schema);
    return out;
  }
  out.floor_ns = kStepFloorShare * static_cast<double>(milestone_median(baseline, "listen", config.figure));
  const auto tested = test_steps(*baseline.steps, *now.steps, config, out);
  judge_moves(tested, config, out);
  compare_syscalls(*baseline.steps, *now.steps, out);
  for (const auto& [milestone, measure] :
       {std::pair{"listen", StepMeasure::ListenPath}, std::pair{"execve", StepMeasure::ExecvePath}}) {
    const auto* before = milestone_figure(baseline, milestone, config.figure);
    const auto* after = milestone_figure(now, milestone, config.figure);
    if (before == nullptr || after == nullptr) continue;
    out.milestones.push_back(
        milestone_of(milestone, measure, out.shifts, {before, after}, 1 - config.alpha, out.floor_ns));
  }
  out.moved_off_path = moved_off_paths(out.shifts);
  return out;
}

}  // namespace hacoboot
