// A child process for the tests: spawned with its stdout and stderr in files
// (no pipe can fill up and block it), default signal dispositions, and its own
// process group so a timed-out run can be killed with everything it started.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hacoboot::it {

using namespace std::chrono_literals;

struct ExitStatus {
  bool exited = false;  // exit() was called: code is valid
  int code = -1;
  int signal = 0;  // killed by this signal
  bool timed_out = false;

  [[nodiscard]] std::string describe() const;
};

struct ProcessResult {
  ExitStatus status;
  std::string out;
  std::string err;
};

// Where a Process's stdout goes: a file (read back with out()), or a pipe
// whose read end is closed at once (writes fail with EPIPE) or that is full
// and never read (the next write blocks).
enum class StdoutTo : std::uint8_t { File, ClosedPipe, FullPipe };

class Process {
 public:
  // argv[0] is a path (no PATH lookup). Output files are created in output_dir.
  Process(std::vector<std::string> argv, const std::filesystem::path& output_dir, StdoutTo stdout_to = StdoutTo::File);
  ~Process();  // a process still running is killed (SIGKILL to its group) and reaped
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  Process(Process&&) = delete;
  Process& operator=(Process&&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running();
  void send_signal(int signal) const;  // to this process only, not its group

  // Waits up to timeout; nullopt if it is still running.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Waits up to timeout, then kills the group and reports timed_out.
  ExitStatus wait_or_kill(std::chrono::milliseconds timeout);
  // Waits until `text` appears in stdout (or stderr); false if the process
  // ended or the timeout passed first.
  bool wait_for_text(std::string_view text, bool in_stderr, std::chrono::milliseconds timeout);

  // Peak RSS in kB of the process and every descendant it reaped (wait4's
  // ru_maxrss); 0 until it has been waited for.
  [[nodiscard]] long max_rss_kb() const { return max_rss_kb_; }
  // A kB figure of /proc/PID/status while it runs ("VmRSS", "VmHWM"); 0
  // when unreadable.
  [[nodiscard]] long status_kb(std::string_view key) const;

  [[nodiscard]] std::string out() const;
  [[nodiscard]] std::string err() const;
  void remove_output_files() const;

 private:
  std::vector<std::string> argv_;
  std::filesystem::path out_path_;
  std::filesystem::path err_path_;
  void reap(int options);
  void close_pipe();

  pid_t pid_ = -1;
  int pipe_read_ = -1;
  long max_rss_kb_ = 0;
  std::optional<ExitStatus> status_;
};

// Polls until done() holds, every `step`; false when the guard ran out first.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds guard,
                std::chrono::milliseconds step = std::chrono::milliseconds(20));

// Runs argv to completion (killed after timeout) and returns its output
// (its output files are removed).
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& output_dir,
                          std::chrono::milliseconds timeout = 90s);

// The first executable `name` in $PATH, if any.
std::optional<std::filesystem::path> find_in_path(const std::string& name);

// Quotes text for /bin/sh.
std::string shell_quote(const std::string& text);
std::string shell_command(const std::vector<std::string>& argv);

std::string read_file(const std::filesystem::path& path);
// Creates or truncates path with text; throws std::runtime_error when it cannot.
void write_file(const std::filesystem::path& path, const std::string& text);

// Leaves a UNIX socket's file at path, as a daemon leaves one in its
// directory; throws std::runtime_error when it cannot.
void make_socket_file(const std::filesystem::path& path);

// PIDs of live processes whose command line or environment contains text
// (like pgrep -f, environment included).
std::vector<pid_t> processes_mentioning(const std::string& text);

}  // namespace hacoboot::it
