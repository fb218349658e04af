// Base fixture of the integration tests: the root check (skip, or fail when
// HACOBOOT_REQUIRE_BPF=1), a private temporary directory, and helpers that run
// hacoboot-sampler on boots of the demo launcher.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/formats.hpp"
#include "support/process.hpp"
#include "support/summary_checks.hpp"

namespace hacoboot::it {

// The BPF programs hacoboot-sampler loads: these, and one of the two sets of
// syscall hooks.
inline const std::vector<std::string> kCommonPrograms = {"on_phase", "on_fork",         "on_exec",
                                                         "on_exit",  "on_sched_switch", "on_sched_waking"};
inline const std::vector<std::string> kPerSyscallPrograms = {"on_execve", "on_listen_exit"};
inline const std::vector<std::string> kRawSyscallPrograms = {"on_sys_enter", "on_sys_exit"};
inline const std::size_t kFewestPrograms = kCommonPrograms.size() + kRawSyscallPrograms.size();

// HACOBOOT_REQUIRE_BPF=1 (CI): what would skip a test, a missing
// prerequisite or a lost race, fails it instead.
bool bpf_required();

struct TracedBoots {
  ProcessResult result;  // of hacoboot-sampler
  nlohmann::json summary;
  std::vector<BootRow> rows;
  Truth truth;
  // The same truth launch by launch; when empty, truth's one launch per hpid.
  std::vector<Launch> launches;
};

class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // A private copy of hacoboot-launcher: the USDT probe is attached by
  // inode, so boots of other tests running at the same time stay invisible.
  [[nodiscard]] const std::filesystem::path& launcher() const { return launcher_; }
  // A copy of the demo app beside it, which other users can run once dir()
  // is open to them (the build tree may not be: a checkout under /root).
  [[nodiscard]] const std::filesystem::path& app() const { return app_; }
  static std::filesystem::path sampler();
  // Lets every user reach dir() and run the copies in it, for commands run as
  // another user (--run-as, setpriv).
  void open_to_other_users() const;
  // A copy of hacoboot-sampler in dir(), opened to every user likewise.
  [[nodiscard]] std::filesystem::path sampler_for_other_users() const;
  // A fresh path in dir() for a file the tools will write.
  std::filesystem::path new_file(const std::string& stem);
  // Skips the test where dir() is on tmpfs, ramfs or overlayfs, whose fsync
  // returns at once instead of waiting for a device; the test returns after
  // it when IsSkipped() or HasFatalFailure().
  void skip_unless_device_waits() const;

  // Shell command running the launcher with launcher_args on the demo app.
  [[nodiscard]] std::string launcher_command(const std::vector<std::string>& launcher_args,
                                             const std::vector<std::string>& app_args = {}) const;
  // hacoboot-sampler --haconiwa <launcher()> ARGS...
  ProcessResult run_sampler(const std::vector<std::string>& args, std::chrono::milliseconds timeout = 90s);
  [[nodiscard]] std::vector<std::string> sampler_argv(const std::vector<std::string>& args) const;

  // Traces the launcher's boots (--run, --format json, --events, COMMAND =
  // the app); the launcher records its ground truth. Fails the test (not
  // fatally) on a bad exit status or output; check HasFailure(). `alongside`:
  // a shell command run at the same time as the launcher, in the same --run.
  TracedBoots trace_boots(const std::vector<std::string>& launcher_args, const std::vector<std::string>& app_args = {},
                          const std::vector<std::string>& extra_sampler_args = {}, const std::string& alongside = {});

 private:
  std::filesystem::path dir_;
  std::filesystem::path launcher_;
  std::filesystem::path app_;
  unsigned files_ = 0;
};

// A --run command part that waits until `file` exists, or until the tracer
// (its parent) is gone: a test that fails never leaves it looping.
std::string wait_for_file_command(const std::filesystem::path& file);
// Likewise until `count` lines of a launcher's truth file record `key`.
std::string wait_for_truth_command(const std::filesystem::path& truth, const std::string& key, int count);

// `command` in a private mount namespace where tracefs is mounted (the
// host's, or one of its own), or where it is not, whatever the host's state
// (scripts/tracefs-state.sh). Its pid is the command's.
enum class Tracefs : std::uint8_t { Mounted, Unmounted };
std::vector<std::string> with_tracefs(Tracefs state, const std::vector<std::string>& command);

// The fields of /proc/PID/stat the tests read; nullopt when there is no such
// process.
struct ProcStat {
  std::string comm;
  char state = '?';  // 'R', 'S', 'T' stopped, 'Z' zombie...
  pid_t ppid = 0;
  pid_t pgrp = 0;  // process group
};
std::optional<ProcStat> proc_stat(pid_t pid);

using test::expect_boot_counts;

// Joins each traced boot with the truth by hpid and checks: start row t_ns in
// [start_lo, start_hi]; execve since_start in [exec_lo - start_hi, exec_hi -
// start_lo]; listen likewise with listen_lo/hi; container_pid as recorded.
// Returns the hpids of the traced boots.
std::set<std::uint32_t> expect_boots_match_truth(const TracedBoots& traced, std::size_t expected_boots);

// BPF program, link and map ids held open by a process (from /proc/PID/fdinfo).
struct BpfIds {
  std::set<std::uint32_t> programs;
  std::set<std::uint32_t> links;
  std::set<std::uint32_t> maps;
};
BpfIds bpf_ids_held_by(pid_t pid);

// `bpftool -j prog show` / `link show`, parsed.
nlohmann::json bpftool_list(const std::string& object, const std::filesystem::path& output_dir);

// Lines of `bpftool prog show` and `link show` that still show any of ids.
std::vector<std::string> bpf_objects_still_present(const BpfIds& ids, const std::filesystem::path& output_dir);

}  // namespace hacoboot::it
