#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>  // mkostemp
#include <cstring>
#include <filesystem>
#include <utility>

#include "util/errors.hpp"

namespace hacoboot {
TemporaryFile::TemporaryFile(std::string name_template) : name_(std::move(name_template)) {
  fd_.reset(::mkostemp(name_.data(), O_CLOEXEC));
  if (!fd_.valid()) name_.clear();
}

TemporaryFile::~TemporaryFile() {
  if (!name_.empty()) ::unlink(name_.c_str());
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

// `.NAME.XXXXXX` beside `path`: same directory, so the rename stays on one filesystem.
std::string temporary_template_beside(const std::string& path) {
  const std::filesystem::path target(path);
  if (!target.has_filename()) throw RuntimeError("cannot write '" + path + "': not a file name");
  const auto directory = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  return (directory / ("." + target.filename().string() + ".XXXXXX")).string();
}

}  // namespace

ReplacementFile::ReplacementFile(std::string path)
    : path_(std::move(path)), temporary_(temporary_template_beside(path_)) {
  if (!temporary_.valid()) {
    const int error = errno;
    throw RuntimeError("cannot write " + path_ + ": cannot create a temporary file beside it: " + std::strerror(error));
  }
}

void ReplacementFile::fail(const char* step, const std::string& why) const {
  throw RuntimeError("cannot write " + path_ + ": " + step + " " + temporary_.name() + ": " + why);
}

void ReplacementFile::fail(const char* step) const {
  fail(step, std::strerror(errno));
}

void ReplacementFile::write(std::string_view data) const {
  if (auto written = temporary_.write(data); !written) fail("write", written.error());
}

void ReplacementFile::commit(mode_t mode) {
  struct stat replaced {};
  if (::lstat(path_.c_str(), &replaced) == 0) {
    if (const auto what = file_type_name(replaced.st_mode); !what.empty()) {
      throw RuntimeError("cannot write " + path_ + ": it is " + what + " (only a regular file is replaced)");
    }
    mode = replaced.st_mode & 0777U;  // not set-id bits: the contents are new
    // Root may give the file back to its owner; anyone else keeps it (EPERM).
    if (::fchown(temporary_.fd(), replaced.st_uid, replaced.st_gid) != 0 && errno != EPERM) fail("chown");
  } else if (errno != ENOENT) {
    const int error = errno;
    throw RuntimeError("cannot write " + path_ + ": " + std::strerror(error));
  }
  if (::fchmod(temporary_.fd(), mode) != 0) fail("chmod");
  // On disk before the rename, so that a crash cannot leave an empty file at `path`.
  if (::fsync(temporary_.fd()) != 0) fail("fsync");
  if (auto closed = temporary_.close(); !closed) fail("close", closed.error());
  if (auto renamed = temporary_.rename_to(path_); !renamed) fail("rename", renamed.error());
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  constexpr mode_t kMode = 0644;
  ReplacementFile file(path);
  file.write(contents);
  file.commit(kMode);
}

}  // namespace hacoboot
