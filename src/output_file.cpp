#include "hacoboot/output_file.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <utility>

#include "hacoboot/errors.hpp"

namespace hacoboot {

OutputFile::OutputFile(std::string path) : name_(std::move(path)) {
  if (name_.empty() || name_ == "-") {
    name_ = "standard output";
    stream_ = &std::cout;
    return;
  }
  owned_stream_ = std::make_unique<std::ostream>(nullptr);
  stream_ = owned_stream_.get();
  open(O_TRUNC);
}

void OutputFile::open(int flags) {
  constexpr mode_t kMode = 0644;
  const int fd = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, kMode);
  if (fd < 0) {
    const int error = errno;
    const std::string why =
        error == ELOOP ? "it is a symbolic link (refused: it could point anywhere)" : std::strerror(error);
    throw UsageError("cannot write " + name_ + ": " + why);
  }
  // The filebuf owns and closes the fd.
  buffer_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd, std::ios::out);
  owned_stream_->rdbuf(buffer_.get());
}

void OutputFile::reopen() {
  if (!buffer_) return;
  finish();
  open(O_APPEND);
}

OutputFile::~OutputFile() = default;

void OutputFile::finish() {
  stream_->flush();
  if (buffer_ && buffer_->close() == nullptr) stream_->setstate(std::ios::badbit);
  if (!*stream_) throw RuntimeError("writing " + name_ + " failed: " + std::strerror(errno));
}

}  // namespace hacoboot
