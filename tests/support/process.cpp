#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace hacoboot::it {
namespace {

constexpr auto kPollStep = 10ms;

std::atomic<unsigned> g_output_counter{0};

void check(int err, const char* what) {
  if (err != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(err));
}

ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.exited = true;
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
  }
  return s;
}

// Fills a pipe until a write would block, so the next write by anyone blocks.
void fill_pipe(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  const std::string chunk(4096, 'x');
  while (::write(fd, chunk.data(), chunk.size()) > 0) {
  }
  while (::write(fd, "x", 1) > 0) {
  }
  ::fcntl(fd, F_SETFL, flags);
}

}  // namespace

std::string ExitStatus::describe() const {
  std::string text;
  if (exited)
    text = "exited " + std::to_string(code);
  else if (signal != 0)
    text = "killed by signal " + std::to_string(signal);
  else
    text = "still running";
  if (timed_out) text += " (timed out)";
  return text;
}

Process::Process(std::vector<std::string> argv, const std::filesystem::path& output_dir, StdoutTo stdout_to)
    : argv_(std::move(argv)) {
  if (argv_.empty()) throw std::invalid_argument("Process: empty argv");
  const auto n = g_output_counter.fetch_add(1);
  // The pid too: ctest runs each test in a process of its own, all counting
  // from 0, and two that ran readelf at once in one directory read each
  // other's output.
  const auto stem =
      std::filesystem::path(argv_[0]).filename().string() + "." + std::to_string(::getpid()) + "." + std::to_string(n);
  out_path_ = output_dir / (stem + ".stdout");
  err_path_ = output_dir / (stem + ".stderr");

  posix_spawn_file_actions_t actions;
  check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init");
  posix_spawnattr_t attr;
  check(posix_spawnattr_init(&attr), "posix_spawnattr_init");
  check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "addopen stdin");
  int pipe_write = -1;
  if (stdout_to == StdoutTo::File) {
    check(posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644),
          "addopen stdout");
  } else {
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) check(errno, "pipe2");
    pipe_read_ = fds[0];
    pipe_write = fds[1];
    if (stdout_to == StdoutTo::FullPipe) fill_pipe(pipe_write);
    // Before the spawn: no write of the child's may get in while a reader is left.
    if (stdout_to == StdoutTo::ClosedPipe) close_pipe();
    check(posix_spawn_file_actions_adddup2(&actions, pipe_write, 1), "adddup2 stdout");
  }
  check(posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644),
        "addopen stderr");

  // A shell's background job or ctest may have left SIGINT ignored or
  // blocked: the tools must see the signals the tests send.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
  sigset_t empty;
  sigemptyset(&empty);
  check(posix_spawnattr_setsigdefault(&attr, &defaults), "setsigdefault");
  check(posix_spawnattr_setsigmask(&attr, &empty), "setsigmask");
  check(posix_spawnattr_setpgroup(&attr, 0), "setpgroup");
  check(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP),
        "setflags");

  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  const int err = posix_spawn(&pid_, argv_[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (pipe_write >= 0) ::close(pipe_write);
  check(err, ("spawning " + argv_[0]).c_str());
}

Process::~Process() {
  if (!status_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // its own group: only what it started
    ::kill(pid_, SIGKILL);
    reap(0);
  }
  close_pipe();
}

void Process::reap(int options) {
  // Once reaped, the pid is free for the kernel to give to another child of
  // ours (the pid-reuse tests make that likely): never wait for it again.
  if (status_) return;
  int status = 0;
  rusage usage{};
  pid_t r = -1;
  while ((r = ::wait4(pid_, &status, options, &usage)) < 0 && errno == EINTR) {
  }
  if (r < 0) throw std::runtime_error("wait4: " + std::string(std::strerror(errno)));
  if (r != pid_) return;
  status_ = decode(status);
  max_rss_kb_ = usage.ru_maxrss;
}

void Process::close_pipe() {
  if (pipe_read_ >= 0) ::close(pipe_read_);
  pipe_read_ = -1;
}

bool Process::running() {
  return !wait_for(0ms).has_value();
}

void Process::send_signal(int signal) const {
  if (!status_) ::kill(pid_, signal);
}

std::optional<ExitStatus> Process::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    reap(WNOHANG);
    if (status_ || std::chrono::steady_clock::now() >= deadline) return status_;
    std::this_thread::sleep_for(kPollStep);
  }
}

ExitStatus Process::wait_or_kill(std::chrono::milliseconds timeout) {
  if (auto status = wait_for(timeout)) return *status;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  reap(0);
  status_->timed_out = true;
  return *status_;
}

long Process::status_kb(std::string_view key) const {
  std::ifstream status(std::filesystem::path("/proc") / std::to_string(pid_) / "status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      return std::stol(line.substr(key.size() + 1));
    }
  }
  return 0;
}

bool Process::wait_for_text(std::string_view text, bool in_stderr, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if ((in_stderr ? err() : out()).find(text) != std::string::npos) return true;
    if (!running() || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollStep);
  }
}

void Process::remove_output_files() const {
  std::error_code ec;
  std::filesystem::remove(out_path_, ec);
  std::filesystem::remove(err_path_, ec);
}

std::string Process::out() const {
  return read_file(out_path_);
}
std::string Process::err() const {
  return read_file(err_path_);
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& output_dir,
                          std::chrono::milliseconds timeout) {
  Process process(argv, output_dir);
  ProcessResult result;
  result.status = process.wait_or_kill(timeout);
  result.out = process.out();
  result.err = process.err();
  process.remove_output_files();
  return result;
}

std::optional<std::filesystem::path> find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const auto candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& arg : argv) {
    if (!command.empty()) command += ' ';
    command += shell_quote(arg);
  }
  return command;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("writing " + path.string() + " failed");
}

void make_socket_file(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof address.sun_path)
    throw std::runtime_error("socket path too long: " + path.string());
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int error = errno;
  ::close(fd);
  if (bound != 0) throw std::runtime_error("bind " + path.string() + ": " + std::strerror(error));
}

std::vector<pid_t> processes_mentioning(const std::string& text) {
  std::vector<pid_t> pids;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == self) continue;
    // Both empty for zombies and kernel threads.
    const std::string cmdline = read_file(entry.path() / "cmdline");
    const std::string environment = read_file(entry.path() / "environ");
    if (cmdline.find(text) != std::string::npos || environment.find(text) != std::string::npos) pids.push_back(pid);
  }
  return pids;
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds guard, std::chrono::milliseconds step) {
  const auto deadline = std::chrono::steady_clock::now() + guard;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace hacoboot::it
