#include "capture/haconiwa_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "capture/preload_checks.hpp"
#include "capture/usdt_notes.hpp"
#include "util/errors.hpp"
#include "util/file_trust.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

Failure refusal(const std::string& name, const std::string& why) {
  return Failure{"refusing to attach to " + printable(name) + ": " + why +
                 " (the probe writes breakpoints into every process that runs it: only a binary that nobody but "
                 "root or this user can change, in directories of the same kind, is traced)"};
}

Expected<FileVersion> version_of(int fd, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Failure{printable(name) + ": " + std::strerror(errno)};
  if (const auto trusted = check_trust(st, S_IFREG, TrustedOwners::kEffectiveUserOrRoot); !trusted) {
    return refusal(name, trusted.error());
  }
  return file_version_of(st);
}

}  // namespace

HaconiwaFile::HaconiwaFile(UniqueFd fd, std::string name) : fd_(std::move(fd)), name_(std::move(name)) {}

Expected<HaconiwaFile> HaconiwaFile::read(UniqueFd fd, std::string name) {
  HaconiwaFile file(std::move(fd), std::move(name));
  if (const auto read = file.read_again(); !read) return Failure{read.error()};
  return file;
}

Expected<HaconiwaFile> HaconiwaFile::open_path(const std::string& path) {
  auto fd = open_trusted_file(path, TrustedOwners::kEffectiveUserOrRoot);
  if (!fd) return refusal(path, fd.error());
  return read(std::move(*fd), path);
}

Expected<HaconiwaFile> HaconiwaFile::open_process_exe(std::uint32_t pid) {
  const auto exe = "/proc/" + std::to_string(pid) + "/exe";
  UniqueFd fd(::open(exe.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return Failure{"--pid " + std::to_string(pid) + ": cannot read " + exe + ": " + std::strerror(errno)};
  return read(std::move(fd), exe);
}

std::string HaconiwaFile::attach_path() const {
  return "/proc/self/fd/" + std::to_string(fd_.get());
}

bool HaconiwaFile::changed() const {
  struct stat st {};
  return ::fstat(fd_.get(), &st) != 0 || file_version_of(st) != version_;
}

Expected<void> HaconiwaFile::still_trusted() const {
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) return Failure{std::strerror(errno)};
  return check_trust(st, S_IFREG, TrustedOwners::kEffectiveUserOrRoot);
}

Expected<void> HaconiwaFile::read_again() {
  auto version = version_of(fd_.get(), name_);
  if (!version) return Failure{version.error()};
  // This version was read, whatever its notes hold: changed() is about
  // writes after it.
  version_ = *version;
  auto probes = read_usdt_probes(fd_.get(), name_);
  if (!probes) return Failure{probes.error()};
  auto sites = phase_probe_sites(std::move(*probes), name_);
  if (!sites) return Failure{sites.error()};
  phase_sites_ = std::move(*sites);
  return {};
}

}  // namespace hacoboot
