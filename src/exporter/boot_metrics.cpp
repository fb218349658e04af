#include "exporter/boot_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

#include "model/kernel_profile.hpp"
#include "model/syscall_names.hpp"
#include "model/syscalls.hpp"
#include "util/text.hpp"

#ifndef HACOBOOT_VERSION
#error "HACOBOOT_VERSION must be defined by the build"
#endif

namespace hacoboot {
namespace {

// Exact decimal seconds from ns, shortest form ("0.00025", "1", "12.000000001"):
// integer arithmetic, so a bucket bound prints as written and a sum keeps every ns.
std::string seconds(std::uint64_t ns) {
  constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
  auto text = fmt::format("{}.{:09}", ns / kNsPerSecond, ns % kNsPerSecond);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string step_labels(const Step& step, const PhaseNames& names) {
  const auto phase = step.kind == Step::Kind::Phase ? std::to_string(step.phase) : step_name(step);
  return "phase=\"" + escape_label_value(phase) + "\",phase_name=\"" + escape_label_value(step_name(step, names)) +
         "\"";
}

// A phase number outside what Haconiwa can fire comes from a corrupt probe
// argument; giving it a series would let such noise grow memory and cardinality.
bool has_series(const Step& step) {
  return step.kind != Step::Kind::Phase || (step.phase >= 0 && step.phase <= kMaxPhase);
}

bool has_series(const LaneStepKey& key) {
  return !key.step || has_series(*key.step);
}

// `phase="after"` is a process's time after its last step, which a critical
// path went through.
std::string lane_step_labels(const LaneStepKey& key, const PhaseNames& names) {
  const auto step = key.step ? step_labels(*key.step, names) : R"(phase="after",phase_name="after last step")";
  return "lane=\"" + std::string(lane_name(key.lane)) + "\"," + step;
}

// A sample place's `where`: its short form, "user" in user mode, "unknown"
// where the stack was not taken (an empty label reads as a missing one).
std::string where_label(const KernelCpuSummary& place) {
  if (place.user_mode) return "user";
  return place.where.empty() ? "unknown" : place.where;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  static constexpr std::array<CharEscape, 3> kLabelValue{{{'\\', "\\\\"}, {'"', "\\\""}, {'\n', "\\n"}}};
  return escape_chars(value, kLabelValue);
}

void BootMetrics::Histogram::add(std::uint64_t value_ns) {
  // The first bound >= the value: `le` is inclusive.
  const auto* const bound = std::lower_bound(kBucketBoundsNs.begin(), kBucketBoundsNs.end(), value_ns);
  if (bound != kBucketBoundsNs.end()) ++buckets.at(static_cast<std::size_t>(bound - kBucketBoundsNs.begin()));
  ++count;
  sum_ns += value_ns;
}

// The text of one exposition, family by family.
class BootMetrics::Exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(text_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }

  // `labels` without braces: `phase="12",phase_name="X"`, or empty.
  void sample(std::string_view name, std::string_view labels, std::string_view value) {
    text_ += name;
    if (!labels.empty()) fmt::format_to(std::back_inserter(text_), "{{{}}}", labels);
    fmt::format_to(std::back_inserter(text_), " {}\n", value);
  }

  void scalar(std::string_view name, std::string_view type, std::string_view help, std::uint64_t value) {
    family(name, type, help);
    sample(name, "", std::to_string(value));
  }

  void histogram(const std::string& name, const std::string& labels, const Histogram& histogram) {
    const std::string le_prefix = labels.empty() ? "le=\"" : labels + ",le=\"";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBucketBoundsNs.size(); ++i) {
      cumulative += histogram.buckets.at(i);
      sample(name + "_bucket", le_prefix + seconds(kBucketBoundsNs.at(i)) + "\"", std::to_string(cumulative));
    }
    sample(name + "_bucket", le_prefix + "+Inf\"", std::to_string(histogram.count));
    sum_and_count(name, labels, histogram.sum_ns, histogram.count);
  }

  // A histogram's tail, or a whole summary without quantiles (its mean is
  // rate(_sum) / rate(_count)).
  void sum_and_count(const std::string& name, const std::string& labels, std::uint64_t sum_ns, std::uint64_t count) {
    sample(name + "_sum", labels, seconds(sum_ns));
    sample(name + "_count", labels, std::to_string(count));
  }

  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  std::string text_;
};

void BootMetrics::add(const BootRecord& boot) {
  add(boot, boot.started() ? analyse_boot(boot) : BootAnalysis{});
}

void BootMetrics::add(const BootRecord& boot, const BootAnalysis& analysis) {
  boots_.add(boot);
  for (const auto& timing : boot.steps_after_start()) {
    // steps_after_start() keeps only steps with since_start: checked for the analyzer
    if (!timing.since_start || !has_series(timing.step)) continue;
    auto& histograms = steps_[timing.step];
    histograms.since_start.add(*timing.since_start);
    if (timing.delta) histograms.delta.add(*timing.delta);
  }
  if (!boot.started()) return;
  add_states(analysis);
  if (const auto noise_free = analysis.noise_free_execve()) noise_free_execve_.add(*noise_free);
  if (const auto noise_free = analysis.noise_free_listen()) noise_free_listen_.add(*noise_free);
}

void BootMetrics::add_states(const BootAnalysis& analysis) {
  for (const auto& step : analysis.steps) {
    const LaneStepKey key{step.lane, step.step};
    if (!step.states || !has_series(key)) continue;
    auto& states = lane_steps_[key];
    ++states.count;
    states.cpu_ns += step.states->cpu;
    states.run_queue_ns += step.states->run_queue;
  }
}

void BootMetrics::add_syscalls(const BootRecord& boot) {
  if (boot.started() && !boot.syscalls.empty()) add_syscalls(analyse_boot(boot));
}

void BootMetrics::add_syscalls(const BootAnalysis& analysis) {
  for (const auto& step : analysis.steps) {
    const LaneStepKey key{step.lane, step.step};
    if (!step.syscalls || !has_series(key)) continue;
    add_step_syscalls(key, *step.syscalls);
    if (step.syscalls->kernel_cpu) add_step_kernel_cpu(key, *step.syscalls->kernel_cpu);
  }
}

void BootMetrics::add_step_syscalls(const LaneStepKey& key, const StepSyscalls& syscalls) {
  auto& step = lane_step_syscalls_[key];
  // calls come the most time first: the heaviest of the first boots get the series.
  for (const auto& call : syscalls.calls) {
    auto named = step.named.find(call.nr);
    if (named == step.named.end() && step.named.size() < kSyscallSeriesPerStep) {
      named = step.named.try_emplace(call.nr).first;
    }
    auto& sums = named == step.named.end() ? step.other : named->second;
    sums.calls += call.count;
    sums.ns += call.states.total();
  }
}

void BootMetrics::add_step_kernel_cpu(const LaneStepKey& key, const StepKernelCpu& cpu) {
  kernel_profile_hz_ = cpu.hz;
  auto& step = lane_step_kernel_cpu_[key];
  // Places come the most samples first: the busiest of the first boots get the series.
  for (const auto& place : summarize_kernel_cpu(cpu.points)) {
    auto where = where_label(place);
    auto named = step.named.find({place.nr, where});
    if (named == step.named.end() && step.named.size() < kKernelCpuSeriesPerStep) {
      named = step.named.try_emplace({place.nr, std::move(where)}).first;
    }
    (named == step.named.end() ? step.other : named->second) += place.samples;
  }
}

void BootMetrics::write(std::ostream& out, const PhaseNames& names) const {
  Exposition e;
  write_milestones(e);
  write_steps(e, names);
  write_syscalls(e, names);
  write_kernel_cpu(e, names);
  write_counters(e, names);
  out << e.text();
}

void BootMetrics::write_milestones(Exposition& e) const {
  const auto since_start_of = [this](Step::Kind milestone) -> const Histogram& {
    static const Histogram kNone;
    const auto it = steps_.find(Step{milestone});
    return it == steps_.end() ? kNone : it->second.since_start;
  };
  const std::string execve = "hacoboot_boot_execve_seconds";
  e.family(execve, "histogram", "Time from a boot's start phase to the container's execve of its command.");
  e.histogram(execve, "", since_start_of(Step::Kind::Execve));
  const std::string execve_noise_free = "hacoboot_boot_execve_noise_free_seconds";
  e.family(execve_noise_free, "histogram",
           "Critical path from a boot's start phase to the container's execve without its run-queue time: the time "
           "to execve with a CPU always free (boots with scheduler readings).");
  e.histogram(execve_noise_free, "", noise_free_execve_);
  const std::string listen = "hacoboot_boot_listen_seconds";
  e.family(listen, "histogram", "Time from a boot's start phase to the container's first listen.");
  e.histogram(listen, "", since_start_of(Step::Kind::Listen));
  const std::string listen_noise_free = "hacoboot_boot_listen_noise_free_seconds";
  e.family(listen_noise_free, "histogram",
           "Critical path from a boot's start phase to the container's first listen without its run-queue time: the "
           "time to listen with a CPU always free (boots with scheduler readings).");
  e.histogram(listen_noise_free, "", noise_free_listen_);
}

void BootMetrics::write_steps(Exposition& e, const PhaseNames& names) const {
  const std::string since_start = "hacoboot_phase_since_start_seconds";
  e.family(since_start, "histogram", "Time from a boot's start phase to each phase passed after it.");
  for (const auto& [step, histograms] : steps_) {
    if (step.kind == Step::Kind::Phase) e.histogram(since_start, step_labels(step, names), histograms.since_start);
  }
  const std::string delta = "hacoboot_phase_delta_seconds";
  e.family(delta, "histogram",
           "Own time of each phase and milestone: since the previous step of the same process "
           "(supervisor or container).");
  for (const auto& [step, histograms] : steps_) e.histogram(delta, step_labels(step, names), histograms.delta);
  const std::string cpu = "hacoboot_step_cpu_seconds";
  e.family(cpu, "summary",
           "CPU time of each step of each process of a boot, over the boots whose step has scheduler readings. "
           "One series per lane (supervisor, container, listener, other) and step (phase, execve, listen, after: "
           "the time after a process's last step): at most 4 x (Haconiwa's ~40 phases + 3).");
  for (const auto& [key, states] : lane_steps_)
    e.sum_and_count(cpu, lane_step_labels(key, names), states.cpu_ns, states.count);
  const std::string run_queue = "hacoboot_step_run_queue_seconds";
  e.family(run_queue, "summary",
           "Run-queue time (runnable, waiting for a CPU) of each step of each process of a boot; series as "
           "hacoboot_step_cpu_seconds.");
  for (const auto& [key, states] : lane_steps_) {
    e.sum_and_count(run_queue, lane_step_labels(key, names), states.run_queue_ns, states.count);
  }
}

void BootMetrics::write_syscalls(Exposition& e, const PhaseNames& names) const {
  const std::string syscall = "hacoboot_step_syscall_seconds";
  e.family(syscall, "summary",
           fmt::format("Time in each syscall of each step of each process of a boot (_count: its calls), over the "
                       "boots traced with --syscalls. Per lane and step at most {} syscalls by name, the first met "
                       "(the most time first), and syscall=\"other\" for the rest.",
                       kSyscallSeriesPerStep));
  for (const auto& [key, step] : lane_step_syscalls_) {
    const auto labels = lane_step_labels(key, names);
    for (const auto& [nr, sums] : step.named) {
      e.sum_and_count(syscall, labels + ",syscall=\"" + escape_label_value(syscall_name(nr)) + "\"", sums.ns,
                      sums.calls);
    }
    if (step.other.calls > 0) e.sum_and_count(syscall, labels + R"(,syscall="other")", step.other.ns, step.other.calls);
  }
}

void BootMetrics::write_kernel_cpu(Exposition& e, const PhaseNames& names) const {
  const std::string samples = "hacoboot_step_kernel_cpu_samples_total";
  e.family(samples, "counter",
           fmt::format("CPU samples of each step of each process of a boot, over the boots traced with "
                       "--kernel-profile, by syscall (\"user\" outside any) and where it ran: the short form of the "
                       "kernel stack, or \"user\" in user mode. A sample stands for one period of "
                       "hacoboot_kernel_profile_hertz. Per lane and step at most {} places, the first met (the most "
                       "samples first), and syscall=\"other\",where=\"other\" for the rest.",
                       kKernelCpuSeriesPerStep));
  for (const auto& [key, step] : lane_step_kernel_cpu_) {
    const auto labels = lane_step_labels(key, names);
    for (const auto& [place, count] : step.named) {
      e.sample(samples,
               fmt::format(R"({},syscall="{}",where="{}")", labels, escape_label_value(syscall_name(place.first)),
                           escape_label_value(place.second)),
               std::to_string(count));
    }
    if (step.other > 0) e.sample(samples, labels + R"(,syscall="other",where="other")", std::to_string(step.other));
  }
  e.scalar("hacoboot_kernel_profile_hertz", "gauge",
           "The frequency of --kernel-profile's CPU samples, of the last boot sampled; 0 before one or without it.",
           kernel_profile_hz_);
}

// The failure groups summed by their last step: a dashboard asks where
// boots fail; how each ended is the summary's.
void BootMetrics::write_failures(Exposition& e, const PhaseNames& names) const {
  std::map<Step, std::uint64_t> by_step;
  for (const auto& [failure, count] : boots_.failures) {
    if (has_series(failure.last_step)) by_step[failure.last_step] += count;
  }
  const std::string failed = "hacoboot_boots_incomplete_by_step_total";
  e.family(failed, "counter",
           "Incomplete boots by the last step their dying process passed (phase, execve or listen): where boots "
           "fail.");
  for (const auto& [step, count] : by_step) e.sample(failed, step_labels(step, names), std::to_string(count));
}

void BootMetrics::write_counters(Exposition& e, const PhaseNames& names) const {
  e.scalar("hacoboot_boots_started_total", "counter", "Boots whose start phase was seen.", boots_.started);
  e.scalar("hacoboot_boots_completed_total", "counter", "Started boots that reached execve and listen.",
           boots_.started - boots_.incomplete - boots_.in_flight);
  e.scalar("hacoboot_boots_incomplete_total", "counter",
           "Started boots that failed before execve or listen: their container (or their supervisor before its "
           "fork) ended.",
           boots_.incomplete);
  write_failures(e, names);
  e.scalar(
      "hacoboot_events_lost_total", "counter",
      "Events the kernel could not deliver (ring buffer full) or the tool could not decode: figures may miss boots.",
      lost_events_);
  const std::string dropped = "hacoboot_kernel_dropped_total";
  e.family(dropped, "counter",
           "What the kernel side could not aggregate or take, its map full (a stack also when its hash bucket "
           "holds another) (--syscalls, --kernel-profile): "
           "non-zero, some steps' syscall, blocking or kernel CPU figures are incomplete.");
  e.sample(dropped, R"(what="syscall_aggregates")", std::to_string(kernel_drops_.syscall_aggregates));
  e.sample(dropped, R"(what="blocked_stretches")", std::to_string(kernel_drops_.blocked_stretches));
  e.sample(dropped, R"(what="kernel_stacks")", std::to_string(kernel_drops_.kernel_stacks));
  e.sample(dropped, R"(what="cpu_samples")", std::to_string(kernel_drops_.cpu_samples));
  e.scalar("hacoboot_phase_events_untracked_total", "counter",
           "Phase events ignored in the kernel: of no launch seen starting (begun before tracing, or not Haconiwa's).",
           untracked_phases_);
  e.scalar("hacoboot_boots_in_flight", "gauge", "Boots being traced now.", boots_in_flight_);
  e.scalar("hacoboot_haconiwa_files_attached", "gauge",
           "Files the probe is attached to: the haconiwa binary, and those it replaced (upgrades) that processes may "
           "still run.",
           haconiwa_files_);
  e.scalar("hacoboot_haconiwa_replacements_total", "counter",
           "New files seen at the haconiwa binary's path (a package upgrade renames one over it).",
           haconiwa_replacements_);
  e.family("hacoboot_build_info", "gauge", "The hacoboot-sampler version exporting these metrics; always 1.");
  e.sample("hacoboot_build_info", "version=\"" + escape_label_value(HACOBOOT_VERSION) + "\"", "1");
}

}  // namespace hacoboot
