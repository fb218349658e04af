#pragma once

#include <iosfwd>
#include <span>

#include "model/boot.hpp"
#include "model/boot_analysis.hpp"

namespace hacoboot {

// Writes the boots as Chrome Trace Event JSON, which Perfetto UI and
// chrome://tracing open. Each boot is a process ("boot 3 hpid 200") whose
// tracks are:
// - "boot 3 phases": each phase a complete event lasting until the next phase
//   (the last one lasts 0); execve and listen instant events carrying the
//   critical path's length and its noise-free figure;
// - per process of the boot (lane and tid), "boot 3 supervisor (tid 200)":
//   its steps as complete events (args: states, time on the critical paths;
//   category "step,listen_path" when on the path to listen), and flow
//   arrows for the wakeups and forks the critical paths go through; nested
//   under a step with syscall figures, its syscalls ("fsync (total)", args:
//   calls, total_ns, max_ns, states, "blocking", its top blocking points
//   with their wakers' roles, and "kernel_cpu", its top CPU sample places
//   with their shares of the step's samples, whose frequency and count the
//   step's args give) the most time first, then its time in
//   user space ("user space (total)"), one after another from the step's
//   start: the kernel side sums a step's calls, so each is a total, not when
//   the calls ran;
// - under it, "... states": each step's CPU / run queue / sleep / I/O totals
//   as consecutive slices in that fixed order (the kernel's readings give a
//   step's totals, not when inside it each state occurred).
// Track ids are synthetic (real tids recur across boots); the real ones are
// in the names and args. Times are in microseconds from the earliest
// timestamp of all boots ("otherData.clock_origin_ns", monotonic), so
// concurrent boots overlap as they did and every timestamp keeps its ns.
void write_chrome_trace(std::span<const BootRecord> boots, std::ostream& out, const PhaseNames& names = {});

// The same with each boot's analysis given: analyses[i] is boots[i]'s (the
// overload above takes analyse_boot() of the started ones). Throws
// std::invalid_argument when the sizes differ.
void write_chrome_trace(std::span<const BootRecord> boots, std::span<const BootAnalysis> analyses, std::ostream& out,
                        const PhaseNames& names = {});

}  // namespace hacoboot
