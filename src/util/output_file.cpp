#include "util/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <streambuf>
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

// Why an open of `path` failed with `error`, in the words of check_output_paths.
std::string open_failure(const std::string& path, int error) {
  if (error == ELOOP) return "it is a symbolic link (refused: it could point anywhere)";
  struct stat st {};
  // A FIFO without a reader, opened without waiting for one; a socket.
  if (error == ENXIO && ::lstat(path.c_str(), &st) == 0) {
    return S_ISFIFO(st.st_mode) ? "it is a FIFO no process reads (the tool does not wait for a reader)"
                                : "it is " + file_type_name(st.st_mode);
  }
  return std::strerror(error);
}

// `path` opened for writing where it is: a regular file (created with
// `flags`), a character device or a FIFO; never through a symbolic link and
// never waiting (O_NONBLOCK, cleared once open: writes may wait for a slow
// reader, as they always did).
Expected<UniqueFd> open_in_place(const std::string& path, int flags) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | flags, kMode));
  if (!fd.valid()) return Failure{open_failure(path, errno)};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Failure{std::strerror(errno)};
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return Failure{"it is " + file_type_name(st.st_mode)};
  }
  const int status = ::fcntl(fd.get(), F_GETFL);
  if (status < 0 || ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK) != 0) return Failure{std::strerror(errno)};
  return fd;
}

}  // namespace

// Writes a file descriptor it owns, and keeps why its first write failed:
// by the time a message reports the loss (at the end, or a reopen), errno
// says something else.
class OutputFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(UniqueFd fd) : fd_(std::move(fd)) { setp(pending_.data(), pending_.data() + pending_.size()); }

  // Writes what is pending and closes; false when anything was lost.
  bool close() {
    const bool drained = drain();
    if (::close(fd_.release()) != 0) keep(errno);  // NFS reports write errors here
    return drained && error_ == 0;
  }
  // errno of the first failed write or close; 0 when none failed.
  [[nodiscard]] int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* next = pbase();
    while (next < pptr()) {
      const auto written = ::write(fd_.get(), next, static_cast<std::size_t>(pptr() - next));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        keep(written < 0 ? errno : EIO);
        break;
      }
      next += written;
    }
    setp(pending_.data(), pending_.data() + pending_.size());  // what failed is dropped
    return error_ == 0;
  }
  void keep(int error) {
    if (error_ == 0) error_ = error;
  }

  UniqueFd fd_;
  std::array<char, 8192> pending_{};
  int error_ = 0;
};

OutputFile::OutputFile(std::string path, Kind kind) : name_(std::move(path)) {
  if (name_.empty() || name_ == "-") {
    name_ = "standard output";
    standard_output_ = true;
    stream_ = &std::cout;
    return;
  }
  owned_stream_ = std::make_unique<std::ostream>(nullptr);
  stream_ = owned_stream_.get();
  if (kind == Kind::Streamed || is_written_in_place(name_)) {
    auto fd = open_in_place(name_, kind == Kind::Streamed ? O_CREAT | O_TRUNC : 0);
    if (!fd) throw UsageError("cannot write " + name_ + ": " + fd.error());
    stream_to(std::move(*fd));
    return;
  }
  replacement_ = std::make_unique<ReplacementFile>(name_);
  // The buffer closes its own descriptor; the replacement keeps one to flush and rename.
  UniqueFd fd(::fcntl(replacement_->fd(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) throw RuntimeError("cannot write " + name_ + ": " + std::strerror(errno));
  stream_to(std::move(fd));
}

void OutputFile::stream_to(UniqueFd fd) {
  buffer_ = std::make_unique<Buffer>(std::move(fd));
  owned_stream_->rdbuf(buffer_.get());
}

Expected<void> OutputFile::reopen() {
  if (standard_output_) return {};
  if (buffer_) finish();
  buffer_.reset();
  owned_stream_->rdbuf(nullptr);  // writes go nowhere until a file is open again
  auto fd = open_in_place(name_, O_CREAT | O_APPEND);
  if (!fd) return Failure{fd.error()};
  stream_to(std::move(*fd));
  return {};
}

OutputFile::~OutputFile() = default;

void OutputFile::finish() {
  if (!open()) return;  // a failed reopen: its caller said so
  errno = 0;
  stream_->flush();
  int error = errno;  // standard output: why its flush failed, if it did
  if (buffer_) {
    if (!buffer_->close()) stream_->setstate(std::ios::badbit);
    error = buffer_->error();
  }
  if (!*stream_) {
    throw RuntimeError("writing " + name_ +
                       " failed: " + (error != 0 ? std::strerror(error) : std::string("an earlier write failed")));
  }
  if (replacement_) replacement_->commit(masked_by_umask(kMode));
}

void write_output(const std::string& path, const std::function<void(std::ostream&)>& render) {
  OutputFile out(path, OutputFile::Kind::Replaced);
  render(out.stream());
  out.finish();
}

}  // namespace hacoboot
