#include "report/folded_stacks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

#include "model/blocking.hpp"
#include "model/kernel_profile.hpp"
#include "model/syscall_names.hpp"
#include "model/syscalls.hpp"

namespace hacoboot {
namespace {

std::string step_frame(const std::optional<Step>& step, const PhaseNames& names) {
  if (!step) return "after last step";
  if (step->kind != Step::Kind::Phase) return step_name(*step, names);
  return fmt::format("{:02} {}", step->phase, step_name(*step, names));
}

// The frame as a folded line can carry it: one frame, on one line.
std::string folded_frame(std::string_view frame) {
  std::string text(frame);
  for (auto& c : text) {
    if (c == ';' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  }
  return text;
}

// The ns a step's samples stand for: each one period of the sampling
// clock. An estimate, not a measured time; saturated, not wrapped, for
// counts no run reaches (a recording's are read as written).
std::uint64_t sampled_ns(std::uint64_t samples, std::uint32_t hz) {
  constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
  if (hz == 0) return 0;
  if (samples > std::numeric_limits<std::uint64_t>::max() / kNsPerSecond)
    return std::numeric_limits<std::uint64_t>::max();
  return samples * kNsPerSecond / hz;
}

// One call's (or the user time's, nr kUserTime) place under a step.
struct CallStacks {
  std::vector<std::string> frames;
  std::uint32_t nr = 0;
  std::uint64_t total_ns = 0;
};

// A call's stacks: its time blocked at each of its blocking points under
// kBlockedFrame and the point's wait_path, then its CPU samples under
// kSampledFrame and the sample's cpu_path (kUserModeFrame in user space),
// the rest on the call's frames alone. Both are parts of the call's time,
// each taken from what is left of it, so its stacks add up to `total_ns`.
void add_call_stacks(const CallStacks& call, const StepSyscalls& syscalls, std::vector<FoldedStack>& stacks) {
  std::uint64_t left_ns = call.total_ns;
  const auto add_below = [&](std::string_view frame, std::vector<std::string> path, std::uint64_t ns) {
    auto below = call.frames;
    below.emplace_back(frame);
    below.insert(below.end(), std::make_move_iterator(path.begin()), std::make_move_iterator(path.end()));
    const auto part_ns = std::min(ns, left_ns);
    stacks.push_back({std::move(below), part_ns});
    left_ns -= part_ns;
  };
  for (const auto& point : syscalls.blocking) {
    if (point.nr == call.nr) add_below(kBlockedFrame, wait_path(point.frames), point.time_ns);
  }
  if (syscalls.kernel_cpu) {
    for (const auto& point : syscalls.kernel_cpu->points) {
      if (point.nr != call.nr) continue;
      auto path = point.user_mode ? std::vector<std::string>{std::string(kUserModeFrame)} : cpu_path(point.frames);
      add_below(kSampledFrame, std::move(path), sampled_ns(point.samples, syscalls.kernel_cpu->hz));
    }
  }
  stacks.push_back({call.frames, left_ns});
}

// The syscalls' and user time's stacks under one step's frames.
void add_syscall_stacks(const std::vector<std::string>& step, const StepSyscalls& syscalls,
                        std::vector<FoldedStack>& stacks) {
  const auto under_step = [&step](std::string leaf) {
    auto frames = step;
    frames.push_back(std::move(leaf));
    return frames;
  };
  for (const auto& call : syscalls.calls) {
    add_call_stacks({under_step(syscall_name(call.nr)), call.nr, call.states.total()}, syscalls, stacks);
  }
  add_call_stacks({under_step(std::string(kUserFrame)), kUserTime, syscalls.user.total()}, syscalls, stacks);
}

}  // namespace

std::vector<FoldedStack> step_stacks(const BootRecord& boot, const BootAnalysis& analysis, const PhaseNames& names) {
  std::vector<FoldedStack> stacks;
  const auto root = fmt::format("boot-{}", boot.sequence);
  for (const auto& step : analysis.steps) {
    if (!step.syscalls) continue;
    add_syscall_stacks({root, std::string(lane_name(step.lane)), step_frame(step.step, names)}, *step.syscalls, stacks);
  }
  return stacks;
}

std::size_t write_folded_stacks(std::span<const FoldedStack> stacks, std::ostream& out) {
  std::map<std::string, std::uint64_t> lines;
  for (const auto& stack : stacks) {
    if (stack.value == 0) continue;
    std::string line;
    for (const auto& frame : stack.frames) {
      if (!line.empty()) line += ';';
      line += folded_frame(frame);
    }
    lines[line] += stack.value;
  }
  for (const auto& [line, value] : lines) out << line << ' ' << value << '\n';
  return lines.size();
}

std::size_t write_folded_stacks(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names) {
  std::vector<FoldedStack> stacks;
  for (const auto& boot : boots) {
    if (!boot.started()) continue;
    auto of_boot = step_stacks(boot, analyse_boot(boot), names);
    stacks.insert(stacks.end(), std::make_move_iterator(of_boot.begin()), std::make_move_iterator(of_boot.end()));
  }
  return write_folded_stacks(stacks, out);
}

}  // namespace hacoboot
