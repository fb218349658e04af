// What the fault tests (faults_*_test.cpp) share: the FaultTest fixture, a
// tracer started and stopped by signal, and probes of /proc.
//
// No assertion in them depends on how fast anything runs: every wait is for
// an observable state (a truth-file line, a process asleep in nanosleep or
// blocked in write, a process gone) with a generous timeout as a hang guard.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixture.hpp"

namespace hacoboot::it {

// What count_of() and json::value() give for a key the summary lacks.
inline constexpr std::uint64_t kAbsent = ~0ULL;

// boots.<key> of a JSON summary.
std::uint64_t count_of(const nlohmann::json& summary, const char* key);

// The truth file so far; empty while it is not written yet.
Truth read_truth(const std::filesystem::path& path);

// The supervisor (hpid) that recorded `key`, if exactly one did.
std::optional<std::uint32_t> only_hpid_with(const Truth& truth, const std::string& key);

// /proc/PID/<file>; empty when unreadable.
std::string proc_text(pid_t pid, const char* file);

bool asleep_in_nanosleep(pid_t pid);
bool blocked_writing_stdout(pid_t pid);

// Exited: no such process, or a zombie no one has reaped yet.
bool has_exited(pid_t pid);

// Processes other than the tracer (whose own argv holds the --run command)
// that mention marker: the --run command and what it started. Children the
// tracer forks for itself (they carry its argv until they exec) are not.
std::size_t others_mentioning(const std::string& marker, pid_t tracer);

// Sends signal to pid only if its command line shows it is one of ours.
void signal_ours(pid_t pid, int signal, const std::string& marker);

bool has_kind(const std::vector<BootRow>& rows, const std::string& kind);

class FaultTest : public IntegrationTest {
 protected:
  // The tracer without --run: traces until a signal (the duration is only a
  // hang guard). Returns once its probes are live.
  std::unique_ptr<Process> start_tracer(const std::vector<std::string>& args, StdoutTo stdout_to = StdoutTo::File);

  // Ends the tracer with signal; the JSON summary it printed.
  static nlohmann::json stop_tracer(Process& tracer, int signal = SIGINT);

  // Waits until no live process mentions marker (command line or environment).
  static void expect_all_gone(const std::string& marker);

  // The tracer's BPF programs and links, once it holds all of them.
  static BpfIds held_bpf_ids(pid_t pid);

  // The kernel frees the links when the last fd goes: none of ids may stay.
  void expect_detached(const BpfIds& ids);

  static void expect_nothing_left_tracked(const nlohmann::json& summary);

  // `launcher --truth TRUTH ARGS -- app`, as argv.
  std::vector<std::string> launcher_argv(const std::filesystem::path& truth, const std::vector<std::string>& args);
};

}  // namespace hacoboot::it
