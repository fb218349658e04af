#include "capture/file_events.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "util/errors.hpp"

namespace hacoboot {
namespace {

constexpr std::uint32_t kDirectoryChanges = IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR;
constexpr std::uint32_t kFileChanges = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB;

}  // namespace

FileEvents::FileEvents() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
  if (!fd_.valid()) throw RuntimeError(std::string("watching the haconiwa binary (inotify): ") + std::strerror(errno));
}

FileEvents::Watch FileEvents::watch_directory(const std::string& directory) {
  const Watch watch = ::inotify_add_watch(fd_.get(), directory.c_str(), kDirectoryChanges);
  if (watch < 0) throw RuntimeError("watching " + directory + " (inotify): " + std::strerror(errno));
  return watch;
}

Expected<FileEvents::Watch> FileEvents::watch_file(int fd) {
  // The magic link leads to the open file itself, whatever its path is now.
  const auto opened = "/proc/self/fd/" + std::to_string(fd);
  const Watch watch = ::inotify_add_watch(fd_.get(), opened.c_str(), kFileChanges);
  if (watch < 0) return Failure{"watching the haconiwa binary (inotify): " + std::string(std::strerror(errno))};
  return watch;
}

std::vector<FileEvents::Change> FileEvents::read() {
  std::vector<Change> changes;
  alignas(inotify_event) std::array<char, 4096> buffer{};
  for (;;) {
    const auto got = ::read(fd_.get(), buffer.data(), buffer.size());
    if (got <= 0) return changes;  // EAGAIN: nothing more
    for (std::size_t at = 0; at + sizeof(inotify_event) <= static_cast<std::size_t>(got);) {
      inotify_event event{};
      std::memcpy(&event, buffer.data() + at, sizeof event);
      const char* name = buffer.data() + at + sizeof event;
      changes.push_back({.watch = (event.mask & IN_Q_OVERFLOW) != 0 ? -1 : event.wd,
                         .mask = event.mask,
                         .name = event.len > 0 ? std::string(name, ::strnlen(name, event.len)) : std::string()});
      at += sizeof event + event.len;
    }
  }
}

}  // namespace hacoboot
