#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <ext/stdio_filebuf.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <utility>

#include "util/errors.hpp"

namespace hacoboot {
namespace {

constexpr mode_t kMode = 0644;

bool is_written_in_place(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

mode_t masked_by_umask(mode_t mode) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mode & ~mask;
}

}  // namespace

// libstdc++'s: std::filebuf cannot take a descriptor. Owns and closes it.
class OutputFile::Buffer : public __gnu_cxx::stdio_filebuf<char> {
 public:
  explicit Buffer(int fd) : stdio_filebuf(fd, std::ios::out) {}
};

OutputFile::OutputFile(std::string path, Kind kind) : name_(std::move(path)) {
  if (name_.empty() || name_ == "-") {
    name_ = "standard output";
    stream_ = &std::cout;
    return;
  }
  owned_stream_ = std::make_unique<std::ostream>(nullptr);
  stream_ = owned_stream_.get();
  if (kind == Kind::Streamed) {
    open(O_CREAT | O_TRUNC);
  } else if (is_written_in_place(name_)) {
    open(0);
  } else {
    replacement_ = std::make_unique<ReplacementFile>(name_);
    // The filebuf closes its own descriptor; the replacement keeps one to flush and rename.
    const int fd = ::fcntl(replacement_->fd(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw RuntimeError("cannot write " + name_ + ": " + std::strerror(errno));
    stream_to(fd);
  }
}

void OutputFile::open(int flags) {
  const int fd = ::open(name_.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | flags, kMode);
  if (fd < 0) {
    const int error = errno;
    const std::string why =
        error == ELOOP ? "it is a symbolic link (refused: it could point anywhere)" : std::strerror(error);
    throw UsageError("cannot write " + name_ + ": " + why);
  }
  stream_to(fd);
}

void OutputFile::stream_to(int fd) {
  buffer_ = std::make_unique<Buffer>(fd);
  owned_stream_->rdbuf(buffer_.get());
}

void OutputFile::reopen() {
  if (!buffer_) return;
  finish();
  open(O_CREAT | O_APPEND);
}

OutputFile::~OutputFile() = default;

void OutputFile::finish() {
  stream_->flush();
  if (buffer_ && buffer_->close() == nullptr) stream_->setstate(std::ios::badbit);
  if (!*stream_) throw RuntimeError("writing " + name_ + " failed: " + std::strerror(errno));
  if (replacement_) replacement_->commit(masked_by_umask(kMode));
}

void write_output(const std::string& path, const std::function<void(std::ostream&)>& render) {
  OutputFile out(path, OutputFile::Kind::Replaced);
  render(out.stream());
  out.finish();
}

}  // namespace hacoboot
