#include "report/folded_stacks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

#include "model/blocking.hpp"
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

// A call's stacks (or the user time's, nr kUserTime) under `frames`: its
// time blocked at each of its blocking points under kBlockedFrame and the
// point's wait_path, the rest on `frames` alone. The blocked time is part
// of the call's, so its stacks add up to `total_ns`.
void add_call_stacks(const std::vector<std::string>& frames, std::uint32_t nr, std::uint64_t total_ns,
                     const std::vector<BlockingPoint>& blocking, std::vector<FoldedStack>& stacks) {
  std::uint64_t left_ns = total_ns;
  for (const auto& point : blocking) {
    if (point.nr != nr) continue;
    auto blocked = frames;
    blocked.emplace_back(kBlockedFrame);
    const auto path = wait_path(point.frames);
    blocked.insert(blocked.end(), path.begin(), path.end());
    const auto blocked_ns = std::min(point.time_ns, left_ns);
    stacks.push_back({std::move(blocked), blocked_ns});
    left_ns -= blocked_ns;
  }
  stacks.push_back({frames, left_ns});
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
    add_call_stacks(under_step(syscall_name(call.nr)), call.nr, call.states.total(), syscalls.blocking, stacks);
  }
  add_call_stacks(under_step(std::string(kUserFrame)), kUserTime, syscalls.user.total(), syscalls.blocking, stacks);
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
