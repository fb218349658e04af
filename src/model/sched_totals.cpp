#include "model/sched_totals.hpp"

namespace hacoboot {

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
