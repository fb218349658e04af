// hacoboot-bench-capacity: how many events per second the BPF side of
// hacoboot-sampler delivers, and whether every event is accounted for.
//
//   hacoboot-bench-capacity MARKER PRODUCERS HITS [usdt|listen]
//
// Loads the tool's own BPF object through its Tracer (same ring buffer size,
// same poll interval and syscall hooks as the tool's session), attaches the
// USDT probe to MARKER (hacoboot-bench-marker), runs PRODUCERS producers at
// once and counts every record that reaches user space.
//
// usdt (default): `MARKER hits HITS`, HITS phase events and one exit event
// (it passes phases 1 and 2 under its own pid, so the kernel side tracks it
// as a launcher): produced = PRODUCERS * (HITS + 1).
// listen: `MARKER listens HITS`, a launch (2 phases, a fork, 2 exits) whose
// container calls listen(2) HITS times: produced = PRODUCERS * (HITS + 5).
// Either way produced must equal received + lost (counted in BPF).
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
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "capture/core_btf_cache.hpp"
#include "capture/preload_checks.hpp"
#include "capture/tracer.hpp"
#include "cli/session.hpp"
#include "hacoboot/contract.h"

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
  std::uint64_t listens = 0;
  std::uint64_t exits = 0;
  std::uint64_t first_ts = 0;
  std::uint64_t last_ts = 0;
};

double children_cpu_s() {
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  return static_cast<double>(children.ru_utime.tv_sec + children.ru_stime.tv_sec) +
         static_cast<double>(children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e6;
}

struct ProducerRun {
  double seconds = 0;  // from the first spawn to the last exit
  double cpu_s = 0;    // the producers' CPU time: traps, syscalls and BPF programs run in them
};

// Runs `producers` copies of MARKER ARGS at once, calling `poll` until all
// have exited. Throws when one cannot be started or fails.
ProducerRun run_producers(const std::string& marker, long producers, const std::vector<std::string>& args,
                          const std::function<void()>& poll) {
  std::vector<char*> argv{const_cast<char*>(marker.c_str())};
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const double cpu_before = children_cpu_s();
  std::vector<pid_t> running;
  const auto begin = monotonic_ns();
  for (long i = 0; i < producers; ++i) {
    pid_t pid = 0;
    if (const int err = posix_spawn(&pid, marker.c_str(), &quiet, nullptr, argv.data(), environ); err != 0) {
      throw std::runtime_error("spawning " + marker + ": " + std::strerror(err));
    }
    running.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&quiet);
  std::int64_t end = begin;
  bool failed = false;
  while (!running.empty()) {
    poll();
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      if (waitpid(*it, &status, WNOHANG) == *it) {
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    end = monotonic_ns();
  }
  if (failed) throw std::runtime_error("a producer failed");
  return {static_cast<double>(end - begin) / 1e9, children_cpu_s() - cpu_before};
}

int run(const std::string& marker, long producers, long hits, bool listen) {
  const std::vector<std::string> args{listen ? "listens" : "hits", std::to_string(hits)};
  // Untraced first: what the producers cost by themselves.
  const auto untraced =
      run_producers(marker, producers, args, [] { std::this_thread::sleep_for(hacoboot::kPollInterval); });

  Received got;
  hacoboot::SyscallTracepointLookup lookup(hacoboot::kDefaultBtfCacheDir);
  hacoboot::Tracer tracer({.haconiwa_path = marker,
                           .syscall_tracepoints = &lookup,
                           .phase_probe_sites = hacoboot::require_phase_probe(marker)},
                          [&](std::span<const std::byte> record) {
                            hacoboot_event raw{};
                            std::memcpy(&raw, record.data(), std::min(record.size(), sizeof raw));
                            ++got.records;
                            if (raw.kind == HACOBOOT_EV_PHASE) ++got.phases;
                            if (raw.kind == HACOBOOT_EV_LISTEN) ++got.listens;
                            if (raw.kind == HACOBOOT_EV_EXIT) ++got.exits;
                            if (got.first_ts == 0 || raw.ts_ns < got.first_ts) got.first_ts = raw.ts_ns;
                            if (raw.ts_ns > got.last_ts) got.last_ts = raw.ts_ns;
                          });
  // The tool's session loop: poll until the producers are done.
  const auto traced = run_producers(marker, producers, args, [&] { tracer.poll(hacoboot::kPollInterval); });
  tracer.poll(std::chrono::milliseconds(0));

  const auto lost = tracer.counters().lost_events;
  const auto produced = static_cast<std::uint64_t>(producers) * static_cast<std::uint64_t>(hits + (listen ? 5 : 1));
  const double seconds = traced.seconds;
  const double span = got.last_ts > got.first_ts ? static_cast<double>(got.last_ts - got.first_ts) / 1e9 : seconds;
  const double producer_cpu = traced.cpu_s;
  // What tracing added to the producers, per event received: the kernel
  // side's own cost (hook, program, ring buffer), whatever the producer.
  const double tool_ns_per_event =
      got.records > 0 ? (traced.cpu_s - untraced.cpu_s) * 1e9 / static_cast<double>(got.records) : 0.0;
  std::printf(
      "producers=%ld produced=%llu received=%llu lost=%llu phases=%llu listens=%llu exits=%llu balanced=%d "
      "seconds=%.3f "
      "events_per_s=%.0f events_per_s_in_span=%.0f producer_cpu_s=%.3f events_per_producer_cpu_s=%.0f "
      "untraced_producer_cpu_s=%.3f tool_ns_per_event=%.1f\n",
      producers, static_cast<unsigned long long>(produced), static_cast<unsigned long long>(got.records),
      static_cast<unsigned long long>(lost), static_cast<unsigned long long>(got.phases),
      static_cast<unsigned long long>(got.listens), static_cast<unsigned long long>(got.exits),
      got.records + lost == produced ? 1 : 0, seconds, static_cast<double>(got.records) / seconds,
      static_cast<double>(got.records) / span, producer_cpu,
      producer_cpu > 0 ? static_cast<double>(got.records) / producer_cpu : 0.0, untraced.cpu_s, tool_ns_per_event);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 5 ? argv[4] : "usdt";
  if ((argc != 4 && argc != 5) || (mode != "usdt" && mode != "listen")) {
    std::fputs("usage: hacoboot-bench-capacity MARKER PRODUCERS HITS [usdt|listen]\n", stderr);
    return 2;
  }
  try {
    return run(argv[1], parse_positive(argv[2]), parse_positive(argv[3]), mode == "listen");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hacoboot-bench-capacity: %s\n", e.what());
    return 1;
  }
}
