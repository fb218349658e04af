// User-side throughput of hacoboot-sampler's pipeline, on synthetic ring
// buffer records shaped like real Haconiwa launches:
//
//   record bytes -> Pipeline: decode_event -> BootTracker -> Summary (-> BootRowWriter)
//
// Each boot is the 25 records the kernel side emits for one launch: CLI phase
// 0 and its fork of the supervisor, supervisor phases 1-2, the container fork,
// container phases 11-21, the execve (a full-size record with the filename),
// supervisor phases 3-4, the listen, the container's exit, phases 5-6 and the
// supervisor's and CLI's exits. `inflight` boots are interleaved record by
// record, as concurrent launches are. items_per_second is events per second.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hacoboot/contract.h"
#include "model/event.hpp"
#include "pipeline/pipeline.hpp"

namespace {

constexpr const char* kCommand = "/usr/local/bin/rails-app";
constexpr std::uint64_t kCgroupId = 4242;

using Record = std::vector<std::byte>;

struct Builder {
  std::uint64_t ts_ns = 1'000'000'000;

  Record make(unsigned kind, unsigned pid, unsigned hpid, unsigned role, long long arg,
              const char* filename = nullptr) {
    hacoboot_event raw{};
    raw.ts_ns = ts_ns;
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
};

// The records of one launch, in the order the kernel emits them.
std::vector<Record> one_boot(Builder& b, unsigned cli, unsigned supervisor, unsigned container) {
  std::vector<Record> r;
  r.push_back(b.make(HACOBOOT_EV_PHASE, cli, cli, 0, 0));
  r.push_back(b.make(HACOBOOT_EV_FORK, cli, cli, 0, supervisor));
  r.push_back(b.make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 1));
  r.push_back(b.make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 2));
  r.push_back(b.make(HACOBOOT_EV_FORK, supervisor, supervisor, HACOBOOT_ROLE_CONTAINER, container));
  for (long phase = 11; phase <= 21; ++phase) r.push_back(b.make(HACOBOOT_EV_PHASE, container, supervisor, 0, phase));
  r.push_back(b.make(HACOBOOT_EV_EXEC, container, supervisor, HACOBOOT_ROLE_CONTAINER, 0, kCommand));
  r.push_back(b.make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 3));
  r.push_back(b.make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 4));
  r.push_back(b.make(HACOBOOT_EV_LISTEN, container, supervisor, HACOBOOT_ROLE_CONTAINER, 0));
  r.push_back(b.make(HACOBOOT_EV_EXIT, container, supervisor, HACOBOOT_ROLE_CONTAINER, 0));
  r.push_back(b.make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 5));
  r.push_back(b.make(HACOBOOT_EV_PHASE, supervisor, supervisor, 0, 6));
  r.push_back(b.make(HACOBOOT_EV_EXIT, supervisor, supervisor, HACOBOOT_ROLE_LAUNCHER, 0));
  r.push_back(b.make(HACOBOOT_EV_EXIT, cli, cli, HACOBOOT_ROLE_LAUNCHER, 0));
  return r;
}

constexpr std::size_t kBootsPerBatch = 1024;

// kBootsPerBatch boots, `inflight` at a time, their records interleaved.
// Timestamps advance ~100 us per record, so boots last a few ms.
std::vector<Record> make_batch(std::size_t inflight) {
  Builder b;
  std::vector<Record> out;
  for (std::size_t group = 0; group < kBootsPerBatch; group += inflight) {
    std::vector<std::vector<Record>> boots;
    for (std::size_t i = 0; i < inflight && group + i < kBootsPerBatch; ++i) {
      const auto base = static_cast<unsigned>(10'000 + 3 * (group + i));
      boots.push_back(one_boot(b, base, base + 1, base + 2));
    }
    for (std::size_t step = 0; step < boots.front().size(); ++step) {
      for (auto& boot : boots) {
        auto record = std::move(boot[step]);
        b.ts_ns += 97'000 + (b.ts_ns % 7) * 1'000;
        std::memcpy(record.data(), &b.ts_ns, sizeof b.ts_ns);
        out.push_back(std::move(record));
      }
    }
  }
  return out;
}

std::span<const std::byte> bytes(const Record& r) {
  return {r.data(), r.size()};
}

void BM_Decode(benchmark::State& state) {
  const auto batch = make_batch(1);
  for (auto _ : state) {
    for (const auto& record : batch) benchmark::DoNotOptimize(hacoboot::decode_event(bytes(record)));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
}
BENCHMARK(BM_Decode);

// The tool's pipeline, optionally writing --events rows to /dev/null; the
// cgroup paths from a table, as a replay has them.
void run_pipeline(benchmark::State& state, bool rows) {
  const auto batch = make_batch(static_cast<std::size_t>(state.range(0)));
  hacoboot::Pipeline pipeline({.command = kCommand, .sinks = {.events = rows ? "/dev/null" : ""}},
                              [](std::uint64_t) { return std::string("/haconiwa/app"); });
  pipeline.sinks().open_rows();
  for (auto _ : state) {
    for (const auto& record : batch) pipeline.on_record(bytes(record));
  }
  pipeline.finish();
  (void)pipeline.sinks().finish_rows();
  const auto& summary = pipeline.sinks().summary();
  const auto boots = static_cast<std::uint64_t>(state.iterations()) * kBootsPerBatch;
  if (pipeline.undecodable() != 0 || summary.boots().listen != boots || summary.execve().count() != boots) {
    state.SkipWithError("synthetic boots were not all reassembled: the generator is out of step with BootTracker");
    return;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
  state.counters["boots_per_s"] = benchmark::Counter(static_cast<double>(boots), benchmark::Counter::kIsRate);
}

void BM_Pipeline(benchmark::State& state) {
  run_pipeline(state, false);
}
BENCHMARK(BM_Pipeline)->Arg(1)->Arg(64)->ArgName("inflight");

void BM_PipelineWithRows(benchmark::State& state) {
  run_pipeline(state, true);
}
BENCHMARK(BM_PipelineWithRows)->Arg(1)->ArgName("inflight");

}  // namespace

BENCHMARK_MAIN();
