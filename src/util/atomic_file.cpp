#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>  // PATH_MAX
#include <csignal>
#include <cstdint>
#include <cstdlib>  // mkostemp
#include <cstring>
#include <filesystem>
#include <utility>

#include "util/errors.hpp"

namespace hacoboot {
namespace {

// The temporary files in existence, for remove_temporary_files(): a table a
// signal handler may read, without allocation or lock. An entry goes from
// free to being filled to listed, and back to free.
enum class ListedState : std::uint8_t { Free, Filling, Listed };
struct ListedName {
  std::atomic<ListedState> state{ListedState::Free};
  std::array<char, PATH_MAX> name{};
};
static_assert(std::atomic<ListedState>::is_always_lock_free, "read by a signal handler");
constexpr std::size_t kListedNames = 8;  // outputs are written one at a time; the exporter's textfile besides
std::array<ListedName, kListedNames> g_listed;

// The entry now holding `name`; -1 when every one is taken (that file is
// then left to its destructor alone).
int list_name(const std::string& name) {
  if (name.empty() || name.size() >= PATH_MAX) return -1;
  for (std::size_t i = 0; i < g_listed.size(); ++i) {
    auto& entry = g_listed.at(i);
    auto expected = ListedState::Free;
    if (!entry.state.compare_exchange_strong(expected, ListedState::Filling)) continue;
    std::memcpy(entry.name.data(), name.c_str(), name.size() + 1);
    entry.state.store(ListedState::Listed);
    return static_cast<int>(i);
  }
  return -1;
}

void unlist_name(int& listed) {
  if (listed >= 0) g_listed.at(static_cast<std::size_t>(listed)).state.store(ListedState::Free);
  listed = -1;
}

}  // namespace

TemporaryFile::TemporaryFile(std::string name_template) : name_(std::move(name_template)) {
  // Signals wait until the file is listed: a second stop signal handled
  // between its creation and its listing would leave it behind.
  sigset_t all{};
  sigset_t before{};
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &before);
  fd_.reset(::mkostemp(name_.data(), O_CLOEXEC));
  const int error = errno;  // why mkostemp failed, for the caller
  if (!fd_.valid()) name_.clear();
  listed_ = list_name(name_);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = error;
}

TemporaryFile::~TemporaryFile() {
  if (!name_.empty()) ::unlink(name_.c_str());
  unlist_name(listed_);
}

void remove_temporary_files() noexcept {
  for (const auto& entry : g_listed) {
    if (entry.state.load() == ListedState::Listed) ::unlink(entry.name.data());
  }
}

namespace {

Failure errno_failure() {
  return Failure{std::strerror(errno)};
}

}  // namespace

Expected<void> TemporaryFile::write(std::string_view data) const {
  while (!data.empty()) {
    const ssize_t written = ::write(fd_.get(), data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return errno_failure();
    data.remove_prefix(static_cast<std::size_t>(written));
  }
  return {};
}

Expected<void> TemporaryFile::close() {
  if (::close(fd_.release()) != 0) return errno_failure();
  return {};
}

Expected<void> TemporaryFile::rename_to(const std::string& path) {
  if (::rename(name_.c_str(), path.c_str()) != 0) return errno_failure();
  name_.clear();
  unlist_name(listed_);
  return {};
}

std::string file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

namespace {

constexpr mode_t kNewFileMode = 0644;

// `.NAME.XXXXXX` beside `path`: same directory, so the rename stays on one filesystem.
Expected<std::string> temporary_template_beside(const std::string& path) {
  const std::filesystem::path target(path);
  if (!target.has_filename()) return Failure{"cannot write '" + path + "': not a file name"};
  const auto directory = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  constexpr std::string_view kSuffix = ".XXXXXX";
  static_assert(1 + kSuffix.size() == kTemporaryNameExtra, "a dot before the name, the suffix after");
  return (directory / ("." + target.filename().string() + std::string(kSuffix))).string();
}

Failure creation_failure(const std::string& path) {
  return Failure{"cannot write " + path + ": cannot create a temporary file beside it: " + std::strerror(errno)};
}

Failure step_failure(const std::string& path, const char* step, const TemporaryFile& temporary,
                     const std::string& why = std::strerror(errno)) {
  return Failure{"cannot write " + path + ": " + step + " " + temporary.name() + ": " + why};
}

Expected<void> write_to(const TemporaryFile& temporary, const std::string& path, std::string_view data) {
  if (auto written = temporary.write(data); !written) return step_failure(path, "write", temporary, written.error());
  return {};
}

// Takes the permissions and owner of the file at `path`, or `mode` when
// there is none; refuses what is not a regular file.
Expected<void> take_place_of(const TemporaryFile& temporary, const std::string& path, mode_t mode) {
  struct stat replaced {};
  if (::lstat(path.c_str(), &replaced) == 0) {
    if (const auto what = file_type_name(replaced.st_mode); !what.empty()) {
      return Failure{"cannot write " + path + ": it is " + what + " (only a regular file is replaced)"};
    }
    mode = replaced.st_mode & 0777U;  // not set-id bits: the contents are new
    // Root may give the file back to its owner; anyone else keeps it (EPERM).
    if (::fchown(temporary.fd(), replaced.st_uid, replaced.st_gid) != 0 && errno != EPERM) {
      return step_failure(path, "chown", temporary);
    }
  } else if (errno != ENOENT) {
    return Failure{"cannot write " + path + ": " + std::strerror(errno)};
  }
  if (::fchmod(temporary.fd(), mode) != 0) return step_failure(path, "chmod", temporary);
  return {};
}

Expected<void> put_in_place(TemporaryFile& temporary, const std::string& path, mode_t mode) {
  if (auto taken = take_place_of(temporary, path, mode); !taken) return taken;
  // On disk before the rename, so that a crash cannot leave an empty file at `path`.
  if (::fsync(temporary.fd()) != 0) return step_failure(path, "fsync", temporary);
  if (auto closed = temporary.close(); !closed) return step_failure(path, "close", temporary, closed.error());
  if (auto renamed = temporary.rename_to(path); !renamed) {
    return step_failure(path, "rename", temporary, renamed.error());
  }
  return {};
}

void throw_if_failed(const Expected<void>& done) {
  if (!done) throw RuntimeError(done.error());
}

std::string template_or_throw(const std::string& path) {
  auto name_template = temporary_template_beside(path);
  if (!name_template) throw RuntimeError(name_template.error());
  return std::move(*name_template);
}

}  // namespace

ReplacementFile::ReplacementFile(std::string path) : path_(std::move(path)), temporary_(template_or_throw(path_)) {
  if (!temporary_.valid()) throw_if_failed(creation_failure(path_));
}

void ReplacementFile::write(std::string_view data) const {
  throw_if_failed(write_to(temporary_, path_, data));
}

void ReplacementFile::commit(mode_t mode) {
  throw_if_failed(put_in_place(temporary_, path_, mode));
}

Expected<void> replace_file(const std::string& path, std::string_view contents) {
  const auto name_template = temporary_template_beside(path);
  if (!name_template) return Failure{name_template.error()};
  TemporaryFile temporary(*name_template);
  if (!temporary.valid()) return creation_failure(path);
  if (auto written = write_to(temporary, path, contents); !written) return written;
  return put_in_place(temporary, path, kNewFileMode);
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  throw_if_failed(replace_file(path, contents));
}

}  // namespace hacoboot
