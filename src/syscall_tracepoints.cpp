#include "hacoboot/syscall_tracepoints.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hacoboot/unique_fd.hpp"

namespace hacoboot {
namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";
constexpr const char* kDebugfsTracing = "/sys/kernel/debug/tracing";
constexpr std::array<const char*, 3> kEvents = {"sys_enter_execve", "sys_enter_execveat", "sys_exit_listen"};
using Ids = std::array<int, kEvents.size()>;

// "<root>/events/syscalls/<event>/id" for each event, built before any fork.
std::vector<std::string> id_paths(const char* root) {
  std::vector<std::string> paths;
  for (const char* event : kEvents) paths.push_back(std::string(root) + "/events/syscalls/" + event + "/id");
  return paths;
}

// Only open/read/close and no allocation: it also runs in a forked child.
bool read_ids(const std::vector<std::string>& paths, Ids& ids) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const int fd = ::open(paths[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::array<char, 32> text{};
    const ssize_t n = ::read(fd, text.data(), text.size() - 1);
    ::close(fd);
    if (n <= 0) return false;
    int id = 0;
    for (ssize_t j = 0; j < n && text[j] >= '0' && text[j] <= '9'; ++j) id = id * 10 + (text[j] - '0');
    if (id <= 0) return false;
    ids[i] = id;
  }
  return true;
}

// In a child: a private mount namespace, tracefs mounted there, the ids sent
// back through a pipe. The mount goes away with the child.
std::optional<Ids> read_ids_in_private_tracefs(std::string& reason) {
  const auto paths = id_paths(kTracefs);
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    reason = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t child = ::fork();
  if (child < 0) {
    reason = std::string("fork: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (child == 0) {
    Ids ids{};
    const bool ok = ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                    ::mount("tracefs", kTracefs, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 &&
                    read_ids(paths, ids);
    const int error = ok ? 0 : errno;
    const bool sent = ok ? ::write(write_end.get(), ids.data(), sizeof(ids)) == sizeof(ids)
                         : ::write(write_end.get(), &error, sizeof(error)) == sizeof(error);
    ::_exit(sent ? 0 : 1);
  }
  write_end.reset();
  std::array<std::byte, sizeof(Ids)> reply{};
  std::size_t got = 0;
  for (ssize_t n = 0; got < reply.size(); got += static_cast<std::size_t>(n)) {
    n = ::read(read_end.get(), reply.data() + got, reply.size() - got);
    if (n < 0 && errno == EINTR)
      n = 0;
    else if (n <= 0)
      break;
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == sizeof(Ids)) {
    Ids ids{};
    std::memcpy(ids.data(), reply.data(), sizeof(ids));
    return ids;
  }
  int error = 0;
  if (got >= sizeof(error)) std::memcpy(&error, reply.data(), sizeof(error));
  reason = std::string("no syscall tracepoints in a private tracefs mount (") +
           (error != 0 ? std::strerror(error) : "the helper failed") + ")";
  return std::nullopt;
}

}  // namespace

std::optional<SyscallTracepointIds> find_syscall_tracepoints(std::string& reason) {
  std::optional<Ids> ids;
  for (const char* root : {kTracefs, kDebugfsTracing}) {
    Ids found{};
    if (read_ids(id_paths(root), found)) {
      ids = found;
      break;
    }
  }
  if (!ids) ids = read_ids_in_private_tracefs(reason);
  if (!ids) return std::nullopt;
  return SyscallTracepointIds{.execve_enter = (*ids)[0], .execveat_enter = (*ids)[1], .listen_exit = (*ids)[2]};
}

}  // namespace hacoboot
