#include "util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "util/errors.hpp"
#include "util/text.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

const char* kind_of(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "of an unknown kind";
  }
}

std::string size_text(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

}  // namespace

std::string read_input_file(const std::string& path, const char* option, std::size_t max_bytes) {
  const auto refuse = [&](const std::string& why) {
    return UsageError(std::string(option) + ": " + printable(path) + ": " + why);
  };
  const auto cannot_read = [&] { return refuse(std::string("cannot read: ") + std::strerror(errno)); };
  struct stat st {};
  const auto require_regular_file = [&] {
    if (!S_ISREG(st.st_mode)) throw refuse(std::string(kind_of(st.st_mode)) + ", not a regular file");
  };
  // Checked before opening too: opening a device (a tape, a terminal) can act on it.
  if (::stat(path.c_str(), &st) != 0) throw cannot_read();
  require_regular_file();
  // O_NONBLOCK: a FIFO put in the file's place meanwhile must not block the open.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) throw cannot_read();
  require_regular_file();

  const auto too_large = [&] { return refuse("larger than " + size_text(max_bytes) + ", the most this option reads"); };
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes) throw too_large();

  std::string text;
  text.reserve(size);
  // Read to the end rather than st_size bytes: the file may grow while read.
  std::array<char, std::size_t{64} << 10> chunk{};
  while (true) {
    const auto got = ::read(fd.get(), chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw cannot_read();
    if (got == 0) return text;
    text.append(chunk.data(), static_cast<std::size_t>(got));
    if (text.size() > max_bytes) throw too_large();
  }
}

}  // namespace hacoboot
