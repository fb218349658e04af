#include "cli/check_report.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <utility>

#include "capture/core_btf_cache.hpp"
#include "capture/haconiwa_file.hpp"
#include "capture/kernel_support.hpp"
#include "capture/preload_checks.hpp"
#include "capture/syscall_tracepoints.hpp"
#include "capture/tracer.hpp"
#include "capture/usdt_multi_link.hpp"
#include "capture/usdt_notes.hpp"
#include "cli/capture_hints.hpp"
#include "util/errors.hpp"
#include "util/file_trust.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

CheckLine ok(std::string item, std::string detail) {
  return {.item = std::move(item), .detail = std::move(detail), .state = CheckState::Ok};
}
CheckLine fallback(std::string item, std::string detail) {
  return {.item = std::move(item), .detail = std::move(detail), .state = CheckState::Fallback};
}
CheckLine missing(std::string item, std::string detail) {
  return {.item = std::move(item), .detail = std::move(detail), .state = CheckState::Missing};
}

std::string version_text(KernelVersion version) {
  return fmt::format("{}.{}", version.major, version.minor);
}

CheckLine kernel_line(const std::string& release, const std::optional<KernelVersion>& version) {
  if (!version)
    return fallback("kernel",
                    fmt::format("release '{}' unreadable: features not checked by version", printable(release)));
  if (*version < kOldestKernel) {
    return missing("kernel", fmt::format("Linux {}, older than {}, the oldest this tool supports", printable(release),
                                         version_text(kOldestKernel)));
  }
  return ok("kernel", fmt::format("Linux {} ({} or later)", printable(release), version_text(kOldestKernel)));
}

const KernelFeature& feature_named(std::string_view name) {
  return *std::find_if(kKernelFeatures.begin(), kKernelFeatures.end(),
                       [&](const KernelFeature& f) { return f.name == name; });
}

// A feature of the table: probed where `probed` has an answer, else by the
// kernel's version (nullopt: unknown, then assumed there).
CheckLine feature_line(const KernelFeature& feature, const std::optional<KernelVersion>& version,
                       std::optional<bool> probed) {
  const auto item = fmt::format("{} ({}+)", feature.name, version_text(feature.since));
  const bool by_version = !version || *version >= feature.since;
  const bool has = probed.value_or(by_version);
  const std::string_view how = probed ? "probed" : "by version";
  if (has) return ok(item, fmt::format("yes, {}: {}", how, feature.needed_for));
  if (feature.without.empty()) return missing(item, fmt::format("no, {}: needed for {}", how, feature.needed_for));
  return fallback(item, fmt::format("no, {}: {} instead", how, feature.without));
}

std::vector<CheckLine> feature_lines(const Options& options, const std::optional<KernelVersion>& version,
                                     bool may_trace) {
  std::vector<CheckLine> lines;
  for (const auto& feature : kKernelFeatures) {
    std::optional<bool> probed;
    // Probing creates a map or loads a program: without the capabilities,
    // a refusal would read as "no".
    if (feature.name == "BPF ring buffer" && may_trace) probed = kernel_has_ring_buffer();
    if (feature.name == "uprobe_multi links") {
      if (options.usdt_attach == UsdtAttach::Perf) {
        lines.push_back(ok(std::string(feature.name), "not used: --usdt-attach perf"));
        continue;
      }
      if (may_trace) probed = kernel_has_uprobe_multi();
    }
    // Their own lines say more: where the BTF is, which capabilities are held.
    if (feature.name == "kernel BTF in /sys/kernel/btf" || feature.name == "CAP_BPF and CAP_PERFMON") continue;
    auto line = feature_line(feature, version, probed);
    if (feature.name == "uprobe_multi links" && options.usdt_attach == UsdtAttach::UprobeMulti &&
        line.state == CheckState::Fallback) {
      line.state = CheckState::Missing;
      line.detail += " (but --usdt-attach uprobe_multi asks for it)";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

CheckLine btf_line(const Options& options) {
  if (!options.btf.empty()) {
    if (const auto problem = btf_file_problem(options.btf)) {
      return missing("kernel BTF", "--btf " + printable(options.btf) + ": " + *problem);
    }
    return ok("kernel BTF", printable(options.btf) + " (--btf)");
  }
  if (::access(kKernelBtf, R_OK) == 0) return ok("kernel BTF", std::string(kKernelBtf) + ", the kernel's own");
  return missing("kernel BTF",
                 fmt::format("no {} ({}): the kernel was built without CONFIG_DEBUG_INFO_BTF; give a BTF file of "
                             "this kernel with --btf (BTFHub has them)",
                             kKernelBtf, std::strerror(errno)));
}

CheckLine capabilities_line(const Capabilities& caps, const std::optional<KernelVersion>& version) {
  std::vector<std::string> held;
  for (const auto cap :
       {Capability::Bpf, Capability::Perfmon, Capability::SysAdmin, Capability::DacReadSearch, Capability::SysPtrace}) {
    if (caps.has(cap)) held.emplace_back(capability_name(cap));
  }
  const auto& split = feature_named("CAP_BPF and CAP_PERFMON");
  const auto needs = version && *version < split.since ? std::string("CAP_SYS_ADMIN (before Linux 5.8)")
                                                       : std::string("CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN");
  const auto detail =
      fmt::format("held: {}; needs {}", held.empty() ? "none" : fmt::format("{}", fmt::join(held, " ")), needs);
  return caps.may_trace() ? ok("capabilities", detail) : missing("capabilities", detail);
}

CheckLine tracepoints_line(const Options& options, const Capabilities& caps) {
  const std::string item = "syscall tracepoints";
  if (options.syscall_hooks == SyscallHooks::RawSyscalls) {
    return fallback(item, "not used: --syscall-hooks raw_syscalls (a program on every syscall of the host)");
  }
  const auto lacking = [&](const std::string& why) {
    if (options.syscall_hooks == SyscallHooks::Tracepoints)
      return missing(item, why + " (--syscall-hooks tracepoints)");
    return fallback(item, why + ": execve/listen through raw_syscalls, a program on every syscall of the host");
  };
  const auto tracefs = mounted_tracefs();
  if (!tracefs) {
    if (caps.has(Capability::SysAdmin)) {
      return ok(item, "tracefs not mounted: the ids are read from a private mount (CAP_SYS_ADMIN held)");
    }
    return lacking("tracefs not mounted, and a private mount needs CAP_SYS_ADMIN");
  }
  if (!tracefs->ids) return lacking("tracefs at " + tracefs->root + ": " + tracefs->ids.error());
  return ok(item, fmt::format("sys_enter_execve (id {}) and sys_exit_listen (id {}) in {}", tracefs->ids->execve_enter,
                              tracefs->ids->listen_exit, tracefs->root));
}

CheckLine cache_line(const Options& options) {
  const std::string item = "BTF cache";
  if (!options.btf.empty()) return ok(item, "not used with --btf");
  if (options.btf_cache == "off") return fallback(item, "off: every start reads the kernel's whole BTF");
  const std::filesystem::path directory = options.btf_cache;
  const auto shown = printable(options.btf_cache);
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) {
    return ok(item, shown + " not there yet: the first run reads the kernel's whole BTF and fills it");
  }
  if (!S_ISDIR(st.st_mode)) {
    return fallback(item, shown + " is not a directory: not used, every start reads the kernel's whole BTF");
  }
  if (!owned_by_us_alone(directory, S_IFDIR)) {
    return fallback(item, fmt::format("{} is not this user's alone (owner uid {}, mode {:o}): not used, every start "
                                      "reads the kernel's whole BTF",
                                      shown, st.st_uid, st.st_mode & 07777));
  }
  const CoreBtfCache cache(directory, Tracer::bpf_object());
  if (const auto cached = cache.cached()) return ok(item, printable(cached->string()) + ": this kernel's types");
  if (const auto bpftool = trusted_bpftool(); !bpftool) {
    return fallback(item, shown + " has nothing for this kernel, and nothing can be cached (" + bpftool.error() +
                              "): every start reads the kernel's whole BTF");
  }
  return ok(item, shown + " has nothing for this kernel yet: the first run fills it");
}

CheckLine haconiwa_line(const Options& options) {
  const std::string item = "haconiwa";
  std::string path;
  if (!options.pid) {
    auto found = find_haconiwa(options.haconiwa);
    if (!found) return missing(item, with_option_hint(found.error()));
    path = std::move(*found);
  }
  // As the run opens it: a binary it would refuse is missing here.
  const auto binary = options.pid ? HaconiwaFile::open_process_exe(*options.pid) : HaconiwaFile::open_path(path);
  if (!binary) return missing(item, binary.error());
  const auto& sites = binary->phase_sites();
  const bool semaphore = std::any_of(sites.begin(), sites.end(), [](const UsdtProbe& p) { return p.semaphore != 0; });
  return ok(item, fmt::format("{}: {} site{} of haconiwa:bootstrap_phase_pass, {}", printable(binary->name()),
                              sites.size(), sites.size() == 1 ? "" : "s",
                              semaphore ? fmt::format("semaphore at {:#x}", sites.front().semaphore)
                                        : std::string("no semaphore")));
}

std::string_view state_name(CheckState state) {
  switch (state) {
    case CheckState::Ok: return "ok";
    case CheckState::Fallback: return "fallback";
    case CheckState::Missing: return "MISSING";
  }
  return "?";
}

std::string items_in(const std::vector<CheckLine>& lines, CheckState state) {
  std::vector<std::string> items;
  for (const auto& line : lines) {
    if (line.state == state) items.push_back(line.item);
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace

std::string haconiwa_binary(const Options& options) {
  if (!options.pid) return resolve_haconiwa(options.haconiwa);
  auto exe = "/proc/" + std::to_string(*options.pid) + "/exe";
  // With the effective ids and capabilities (CAP_SYS_PTRACE), as the open will be.
  if (::faccessat(AT_FDCWD, exe.c_str(), R_OK, AT_EACCESS) != 0) {
    throw UsageError("--pid " + std::to_string(*options.pid) + ": cannot read " + exe + ": " + std::strerror(errno));
  }
  return exe;
}

bool write_check_report(const std::vector<CheckLine>& lines, std::ostream& out) {
  std::size_t width = 0;
  for (const auto& line : lines) width = std::max(width, line.item.size());
  for (const auto& line : lines) {
    // Details quote paths and what files hold: escaped here, once for all.
    out << fmt::format("{:<{}}  {:<8}  {}\n", line.item, width, state_name(line.state), printable(line.detail, kUncut));
  }
  const auto blocking = items_in(lines, CheckState::Missing);
  if (!blocking.empty()) {
    out << "not ready: " << blocking << '\n';
    return false;
  }
  const auto fallbacks = items_in(lines, CheckState::Fallback);
  out << "ready to trace" << (fallbacks.empty() ? "" : " (with fallbacks: " + fallbacks + ")") << '\n';
  return true;
}

std::vector<CheckLine> check_host(const Options& options) {
  const auto release = running_kernel_release();
  const auto version = parse_kernel_release(release);
  const auto caps = Capabilities::effective();
  std::vector<CheckLine> lines{kernel_line(release, version), btf_line(options)};
  auto features = feature_lines(options, version, caps.may_trace());
  lines.insert(lines.end(), std::make_move_iterator(features.begin()), std::make_move_iterator(features.end()));
  lines.push_back(capabilities_line(caps, version));
  lines.push_back(tracepoints_line(options, caps));
  lines.push_back(cache_line(options));
  lines.push_back(haconiwa_line(options));
  return lines;
}

int check_system(const Options& options, std::ostream& out) {
  const bool ready = write_check_report(check_host(options), out);
  out.flush();
  if (!out) throw RuntimeError("writing the check's report failed");
  return ready ? kExitOk : kExitRuntimeError;
}

}  // namespace hacoboot
