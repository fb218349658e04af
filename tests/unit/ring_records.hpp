#pragma once
// Ring-buffer records as the BPF program writes them
// (include/hacoboot/contract.h), of whole launches: what the pipeline and a
// recording take.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hacoboot/contract.h"

namespace hacoboot::test {

inline constexpr const char* kCommand = "/bin/app";
inline constexpr std::uint64_t kCgroupId = 4242;

using Record = std::vector<std::byte>;

// Ring-buffer records of whole launches, 1 ms apart, each with its own pids.
class Records {
 public:
  Record make(unsigned kind, unsigned pid, unsigned hpid, unsigned role, std::int64_t arg,
              const char* filename = nullptr) {
    hacoboot_event raw{};
    ts_ns_ += 1'000'000;
    raw.ts_ns = ts_ns_;
    raw.cgroup_id = kCgroupId;
    raw.arg = arg;
    raw.kind = kind;
    raw.pid = pid;
    raw.hpid = hpid;
    raw.role = role;
    const std::size_t size = filename != nullptr ? sizeof raw : HACOBOOT_EVENT_BASE_SIZE;
    if (filename != nullptr) std::strncpy(raw.filename, filename, sizeof raw.filename - 1);
    Record out(size);
    std::memcpy(out.data(), &raw, size);
    return out;
  }

  // The CLI passes 0 and forks the supervisor, which passes 1 and 2 and forks
  // the container; the container execs and listens (the boot settles); with
  // `ended`, the container and the supervisor exit (the boot is done).
  std::vector<Record> launch(bool ended = true) {
    const unsigned cli = next_pid_;
    const unsigned supervisor = cli + 1;
    const unsigned container = cli + 2;
    next_pid_ += 3;
    std::vector<Record> r;
    r.push_back(make(HACOBOOT_EV_PHASE, cli, cli, 0, 0));
    r.push_back(make(HACOBOOT_EV_FORK, cli, cli, 0, supervisor));
    r.push_back(make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 1));
    r.push_back(make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 2));
    r.push_back(make(HACOBOOT_EV_FORK, supervisor, supervisor, HACOBOOT_ROLE_CONTAINER, container));
    r.push_back(make(HACOBOOT_EV_EXEC, container, supervisor, HACOBOOT_ROLE_CONTAINER, 0, kCommand));
    r.push_back(make(HACOBOOT_EV_LISTEN, container, supervisor, HACOBOOT_ROLE_CONTAINER, 0));
    if (!ended) return r;
    r.push_back(make(HACOBOOT_EV_EXIT, container, supervisor, HACOBOOT_ROLE_CONTAINER, 0));
    r.push_back(make(HACOBOOT_EV_EXIT, supervisor, supervisor, HACOBOOT_ROLE_LAUNCHER, 0));
    r.push_back(make(HACOBOOT_EV_EXIT, cli, cli, HACOBOOT_ROLE_LAUNCHER, 0));
    return r;
  }

 private:
  std::uint64_t ts_ns_ = 1'000'000'000;
  unsigned next_pid_ = 1000;
};

}  // namespace hacoboot::test
