#include "hacoboot/textfile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>  // mkostemp
#include <cstring>
#include <filesystem>
#include <utility>

#include "hacoboot/errors.hpp"

namespace hacoboot {
TemporaryFile::TemporaryFile(std::string name_template) : name_(std::move(name_template)) {
  fd_.reset(::mkostemp(name_.data(), O_CLOEXEC));
  if (!fd_.valid()) name_.clear();
}

TemporaryFile::~TemporaryFile() {
  if (!name_.empty()) ::unlink(name_.c_str());
}

bool TemporaryFile::write(std::string_view data) const {
  while (!data.empty()) {
    const ssize_t written = ::write(fd_.get(), data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return false;
    data.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

bool TemporaryFile::close() {
  return ::close(fd_.release()) == 0;
}

bool TemporaryFile::rename_to(const std::string& path) {
  if (::rename(name_.c_str(), path.c_str()) != 0) return false;
  name_.clear();
  return true;
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  const std::filesystem::path target(path);
  if (!target.has_filename()) throw RuntimeError("cannot write '" + path + "': not a file name");
  const auto directory = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  TemporaryFile temporary((directory / ("." + target.filename().string() + ".XXXXXX")).string());
  if (!temporary.valid()) {
    const int error = errno;
    throw RuntimeError("cannot write " + path + ": cannot create a temporary file in " + directory.string() + ": " +
                       std::strerror(error));
  }
  const auto check = [&](bool ok, const char* step) {
    if (ok) return;
    const int error = errno;  // before anything below can change it
    throw RuntimeError("cannot write " + path + ": " + step + " " + temporary.name() + ": " + std::strerror(error));
  };
  constexpr mode_t kMode = 0644;
  check(::fchmod(temporary.fd(), kMode) == 0, "chmod");
  check(temporary.write(contents), "write");
  // On disk before the rename, so that a crash cannot leave an empty file at `path`.
  check(::fsync(temporary.fd()) == 0, "fsync");
  check(temporary.close(), "close");
  check(temporary.rename_to(path), "rename");
}

}  // namespace hacoboot
