#include "capture/core_btf_cache.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <thread>
#include <vector>

#include "capture/btf_cache_key.hpp"
#include "util/c_strings.hpp"
#include "util/file_trust.hpp"

namespace hacoboot {
namespace {

constexpr const char* kKernelNotes = "/sys/kernel/notes";
constexpr const char* kKernelBtf = "/sys/kernel/btf/vmlinux";
constexpr auto kWaitStep = std::chrono::milliseconds(5);

std::optional<std::string> running_kernel_build_id() {
  std::ifstream in(kKernelNotes, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return gnu_build_id(std::as_bytes(std::span(bytes)));
}

std::optional<std::filesystem::path> find_bpftool() {
  std::vector<std::filesystem::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string list = path;
    for (std::size_t start = 0, end = 0; start <= list.size(); start = end + 1) {
      end = std::min(list.find(':', start), list.size());
      if (end > start) dirs.emplace_back(list.substr(start, end - start));
    }
  }
  // root's usual sbin directories, missing from many users' PATH under sudo -E
  dirs.emplace_back("/usr/sbin");
  dirs.emplace_back("/sbin");
  for (const auto& dir : dirs) {
    if (::access((dir / "bpftool").c_str(), X_OK) == 0) return dir / "bpftool";
  }
  return std::nullopt;
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

std::string CoreBtfCache::start_filling() {
  if (!file_) return "the kernel has no build id in " + std::string(kKernelNotes) + ": no BTF cache";
  if (filler_ > 0) return "already filling the BTF cache";
  const auto bpftool = find_bpftool();
  if (!bpftool) return "bpftool not found: every start reads the whole kernel BTF (install bpftool to cache it)";
  if (::mkdir(directory_.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot create " + directory_.string() + ": " + std::strerror(errno);
  }
  if (!owned_by_us_alone(directory_, S_IFDIR)) {
    return directory_.string() + " is not a directory only this user can write to: not caching BTF there";
  }
  object_copy_.emplace((directory_ / ".object-XXXXXX").string());
  extract_.emplace((directory_ / ".btf-XXXXXX").string());
  const std::string_view object(reinterpret_cast<const char*>(bpf_object_.data()), bpf_object_.size());
  if (!object_copy_->valid() || !extract_->valid() || !object_copy_->write(object) || !object_copy_->close()) {
    const std::string why = std::strerror(errno);
    drop_temporaries();
    return "cannot write to " + directory_.string() + ": " + why;
  }
  std::vector<std::string> args{bpftool->string(),   "gen", "min_core_btf", kKernelBtf, extract_->name(),
                                object_copy_->name()};
  const auto argv = c_string_array(args);
  filler_ = ::fork();
  if (filler_ < 0) {
    const std::string why = std::strerror(errno);
    drop_temporaries();
    return "cannot fork bpftool: " + why;
  }
  if (filler_ == 0) {
    // Its own group: a Ctrl-C at the terminal is for the tool, which decides.
    ::setpgid(0, 0);
    (void)::setpriority(PRIO_PROCESS, 0, 19);
    const int null = ::open("/dev/null", O_RDWR);
    for (const int fd : {0, 1, 2}) ::dup2(null, fd);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return "filling the BTF cache with " + args[0] + " for the next runs";
}

void CoreBtfCache::finish_filling(std::chrono::milliseconds patience) {
  if (filler_ <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + patience;
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(filler_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kWaitStep);
  }
  if (done == 0) {
    ::kill(filler_, SIGKILL);
    while (::waitpid(filler_, &status, 0) < 0 && errno == EINTR) {
    }
  } else if (done == filler_ && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    ::fchmod(extract_->fd(), 0644);
    // Extracts for the other kernels stay: one may be booted again.
    const auto name = file_->filename().string();
    if (extract_->rename_to(file_->string())) {
      remove_superseded(directory_, name.substr(0, name.find('-') + 1), ".btf", *file_);
    }
  }
  filler_ = -1;
  drop_temporaries();
}

void CoreBtfCache::drop_temporaries() {
  object_copy_.reset();
  extract_.reset();
}

}  // namespace hacoboot
