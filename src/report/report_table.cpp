#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>

#include "model/lane.hpp"
#include "model/path_breakdown.hpp"
#include "model/phases.hpp"
#include "model/syscall_names.hpp"
#include "report/report_writers.hpp"

namespace hacoboot {
namespace {

constexpr int kLabelWidth = 34;
// A step of the breakdown, indented under its lane, with Haconiwa's longest
// phase name ("18 CONTAINER_NAMESPACE_GENERATED").
constexpr int kLaneLabelWidth = 35;
// Where a step's syscalls begin under it: past its label's indent and number.
constexpr int kSyscallIndent = 9;
// Keeps the breakdown's rows within 120 columns.
constexpr int kBarWidth = 12;
constexpr int kHistogramBarWidth = 52;  // as bpftrace's hist()

std::string step_label(const Step& step, const PhaseNames& names) {
  if (step.kind != Step::Kind::Phase) return fmt::format("    {}", step_name(step, names));
  return fmt::format("{:>3} {}", step.phase, step_name(step, names));
}

std::string bar(double fraction, int width) {
  const auto cells = static_cast<std::size_t>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
  std::string drawn(cells, '@');
  return drawn;
}

class TableWriter final : public ReportWriter {
 public:
  explicit TableWriter(TableDetail detail) : detail_(detail) {}

  void write(const Summary& summary, const RunFacts& facts, std::ostream& out) const override {
    header(summary, facts, out);
    milestones(summary, facts, out);
    breakdown(summary, facts, out);
    if (detail_.histograms) {
      histogram(out, "execve", summary.execve());
      histogram(out, "listen", summary.listen());
    }
  }

 private:
  static void header(const Summary& summary, const RunFacts& facts, std::ostream& out) {
    const auto& boots = summary.boots();
    out << fmt::format("Boots: {} started, {} reached execve, {} reached listen, {} incomplete", boots.started,
                       boots.execve, boots.listen, boots.incomplete);
    if (boots.in_flight > 0) out << fmt::format(", {} in flight at stop", boots.in_flight);
    if (boots.unstarted > 0) out << fmt::format(", {} seen only after their start", boots.unstarted);
    out << '\n';
    for (const auto& [failure, count] : boots.failures_by_count()) {
      out << fmt::format("{} incomplete: {}\n", count, describe_failure(failure, facts.names));
    }
    out << "execve of: " << (facts.command.empty() ? "the container's first execve" : facts.command) << '\n';
    if (facts.lost_events > 0) {
      out << fmt::format("WARNING: {} events lost (ring buffer full): figures may be incomplete\n", facts.lost_events);
    }
    if (facts.unaccounted_threads > 0) {
      out << fmt::format(
          "WARNING: {} threads unaccounted (scheduler map full): CPU / RUNQ / SLEEP / I/O figures may be incomplete\n",
          facts.unaccounted_threads);
    }
    if (facts.syscalls_dropped > 0) {
      out << fmt::format(
          "WARNING: {} syscall aggregates dropped (syscall map full): syscall figures may be incomplete\n",
          facts.syscalls_dropped);
    }
    if (facts.blocking_dropped > 0) {
      out << fmt::format(
          "WARNING: {} blocked stretches dropped (blocking map full): blocking points may be incomplete\n",
          facts.blocking_dropped);
    }
    if (facts.stacks_dropped > 0) {
      out << fmt::format("WARNING: {} kernel stacks not taken ({}): their blocking points and samples have no frames\n",
                         facts.stacks_dropped, kStacksNotTaken);
    }
    if (facts.samples_dropped > 0) {
      out << fmt::format("WARNING: {} CPU samples dropped (sample map full): kernel CPU shares may be skewed\n",
                         facts.samples_dropped);
    }
    for (const auto& map : facts.kernel_maps) {
      // A quarter left: boots in flight at once, or longer ones, would fill it.
      if (map.capacity > 0 && map.peak >= map.capacity - map.capacity / 4) {
        out << fmt::format(
            "NOTE: kernel map {} held up to {} of its {} entries: fewer boots in flight at once keep it "
            "from filling\n",
            map.map, map.peak, map.capacity);
      }
    }
    if (facts.untracked_phases > 0) {
      out << fmt::format("Ignored: {} phase events of launches not seen starting\n", facts.untracked_phases);
    }
    if (facts.repaired_switch_ins > 0) {
      out << fmt::format(
          "Repaired: {} switches onto a CPU the scheduler hooks missed (states from the kernel's CPU time)\n",
          facts.repaired_switch_ins);
    }
  }

  // The reference script's two metrics, with the distribution, each followed
  // by its noise-free figure when the boots' paths have states.
  static void milestones(const Summary& summary, const RunFacts& facts, std::ostream& out) {
    out << fmt::format("\n{:<{}} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                       "TIME SINCE " + facts.names.name(facts.start_phase), kLabelWidth, "COUNT", "AVG", "P50", "P90",
                       "P99", "MIN", "MAX");
    const auto& paths = summary.paths();
    distribution_row(out, "execve", summary.execve());
    if (!paths.noise_free_execve().empty()) distribution_row(out, "execve (noise-free)", paths.noise_free_execve());
    distribution_row(out, "listen", summary.listen());
    if (!paths.noise_free_listen().empty()) distribution_row(out, "listen (noise-free)", paths.noise_free_listen());
  }

  static void distribution_row(std::ostream& out, const char* label, const SampleStats& stats) {
    out << fmt::format("{:<{}} {:>6}", label, kLabelWidth, stats.count());
    for (const auto value :
         {stats.avg(), stats.percentile(50), stats.percentile(90), stats.percentile(99), stats.min(), stats.max()}) {
      out << fmt::format(" {:>9}", stats.empty() ? "-" : format_duration(value));
    }
    out << '\n';
  }

  // Every step by lane (supervisor, container, listener, other), with its
  // own time, what the scheduler says of it, and its share of the critical
  // path to listen (to execve when nothing listened): the steps listen waited
  // for, whose shares add up to 100 %. Steps off the path (work in parallel,
  // waiting that did not delay listen) are marked and get no share.
  void breakdown(const Summary& summary, const RunFacts& facts, std::ostream& out) const {
    const auto& paths = summary.paths();
    const auto rows = paths.steps_by_lane();
    const auto path = followed_path(paths);
    if (rows.empty() && path.lengths->empty()) return;
    out << '\n';
    path_line(path, paths.forks_only_boots(), out);
    if (rows.empty()) return;
    out << fmt::format("\n{:<{}} {:>5} {:>11} {:>8} {:>8} {:>8} {:>8} {:>8}  {}\n", "BREAKDOWN BY LANE",
                       kLaneLabelWidth, "COUNT", "SINCE START", "OWN TIME", "CPU", "RUNQ", "SLEEP", "I/O",
                       "SHARE OF PATH");
    std::optional<Lane> lane;
    for (const auto& [key, row] : rows) {
      if (key.lane != lane) out << lane_name(key.lane) << '\n';
      lane = key.lane;
      step_row(key, *row, path, facts.names, out);
      if (const auto syscalls = row->mean_syscalls()) {
        if (detail_.all_syscalls) {
          syscall_rows(*syscalls, row->boots_with_syscalls, out);
          blocking_stacks(syscalls->blocking, row->boots_with_syscalls, out);
          if (syscalls->kernel_cpu) kernel_cpu_stacks(*syscalls->kernel_cpu, out);
        } else {
          top_syscalls(*syscalls, out);
          top_blocking(syscalls->blocking, row->boots_with_syscalls, out);
          if (syscalls->kernel_cpu) top_kernel_cpu(*syscalls->kernel_cpu, row->boots_with_syscalls, out);
        }
      }
    }
  }

  // The state a call spent most of its time in, as the columns name it.
  static const char* main_state(const SchedTotals& states) {
    const std::array<std::pair<std::uint64_t, const char*>, 4> by_state{
        {{states.cpu, "CPU"}, {states.run_queue, "RUNQ"}, {states.sleep, "sleep"}, {states.io, "I/O"}}};
    return std::max_element(by_state.begin(), by_state.end(),
                            [](const auto& a, const auto& b) { return a.first < b.first; })
        ->second;
  }

  // Under a step: its calls with the most time per boot, and what they waited on.
  static void top_syscalls(const StepSyscalls& syscalls, std::ostream& out) {
    constexpr std::size_t kTop = 3;
    std::string line;
    for (std::size_t i = 0; i < syscalls.calls.size() && i < kTop; ++i) {
      const auto& call = syscalls.calls[i];
      if (call.states.total() == 0) break;
      if (!line.empty()) line += " · ";
      line +=
          fmt::format("{} {} {}", syscall_name(call.nr), format_duration(call.states.total()), main_state(call.states));
    }
    if (!line.empty()) out << fmt::format("{:>{}}{}\n", "", kSyscallIndent, line);
  }

  // "blocked: read in anon_pipe_read 20.1 ms x1, woken by the container's
  // anon_pipe_write (tid 812)": per boot, with the waker where a traced
  // thread woke it.
  static std::string blocking_line(const BlockingSummary& point, std::uint64_t boots) {
    const double per_boot = static_cast<double>(point.count) / static_cast<double>(boots);
    auto line = fmt::format("blocked: {} in {} {} x{:.3g}", syscall_name(point.nr), point.wait,
                            format_duration(point.time_ns), per_boot);
    if (const auto waker = woken_by(point); !waker.empty()) line += ", woken by " + waker;
    return line;
  }

  // "the container's anon_pipe_write (tid 812)", "anon_pipe_write", "the
  // supervisor": what is known of the waker; empty without one.
  static std::string woken_by(const BlockingSummary& point) {
    std::string waker;
    if (point.waker_lane) {
      waker = point.waker_lane == Lane::Other ? "another thread" : fmt::format("the {}", lane_name(*point.waker_lane));
      if (!point.waking.empty()) waker += "'s ";
    }
    waker += point.waking;
    if (point.waker_tid == 0) return waker;
    return waker.empty() ? fmt::format("tid {}", point.waker_tid) : fmt::format("{} (tid {})", waker, point.waker_tid);
    return waker;
  }

  // Under a step's top calls: where it blocked most, per boot.
  static void top_blocking(const std::vector<BlockingPoint>& points, std::uint64_t boots, std::ostream& out) {
    constexpr std::size_t kTop = 2;
    const auto summaries = summarize_blocking(points);
    for (std::size_t i = 0; i < summaries.size() && i < kTop; ++i) {
      out << fmt::format("{:>{}}{}\n", "", kSyscallIndent, blocking_line(summaries[i], boots));
    }
  }

  // --all-syscalls: every blocking point with its stacks, innermost first.
  static void blocking_stacks(const std::vector<BlockingPoint>& points, std::uint64_t boots, std::ostream& out) {
    const auto frame_rows = [&out](const std::vector<std::string>& frames) {
      for (const auto& frame : frames) out << fmt::format("{:>{}}{}\n", "", kSyscallIndent + 4, frame);
    };
    for (const auto& point : points) {
      out << fmt::format("{:>{}}{}\n", "", kSyscallIndent, blocking_line(summarize_blocking({point}).front(), boots));
      frame_rows(point.frames);
      if (point.waker_frames.empty()) continue;
      out << fmt::format("{:>{}}woken by:\n", "", kSyscallIndent + 2);
      frame_rows(point.waker_frames);
    }
  }

  // "mount in shmem_fill_super", "user space", "page fault in clear_page (no syscall)".
  static std::string sample_place(std::uint32_t nr, bool user_mode, const std::string& where) {
    if (user_mode) return "user space";
    if (nr == kUserTime) return fmt::format("{} (no syscall)", where);
    return fmt::format("{} in {}", syscall_name(nr), where);
  }

  static std::string share(std::uint64_t part, std::uint64_t whole) {
    return fmt::format("{:.0f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  }

  // What the shares are of: "12 samples per boot at 999 Hz", and whether
  // the step's first instants went unsampled.
  static std::string samples_note(const StepKernelCpu& cpu, std::uint64_t boots) {
    auto note = fmt::format("{:.3g} samples per boot at {} Hz",
                            static_cast<double>(cpu.samples()) / static_cast<double>(boots), cpu.hz);
    if (cpu.partly_sampled) note += ", sampling began within the step";
    return note;
  }

  // Under a step's blocking points: where its CPU went, by sample shares;
  // not under a step with less than a sample per boot, whose shares say
  // nothing.
  static void top_kernel_cpu(const StepKernelCpu& cpu, std::uint64_t boots, std::ostream& out) {
    constexpr std::size_t kTop = 2;
    const auto total = cpu.samples();
    if (total == 0 || total < boots) return;
    const auto summaries = summarize_kernel_cpu(cpu.points);
    std::string line;
    for (std::size_t i = 0; i < summaries.size() && i < kTop; ++i) {
      const auto& top = summaries[i];
      if (!line.empty()) line += ", ";
      line += fmt::format("{} {}", sample_place(top.nr, top.user_mode, top.where), share(top.samples, total));
    }
    out << fmt::format("{:>{}}kernel CPU: {} ({})\n", "", kSyscallIndent, line, samples_note(cpu, boots));
  }

  // --all-syscalls: every sampled place with its stack, innermost first.
  static void kernel_cpu_stacks(const StepKernelCpu& cpu, std::ostream& out) {
    const auto total = cpu.samples();
    if (total == 0) return;
    for (const auto& point : cpu.points) {
      out << fmt::format("{:>{}}kernel CPU: {} {} ({} samples at {} Hz)\n", "", kSyscallIndent,
                         sample_place(point.nr, point.user_mode, cpu_frame(point.frames)), share(point.samples, total),
                         point.samples, cpu.hz);
      for (const auto& frame : point.frames) out << fmt::format("{:>{}}{}\n", "", kSyscallIndent + 4, frame);
    }
  }

  // --all-syscalls: every call of the step and its user time, a row each in
  // the columns of the step's (COUNT: calls per boot).
  static void syscall_rows(const StepSyscalls& syscalls, std::uint64_t boots, std::ostream& out) {
    const auto row = [&](const std::string& name, const std::string& count, const SchedTotals& states) {
      out << fmt::format("{:>{}}{:<{}} {:>5} {:>11} {:>8}", "", kSyscallIndent, name, kLaneLabelWidth - kSyscallIndent,
                         count, "", format_duration(states.total()));
      for (const auto value : {&SchedTotals::cpu, &SchedTotals::run_queue, &SchedTotals::sleep, &SchedTotals::io}) {
        out << fmt::format(" {:>8}", format_duration(states.*value));
      }
      out << '\n';
    };
    for (const auto& call : syscalls.calls) {
      const double per_boot = static_cast<double>(call.count) / static_cast<double>(boots);
      row(syscall_name(call.nr), fmt::format("{:.3g}", per_boot), call.states);
    }
    row("(user space)", "", syscalls.user);
  }

  // The path the breakdown's shares are of: to listen, to execve when nothing listened.
  struct FollowedPath {
    const PathBreakdown* breakdown;
    bool to_listen;
    const SampleStats* lengths;
    const SampleStats* noise_free;  // the boots whose path has states
    const SchedTotals* states;      // summed over those boots

    [[nodiscard]] const char* target() const { return to_listen ? "listen" : "execve"; }
    [[nodiscard]] std::uint64_t row_path_ns(const LaneStepStats& row) const {
      return to_listen ? row.on_listen_path_ns : row.on_execve_path_ns;
    }
    [[nodiscard]] double share(const LaneStepStats& row) const {
      return to_listen ? breakdown->listen_path_share(row) : breakdown->execve_path_share(row);
    }
  };

  static FollowedPath followed_path(const PathBreakdown& paths) {
    if (paths.listen_path().empty() && !paths.execve_path().empty()) {
      return {&paths, false, &paths.execve_path(), &paths.noise_free_execve(), &paths.execve_path_states()};
    }
    return {&paths, true, &paths.listen_path(), &paths.noise_free_listen(), &paths.listen_path_states()};
  }

  // The path's mean length, its mean states and its noise-free length; the
  // states and the noise-free figure are of the boots whose path has states.
  static void path_line(const FollowedPath& path, std::uint64_t forks_only_boots, std::ostream& out) {
    if (path.lengths->empty()) {
      out << "CRITICAL PATH: none (no boot reached execve after its start)\n";
      return;
    }
    out << fmt::format("CRITICAL PATH TO {} (boots: {}): mean {}", path.target(), path.lengths->count(),
                       format_duration(path.lengths->avg()));
    if (const auto with_states = path.noise_free->count(); with_states > 0) {
      const auto& sum = *path.states;
      out << fmt::format(", CPU {}, RUNQ {}, SLEEP {}, I/O {}; noise-free {}", format_duration(sum.cpu / with_states),
                         format_duration(sum.run_queue / with_states), format_duration(sum.sleep / with_states),
                         format_duration(sum.io / with_states), format_duration(path.noise_free->avg()));
    }
    out << '\n';
    if (forks_only_boots > 0) {
      out << fmt::format(
          "{} boots carry no scheduler readings: their path follows the fork only, their states are unknown\n",
          forks_only_boots);
    }
  }

  static void step_row(const LaneStepKey& key, const LaneStepStats& row, const FollowedPath& path,
                       const PhaseNames& names, std::ostream& out) {
    const auto label = key.step ? step_label(*key.step, names) : std::string("    after its last step");
    const auto since = row.since_start.empty() ? std::string("-") : format_duration(row.since_start.avg());
    out << fmt::format("  {:<{}} {:>5} {:>11} {:>8}", label, kLaneLabelWidth - 2, row.own.count(), since,
                       format_duration(row.own.avg()));
    const auto states = row.mean_states();
    for (const auto value : {&SchedTotals::cpu, &SchedTotals::run_queue, &SchedTotals::sleep, &SchedTotals::io}) {
      out << fmt::format(" {:>8}", states ? format_duration((*states).*value) : "-");
    }
    if (path.row_path_ns(row) == 0) {
      out << "  off path\n";
      return;
    }
    const double fraction = path.share(row);
    const auto drawn = bar(fraction, kBarWidth);
    out << fmt::format("  {:5.1f}%{}{}\n", fraction * 100.0, drawn.empty() ? "" : " ", drawn);
  }

  // bpftrace hist() style: one row per power-of-two slot, empty edges trimmed.
  static void histogram(std::ostream& out, const char* name, const SampleStats& stats) {
    if (stats.empty()) return;
    const auto slots = stats.log2_counts();
    const auto used = [](std::uint64_t n) { return n > 0; };
    const auto first = static_cast<std::size_t>(std::find_if(slots.begin(), slots.end(), used) - slots.begin());
    const auto last = static_cast<std::size_t>(slots.rend() - std::find_if(slots.rbegin(), slots.rend(), used)) - 1;
    const auto peak = *std::max_element(slots.begin(), slots.end());
    out << fmt::format("\n@{} (time since start):\n", name);
    for (std::size_t slot = first; slot <= last; ++slot) {
      const auto low = slot == 0 ? 0 : std::uint64_t{1} << (slot - 1);
      const auto high = std::uint64_t{1} << slot;
      const auto count = slots.at(slot);
      const auto label = fmt::format("[{}, {})", format_duration(low), format_duration(high));
      out << fmt::format("{:<24} {:>8} |{:<{}}|\n", label, count,
                         bar(static_cast<double>(count) / static_cast<double>(peak), kHistogramBarWidth),
                         kHistogramBarWidth);
    }
  }

  TableDetail detail_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_table_writer(TableDetail detail) {
  return std::make_unique<TableWriter>(detail);
}

}  // namespace hacoboot
