// Ground-truth recording shared by hacoboot-launcher and hacoboot-demo-app.
//
// Each fact is one line "<hpid>\t<key>\t<value>\n", emitted with a single
// write() on an O_APPEND descriptor: the kernel then places every line
// atomically at the end of the file, so the many processes of parallel boots
// can share one file without locking and without interleaving.
#pragma once

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <utility>

namespace hacoboot {

// CLOCK_MONOTONIC is what bpf_ktime_get_ns() reads, so tracer timestamps and
// these values are directly comparable.
inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

class TruthFile {
 public:
  TruthFile() = default;  // disabled: record() does nothing
  explicit TruthFile(const char* path) : fd_(::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {}
  ~TruthFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  TruthFile(TruthFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  TruthFile& operator=(TruthFile&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  TruthFile(const TruthFile&) = delete;
  TruthFile& operator=(const TruthFile&) = delete;

  bool is_open() const { return fd_ >= 0; }

  // Best effort: no allocation and one syscall, so it is fine between fork
  // and exec. A lost line shows up as a missing key in the tests, which is
  // more useful than aborting a boot over it.
  void record(long hpid, const char* key, long long value) const {
    if (fd_ < 0) return;
    char line[128];
    const int n = std::snprintf(line, sizeof line, "%ld\t%s\t%lld\n", hpid, key, value);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof line) {
      [[maybe_unused]] const ssize_t ignored = ::write(fd_, line, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace hacoboot
