#include "capture/syscall_tracepoints.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <utility>
#include <vector>

#include "util/atomic_file.hpp"
#include "util/boot_id.hpp"
#include "util/file_trust.hpp"
#include "util/subprocess.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";
constexpr const char* kDebugfsTracing = "/sys/kernel/debug/tracing";
constexpr std::array<const char*, 2> kEvents = {"sys_enter_execve", "sys_exit_listen"};
using Ids = std::array<int, kEvents.size()>;
// The ids cache: one file per boot, named by its boot id.
constexpr std::string_view kCachePrefix = "syscall-tracepoints-";

// "<root>/events/syscalls/<event>/id" for each event, built before any fork.
std::vector<std::string> id_paths(const char* root) {
  std::vector<std::string> paths;
  paths.reserve(kEvents.size());
  for (const char* event : kEvents) paths.push_back(std::string(root) + "/events/syscalls/" + event + "/id");
  return paths;
}

// The ids in `paths`, nullopt when one is missing (errno set). Only
// open/read/close and no allocation: it also runs in a forked child.
std::optional<Ids> read_ids(const std::vector<std::string>& paths) {
  Ids ids{};
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const int fd = ::open(paths[i].c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::array<char, 32> text{};
    const ssize_t n = ::read(fd, text.data(), text.size() - 1);
    ::close(fd);
    if (n <= 0) return std::nullopt;
    int id = 0;
    std::from_chars(text.data(), text.data() + n, id);
    if (id <= 0) return std::nullopt;
    ids.at(i) = id;
  }
  return ids;
}

// In the child: a private mount namespace, tracefs mounted there, the ids
// (or the errno of what failed) written to `reply`.
[[noreturn]] void look_up_in_private_mount(const std::vector<std::string>& paths, int reply) {
  std::optional<Ids> ids;
  if (::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
      ::mount("tracefs", kTracefs, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0) {
    ids = read_ids(paths);
  }
  const int error = ids ? 0 : errno;
  const bool sent = ids ? ::write(reply, ids->data(), sizeof(*ids)) == sizeof(*ids)
                        : ::write(reply, &error, sizeof(error)) == sizeof(error);
  ::_exit(sent ? 0 : 1);
}

// Reads the child's reply to the end: the ids, or why there are none.
Expected<Ids> read_reply(int reply) {
  std::array<std::byte, sizeof(Ids)> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(reply, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got == sizeof(Ids)) {
    Ids ids{};
    std::memcpy(ids.data(), bytes.data(), sizeof(ids));
    return ids;
  }
  int error = 0;
  if (got >= sizeof(error)) std::memcpy(&error, bytes.data(), sizeof(error));
  return Failure{std::string("no syscall tracepoints in a private tracefs mount (") +
                 (error != 0 ? std::strerror(error) : "the helper failed") + ")"};
}

SyscallTracepointIds to_ids(const Ids& ids) {
  return {.execve_enter = ids[0], .listen_exit = ids[1]};
}

// The cache file: the ids in kEvents' order, e.g. "862 2235\n".
std::optional<Ids> read_cached_ids(const std::filesystem::path& file) {
  std::ifstream in(file);
  Ids ids{};
  for (int& id : ids) {
    if (!(in >> id) || id <= 0) return std::nullopt;
  }
  std::string rest;
  if (in >> rest) return std::nullopt;
  return ids;
}

void write_cached_ids(const std::filesystem::path& file, const SyscallTracepointIds& ids) {
  const auto directory = file.parent_path();
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) return;
  if (!owned_by_us_alone(directory, S_IFDIR)) return;
  // A cache: when it cannot be written, the next run looks the ids up again.
  if (!replace_file(file.string(), fmt::format("{} {}\n", ids.execve_enter, ids.listen_exit))) return;
  remove_superseded(directory, std::string(kCachePrefix), "", file);
}

// Whether `root` is where tracefs is mounted: its events/ is there, or
// there but out of this user's reach (tracefs's root is root's, mode 0700).
bool tracefs_at(const char* root) {
  struct stat st {};
  return ::stat((std::string(root) + "/events").c_str(), &st) == 0 || errno == EACCES;
}

// Why read_ids() failed, from its errno.
std::string why_unreadable(int error) {
  if (error == EACCES) return "its files are unreadable without uid 0 or CAP_DAC_READ_SEARCH";
  if (error == ENOENT) return "it has no syscalls:* events (CONFIG_FTRACE_SYSCALLS)";
  return std::strerror(error);
}

}  // namespace

std::optional<MountedTracefs> mounted_tracefs() {
  for (const char* root : {kTracefs, kDebugfsTracing}) {
    if (!tracefs_at(root)) continue;
    if (const auto ids = read_ids(id_paths(root))) return MountedTracefs{.root = root, .ids = to_ids(*ids)};
    return MountedTracefs{.root = root, .ids = Failure{why_unreadable(errno)}};
  }
  return std::nullopt;
}

SyscallTracepointLookup::SyscallTracepointLookup(const std::filesystem::path& cache_dir) {
  for (const char* root : {kTracefs, kDebugfsTracing}) {
    if (const auto found = read_ids(id_paths(root))) {
      ids_ = to_ids(*found);
      source_ = root;
      return;
    }
  }
  const auto boot_id = cache_dir.empty() ? std::nullopt : current_boot_id();
  if (boot_id) {
    cache_file_ = cache_dir / (std::string(kCachePrefix) + *boot_id);
    if (owned_by_us_alone(cache_dir, S_IFDIR) && owned_by_us_alone(*cache_file_, S_IFREG)) {
      if (const auto cached = read_cached_ids(*cache_file_)) {
        ids_ = to_ids(*cached);
        from_cache_ = true;
        source_ = cache_file_->string() + " (cached)";
        return;
      }
      // Of no use to any later run.
      std::error_code ignored;
      std::filesystem::remove(*cache_file_, ignored);
      unreadable_cache_ = true;
    }
  }
  start_child();
}

void SyscallTracepointLookup::look_up_again() {
  std::error_code ignored;
  if (cache_file_) std::filesystem::remove(*cache_file_, ignored);
  ids_ = Failure{"not looked up yet"};
  from_cache_ = false;
  source_.clear();
  start_child();
}

void SyscallTracepointLookup::keep() const {
  if (cache_file_ && ids_ && !from_cache_) write_cached_ids(*cache_file_, *ids_);
}

// The ids from a child in a private mount namespace: its mount goes away with it.
void SyscallTracepointLookup::start_child() {
  const auto paths = id_paths(kTracefs);
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    ids_ = Failure{std::string("pipe: ") + std::strerror(errno)};
    return;
  }
  UniqueFd reply(fds[0]);
  const UniqueFd write_end(fds[1]);
  auto child = Subprocess::fork([&] { look_up_in_private_mount(paths, write_end.get()); });
  if (!child) {
    ids_ = Failure{child.error()};
    return;
  }
  child_ = std::move(*child);
  reply_ = std::move(reply);
}

bool SyscallTracepointLookup::ready() const {
  if (!child_) return true;
  pollfd reply{.fd = reply_.get(), .events = POLLIN, .revents = 0};
  return ::poll(&reply, 1, 0) == 1;
}

// Only the wait: the ids are no longer wanted, and building result()'s
// messages could throw (out of memory) out of a destructor.
SyscallTracepointLookup::~SyscallTracepointLookup() {
  if (child_) child_->wait();
}

const Expected<SyscallTracepointIds>& SyscallTracepointLookup::result() {
  if (!child_) return ids_;
  const auto reply = read_reply(reply_.get());
  reply_.reset();
  child_->wait();
  child_.reset();
  if (!reply) {
    ids_ = Failure{reply.error()};
    return ids_;
  }
  ids_ = to_ids(*reply);
  source_ = "a private tracefs mount";
  // unreadable_cache_ comes with cache_file_: checked for the analyzer
  if (unreadable_cache_ && cache_file_) source_ += "; " + cache_file_->string() + " held no ids: removed";
  return ids_;
}

}  // namespace hacoboot
