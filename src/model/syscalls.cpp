#include "model/syscalls.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "hacoboot/contract.h"

namespace hacoboot {

static_assert(kUserTime == HACOBOOT_SYSCALL_USER);

namespace {

struct Pair {
  hacoboot_syscall_key key;
  hacoboot_syscall_totals totals;
};

SchedTotals states_of(const hacoboot_sched_totals& sched) {
  return {.cpu = sched.ns[HACOBOOT_SCHED_CPU],
          .run_queue = sched.ns[HACOBOOT_SCHED_RUN_QUEUE],
          .sleep = sched.ns[HACOBOOT_SCHED_SLEEP],
          .io = sched.ns[HACOBOOT_SCHED_IO]};
}

bool same_key(const SyscallAggregate& a, const SyscallAggregate& b) {
  return std::tie(a.tid, a.segment_ns, a.nr) == std::tie(b.tid, b.segment_ns, b.nr);
}

}  // namespace

std::optional<std::vector<SyscallAggregate>> decode_syscall_aggregates(std::span<const std::byte> bytes) {
  if (bytes.size() % sizeof(Pair) != 0) return std::nullopt;
  std::vector<SyscallAggregate> aggregates;
  aggregates.reserve(bytes.size() / sizeof(Pair));
  for (std::size_t at = 0; at < bytes.size(); at += sizeof(Pair)) {
    Pair pair{};
    std::memcpy(&pair, bytes.data() + at, sizeof pair);
    const SyscallAggregate aggregate{.tid = pair.key.tid,
                                     .segment_ns = pair.key.segment_ns,
                                     .nr = pair.key.nr,
                                     .count = pair.totals.count,
                                     .max_ns = pair.totals.max_ns,
                                     .states = states_of(pair.totals.sched)};
    if (aggregate.states.checked_total() != pair.totals.total_ns || aggregate.max_ns > pair.totals.total_ns) {
      return std::nullopt;
    }
    aggregates.push_back(aggregate);
  }
  // In a stable order whatever order the kernel's map gave them in.
  std::sort(aggregates.begin(), aggregates.end(), [](const SyscallAggregate& a, const SyscallAggregate& b) {
    return std::tie(a.tid, a.segment_ns, a.nr) < std::tie(b.tid, b.segment_ns, b.nr);
  });
  // A map's key comes once: a second one (a recording's frame repeated)
  // would count its calls twice and break "calls + user = step".
  if (std::adjacent_find(aggregates.begin(), aggregates.end(), same_key) != aggregates.end()) return std::nullopt;
  return aggregates;
}

SchedTotals StepSyscalls::in_calls() const {
  SchedTotals sum;
  for (const auto& call : calls) sum += call.states;
  return sum;
}

StepSyscalls& StepSyscalls::operator+=(const StepSyscalls& other) {
  for (const auto& call : other.calls) {
    auto same =
        std::find_if(calls.begin(), calls.end(), [&call](const SyscallTime& mine) { return mine.nr == call.nr; });
    if (same == calls.end()) {
      calls.push_back(call);
      continue;
    }
    same->count += call.count;
    same->max_ns = std::max(same->max_ns, call.max_ns);
    same->states += call.states;
  }
  user += other.user;
  for (const auto& point : other.blocking) add_blocking_point(blocking, point);
  if (other.kernel_cpu) {
    if (kernel_cpu) {
      *kernel_cpu += *other.kernel_cpu;
    } else {
      kernel_cpu = other.kernel_cpu;
    }
  }
  sort_by_time(calls);
  return *this;
}

void sort_by_time(std::vector<SyscallTime>& calls) {
  std::sort(calls.begin(), calls.end(), [](const SyscallTime& a, const SyscallTime& b) {
    if (a.states.total() != b.states.total()) return a.states.total() > b.states.total();
    return a.nr < b.nr;
  });
}

StepSyscalls syscalls_between(const std::vector<SyscallAggregate>& aggregates, std::uint32_t tid,
                              std::uint64_t begin_ns, std::uint64_t end_ns) {
  StepSyscalls step;
  std::map<std::uint32_t, SyscallTime> by_number;
  for (const auto& aggregate : aggregates) {
    if (aggregate.tid != tid || aggregate.segment_ns < begin_ns || aggregate.segment_ns >= end_ns) continue;
    if (aggregate.nr == kUserTime) {
      step.user += aggregate.states;
      continue;
    }
    auto& call = by_number[aggregate.nr];
    call.nr = aggregate.nr;
    call.count += aggregate.count;
    call.max_ns = std::max(call.max_ns, aggregate.max_ns);
    call.states += aggregate.states;
  }
  for (const auto& [nr, call] : by_number) step.calls.push_back(call);
  sort_by_time(step.calls);
  return step;
}

}  // namespace hacoboot
