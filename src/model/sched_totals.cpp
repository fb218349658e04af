#include "model/sched_totals.hpp"

#include <initializer_list>

namespace hacoboot {

std::optional<std::uint64_t> SchedTotals::checked_total() const {
  std::uint64_t sum = 0;
  for (const auto ns : {cpu, run_queue, sleep, io}) {
    if (__builtin_add_overflow(sum, ns, &sum)) return std::nullopt;
  }
  return sum;
}

SchedTotals SchedTotals::operator-(const SchedTotals& earlier) const {
  return SchedTotals{.cpu = cpu - earlier.cpu,
                     .run_queue = run_queue - earlier.run_queue,
                     .sleep = sleep - earlier.sleep,
                     .io = io - earlier.io};
}

SchedTotals& SchedTotals::operator+=(const SchedTotals& other) {
  cpu += other.cpu;
  run_queue += other.run_queue;
  sleep += other.sleep;
  io += other.io;
  return *this;
}

}  // namespace hacoboot
