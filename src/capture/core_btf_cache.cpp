#include "capture/core_btf_cache.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "capture/btf_cache_key.hpp"
#include "capture/preload_checks.hpp"
#include "util/c_strings.hpp"
#include "util/file_trust.hpp"
#include "util/subprocess.hpp"

namespace hacoboot {
namespace {

constexpr const char* kKernelNotes = "/sys/kernel/notes";
// Where Debian and others install bpftool. Never PATH: the tool runs it as
// root, and a PATH entry (the current directory, a user's bin) is anyone's.
constexpr std::array<const char*, 3> kBpftoolPlaces = {"/usr/sbin/bpftool", "/usr/bin/bpftool", "/sbin/bpftool"};
// All bpftool is given of the environment.
constexpr std::array<const char*, 2> kBpftoolEnvironment = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", nullptr};

std::optional<std::string> running_kernel_build_id() {
  std::ifstream in(kKernelNotes, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return gnu_build_id(std::as_bytes(std::span(bytes)));
}

// bpftool at the first of its places where it is trusted, opened: what is
// checked is what runs (through /proc/self/fd/N).
Expected<std::pair<std::string, UniqueFd>> open_bpftool() {
  std::string why = "bpftool not found in";
  for (const char* place : kBpftoolPlaces) {
    if (::access(place, F_OK) != 0) {
      why += std::string(" ") + place;
      continue;
    }
    auto fd = open_trusted_file(place, TrustedOwners::kEffectiveUserOrRoot);
    if (!fd) return Failure{"not running bpftool: " + fd.error()};
    return std::pair{std::string(place), std::move(*fd)};
  }
  return Failure{why};
}

// bpftool's arguments for an extract of the types `object` uses, to `extract`.
std::vector<std::string> min_core_btf_command(const std::string& bpftool, const TemporaryFile& extract,
                                              const TemporaryFile& object) {
  return {bpftool, "gen", "min_core_btf", kKernelBtf, extract.name(), object.name()};
}

// In bpftool's child, before its exec: in its own group (a Ctrl-C at the
// terminal is for the tool, which decides), at low priority, silent.
bool prepare_filler() {
  ::setpgid(0, 0);
  (void)::setpriority(PRIO_PROCESS, 0, 19);
  const int null = ::open("/dev/null", O_RDWR);
  if (null < 0) return true;  // no /dev/null: bpftool shares the tool's stdio
  for (const int fd : {0, 1, 2}) ::dup2(null, fd);
  return true;
}

}  // namespace

CoreBtfCache::CoreBtfCache(std::filesystem::path directory, std::span<const std::byte> bpf_object)
    : directory_(std::move(directory)), bpf_object_(bpf_object) {
  if (const auto build_id = running_kernel_build_id()) file_ = directory_ / btf_cache_file_name(*build_id, bpf_object);
}

CoreBtfCache::~CoreBtfCache() {
  finish_filling(std::chrono::milliseconds(0));
}

std::optional<std::filesystem::path> CoreBtfCache::cached() const {
  if (!file_ || !owned_by_us_alone(directory_, S_IFDIR) || !owned_by_us_alone(*file_, S_IFREG)) return std::nullopt;
  return file_;
}

void CoreBtfCache::discard() const {
  if (file_) ::unlink(file_->c_str());
}

Expected<std::string> trusted_bpftool() {
  auto bpftool = open_bpftool();
  if (!bpftool) return Failure{bpftool.error()};
  return bpftool->first;
}

Expected<std::filesystem::path> CoreBtfCache::start_filling() {
  if (!file_) return Failure{"the kernel has no build id in " + std::string(kKernelNotes) + ": no BTF cache"};
  if (filler_) return Failure{"already filling the BTF cache"};
  auto bpftool = open_bpftool();
  if (!bpftool) {
    return Failure{bpftool.error() + ": every start reads the whole kernel BTF (install bpftool to cache it)"};
  }
  const auto& [place, fd] = *bpftool;
  auto args = write_object_copy(place);
  if (!args) {
    drop_temporaries();
    return Failure{args.error()};
  }
  const auto argv = c_string_array(*args);
  const auto checked = "/proc/self/fd/" + std::to_string(fd.get());
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): execve takes char* const[] it does not write to
  auto* const* envp = const_cast<char* const*>(kBpftoolEnvironment.data());
  auto filler =
      Subprocess::exec({.path = checked.c_str(), .argv = argv.data(), .envp = envp, .prepare = prepare_filler});
  if (!filler) {
    drop_temporaries();
    return Failure{"cannot run " + place + ": " + filler.error()};
  }
  filler_ = std::move(*filler);
  return std::filesystem::path(place);
}

Expected<std::vector<std::string>> CoreBtfCache::write_object_copy(const std::string& bpftool) {
  if (::mkdir(directory_.c_str(), 0700) != 0 && errno != EEXIST) {
    return Failure{"cannot create " + directory_.string() + ": " + std::strerror(errno)};
  }
  if (!owned_by_us_alone(directory_, S_IFDIR)) {
    return Failure{directory_.string() + " is not a directory only this user can write to: not caching BTF there"};
  }
  auto& object_copy = object_copy_.emplace((directory_ / ".object-XXXXXX").string());
  const auto& extract = extract_.emplace((directory_ / ".btf-XXXXXX").string());
  if (!object_copy.valid() || !extract.valid()) {
    return Failure{"cannot write to " + directory_.string() + ": " + std::strerror(errno)};
  }
  const std::string_view object(reinterpret_cast<const char*>(bpf_object_.data()), bpf_object_.size());
  auto written = object_copy.write(object);
  if (written) written = object_copy.close();
  if (!written) return Failure{"cannot write to " + directory_.string() + ": " + written.error()};
  return min_core_btf_command(bpftool, extract, object_copy);
}

void CoreBtfCache::finish_filling(std::chrono::milliseconds patience) {
  if (!filler_) return;
  const auto status = filler_->wait_for(patience);
  filler_.reset();
  if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) install_extract();
  drop_temporaries();
}

void CoreBtfCache::install_extract() {
  if (!extract_ || !file_) return;  // set whenever filling started: checked for the analyzer
  ::fchmod(extract_->fd(), 0644);
  // Extracts for the other kernels stay: one may be booted again.
  const auto name = file_->filename().string();
  if (extract_->rename_to(file_->string())) {
    remove_superseded(directory_, name.substr(0, name.find('-') + 1), ".btf", *file_);
  }
}

void CoreBtfCache::drop_temporaries() {
  object_copy_.reset();
  extract_.reset();
}

}  // namespace hacoboot
