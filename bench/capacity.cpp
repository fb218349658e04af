// hacoboot-bench-capacity: how many events per second the BPF side of
// hacoboot-sampler delivers, and whether every event is accounted for.
//
//   hacoboot-bench-capacity MARKER PRODUCERS HITS
//
// Loads the tool's own BPF object through its Tracer (same ring buffer size,
// same poll interval as the tool's session), attaches the USDT probe to MARKER
// (hacoboot-bench-marker), runs PRODUCERS copies of `MARKER hits HITS` at
// once and counts every record that reaches user space. Each producer emits
// HITS phase events and one exit event (it passes phases 1 and 2 under its
// own pid, so the kernel side tracks it as a launcher), hence
//
//   produced = PRODUCERS * (HITS + 1)  ==  received + lost  (counted in BPF)
//
// Prints one line of key=value pairs.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "hacoboot/hacoboot.h"
#include "hacoboot/session.hpp"
#include "hacoboot/tracer.hpp"

extern char** environ;

#include "bench_util.hpp"

namespace {

using hacoboot::bench::monotonic_ns;

long parse_positive(const char* text) {
  return hacoboot::bench::parse_positive(text, "hacoboot-bench-capacity");
}

struct Received {
  std::uint64_t records = 0;
  std::uint64_t phases = 0;
  std::uint64_t exits = 0;
  std::uint64_t first_ts = 0;
  std::uint64_t last_ts = 0;
};

int run(const std::string& marker, long producers, long hits) {
  Received got;
  hacoboot::Tracer tracer({.haconiwa_path = marker}, [&](std::span<const std::byte> record) {
    hacoboot_event raw{};
    std::memcpy(&raw, record.data(), std::min(record.size(), sizeof raw));
    ++got.records;
    if (raw.kind == HACOBOOT_EV_PHASE) ++got.phases;
    if (raw.kind == HACOBOOT_EV_EXIT) ++got.exits;
    if (got.first_ts == 0 || raw.ts_ns < got.first_ts) got.first_ts = raw.ts_ns;
    if (raw.ts_ns > got.last_ts) got.last_ts = raw.ts_ns;
  });

  const std::string hits_text = std::to_string(hits);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<pid_t> running;
  const auto begin = monotonic_ns();
  for (long i = 0; i < producers; ++i) {
    char* argv[] = {const_cast<char*>(marker.c_str()), const_cast<char*>("hits"), const_cast<char*>(hits_text.c_str()),
                    nullptr};
    pid_t pid = 0;
    if (const int err = posix_spawn(&pid, marker.c_str(), &quiet, nullptr, argv, environ); err != 0) {
      std::fprintf(stderr, "hacoboot-bench-capacity: spawning %s: %s\n", marker.c_str(), std::strerror(err));
      return 1;
    }
    running.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&quiet);

  // The tool's session loop: poll until the producers are done.
  std::int64_t end = 0;
  while (!running.empty()) {
    tracer.poll(hacoboot::kPollInterval);
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      if (waitpid(*it, &status, WNOHANG) == *it) {
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    if (running.empty()) end = monotonic_ns();
  }
  tracer.poll(std::chrono::milliseconds(0));

  const auto lost = tracer.counters().lost_events;
  const auto produced = static_cast<std::uint64_t>(producers) * static_cast<std::uint64_t>(hits + 1);
  const double seconds = static_cast<double>(end - begin) / 1e9;
  const double span = got.last_ts > got.first_ts ? static_cast<double>(got.last_ts - got.first_ts) / 1e9 : seconds;
  // The producers' CPU time: the uprobe traps and BPF programs run in them.
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  const double producer_cpu = static_cast<double>(children.ru_utime.tv_sec + children.ru_stime.tv_sec) +
                              static_cast<double>(children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e6;
  std::printf(
      "producers=%ld produced=%llu received=%llu lost=%llu phases=%llu exits=%llu balanced=%d seconds=%.3f "
      "events_per_s=%.0f events_per_s_in_span=%.0f producer_cpu_s=%.3f events_per_producer_cpu_s=%.0f\n",
      producers, static_cast<unsigned long long>(produced), static_cast<unsigned long long>(got.records),
      static_cast<unsigned long long>(lost), static_cast<unsigned long long>(got.phases),
      static_cast<unsigned long long>(got.exits), got.records + lost == produced ? 1 : 0, seconds,
      static_cast<double>(got.records) / seconds, static_cast<double>(got.records) / span, producer_cpu,
      producer_cpu > 0 ? static_cast<double>(got.records) / producer_cpu : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fputs("usage: hacoboot-bench-capacity MARKER PRODUCERS HITS\n", stderr);
    return 2;
  }
  try {
    return run(argv[1], parse_positive(argv[2]), parse_positive(argv[3]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hacoboot-bench-capacity: %s\n", e.what());
    return 1;
  }
}
