#include "capture/core_btf_cache.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "capture/btf_cache_key.hpp"
#include "capture/system_checks.hpp"
#include "util/c_strings.hpp"
#include "util/file_trust.hpp"
#include "util/subprocess.hpp"

namespace hacoboot {
namespace {

constexpr const char* kKernelNotes = "/sys/kernel/notes";

std::optional<std::string> running_kernel_build_id() {
  std::ifstream in(kKernelNotes, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return gnu_build_id(std::as_bytes(std::span(bytes)));
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

Expected<std::filesystem::path> CoreBtfCache::start_filling() {
  if (!file_) return Failure{"the kernel has no build id in " + std::string(kKernelNotes) + ": no BTF cache"};
  if (filler_) return Failure{"already filling the BTF cache"};
  // root's usual sbin directories, missing from many users' PATH under sudo -E
  const auto bpftool = find_executable("bpftool", {"/usr/sbin", "/sbin"});
  if (!bpftool) {
    return Failure{"bpftool not found: every start reads the whole kernel BTF (install bpftool to cache it)"};
  }
  auto args = write_object_copy(*bpftool);
  if (!args) {
    drop_temporaries();
    return Failure{args.error()};
  }
  const auto argv = c_string_array(*args);
  auto filler = Subprocess::exec({.path = argv[0], .argv = argv.data(), .envp = environ, .prepare = prepare_filler});
  if (!filler) {
    drop_temporaries();
    return Failure{"cannot run " + *bpftool + ": " + filler.error()};
  }
  filler_ = std::move(*filler);
  return std::filesystem::path(*bpftool);
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
