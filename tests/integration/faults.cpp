#include "faults.hpp"

#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <thread>

#include "support/build_paths.hpp"

namespace hacoboot::it {
namespace {

// First two fields of /proc/PID/syscall: the syscall a blocked task sits in
// and its first argument ("1 0x1 ..." is write(1, ...) on x86-64).
std::pair<long, std::string> current_syscall(pid_t pid) {
  std::istringstream fields(proc_text(pid, "syscall"));
  long number = -1;
  std::string first_arg;
  if (!(fields >> number)) return {-1, ""};
  fields >> first_arg;
  return {number, first_arg};
}

}  // namespace

std::uint64_t count_of(const nlohmann::json& summary, const char* key) {
  return summary.value("boots", nlohmann::json::object()).value(key, kAbsent);
}

Truth read_truth(const std::filesystem::path& path) {
  try {
    return parse_truth(read_file(path));
  } catch (const std::exception&) {
    return {};  // not written yet
  }
}

std::optional<std::uint32_t> only_hpid_with(const Truth& truth, const std::string& key) {
  std::optional<std::uint32_t> found;
  for (const auto& [hpid, facts] : truth) {
    if (!facts.contains(key)) continue;
    if (found) return std::nullopt;
    found = hpid;
  }
  return found;
}

std::string proc_text(pid_t pid, const char* file) {
  return read_file(std::filesystem::path("/proc") / std::to_string(pid) / file);
}

bool asleep_in_nanosleep(pid_t pid) {
  const auto [number, arg] = current_syscall(pid);
#ifdef SYS_nanosleep
  if (number == SYS_nanosleep) return true;
#endif
  return number == SYS_clock_nanosleep;
}

bool blocked_writing_stdout(pid_t pid) {
  const auto [number, fd] = current_syscall(pid);
  return (number == SYS_write || number == SYS_writev) && fd == "0x1";
}

bool has_exited(pid_t pid) {
  const auto stat = proc_stat(pid);
  return !stat || stat->state == 'Z' || stat->state == 'X';
}

std::size_t others_mentioning(const std::string& marker, pid_t tracer) {
  const std::string tracer_argv0 = test::sampler().string();
  const auto pids = processes_mentioning(marker);
  return static_cast<std::size_t>(std::count_if(pids.begin(), pids.end(), [&](pid_t p) {
    if (p == tracer) return false;
    const auto cmdline = proc_text(p, "cmdline");
    return cmdline.substr(0, cmdline.find('\0')) != tracer_argv0;
  }));
}

void signal_ours(pid_t pid, int signal, const std::string& marker) {
  const auto cmdline = proc_text(pid, "cmdline");
  ASSERT_NE(cmdline.find(marker), std::string::npos)
      << "pid " << pid << " is not ours (no '" << marker << "' in its command line): not signalling it";
  ASSERT_EQ(::kill(pid, signal), 0) << "kill " << pid << ": " << std::strerror(errno);
}

bool has_kind(const std::vector<BootRow>& rows, const std::string& kind) {
  return std::any_of(rows.begin(), rows.end(), [&](const BootRow& r) { return r.kind == kind; });
}

std::unique_ptr<Process> FaultTest::start_tracer(const std::vector<std::string>& args, StdoutTo stdout_to) {
  std::vector<std::string> all{"--duration", "900s"};
  all.insert(all.end(), args.begin(), args.end());
  auto tracer = std::make_unique<Process>(sampler_argv(all), dir(), stdout_to);
  if (!tracer->wait_for_text("Hit Ctrl-C", true, 60s)) {
    ADD_FAILURE() << "the tracer never started tracing\nstderr: " << tracer->err();
  }
  return tracer;
}

nlohmann::json FaultTest::stop_tracer(Process& tracer, int signal) {
  tracer.send_signal(signal);
  const auto status = tracer.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
  try {
    return nlohmann::json::parse(tracer.out());
  } catch (const std::exception& e) {
    ADD_FAILURE() << "no JSON summary on stdout (" << e.what() << "): " << tracer.out();
    return nlohmann::json::object();
  }
}

void FaultTest::expect_all_gone(const std::string& marker) {
  EXPECT_TRUE(wait_until([&] { return processes_mentioning(marker).empty(); }, 30s))
      << processes_mentioning(marker).size() << " processes mentioning " << marker << " still alive";
}

BpfIds FaultTest::held_bpf_ids(pid_t pid) {
  BpfIds ids;
  wait_until(
      [&] {
        ids = bpf_ids_held_by(pid);
        return ids.programs.size() >= kFewestPrograms && !ids.links.empty();
      },
      60s);
  EXPECT_GE(ids.programs.size(), kFewestPrograms) << "the tracer does not hold its programs";
  EXPECT_FALSE(ids.links.empty()) << "the tracer holds no BPF link";
  return ids;
}

void FaultTest::expect_detached(const BpfIds& ids) {
  std::vector<std::string> present;
  wait_until(
      [&] {
        present = bpf_objects_still_present(ids, dir());
        return present.empty();
      },
      20s);
  std::string listing;
  for (const auto& p : present) listing += p + "\n";
  EXPECT_TRUE(present.empty()) << "still in the kernel after the tracer exited:\n" << listing;
}

void FaultTest::expect_nothing_left_tracked(const nlohmann::json& summary) {
  EXPECT_EQ(summary.value("tracked_at_exit", kAbsent), 0U) << summary.dump(2);
  EXPECT_EQ(count_of(summary, "unstarted"), 0U) << summary.dump(2);
}

std::vector<std::string> FaultTest::launcher_argv(const std::filesystem::path& truth,
                                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv{launcher().string(), "--truth", truth.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--", app().string()});
  return argv;
}

}  // namespace hacoboot::it
