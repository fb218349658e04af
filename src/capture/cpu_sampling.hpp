#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct bpf_link;
struct bpf_program;

namespace hacoboot {

// What to add to the message of a perf event that `error` refused at `hz`:
// EINVAL above kernel.perf_event_max_sample_rate (`max_sample_rate`, which
// the kernel itself lowers when its sampling interrupts take too long) is
// the frequency, not the tool. "" when nothing is known to add.
std::string sampling_refusal_hint(int error, std::uint32_t hz, std::optional<std::uint64_t> max_sample_rate);

// The perf events of the kernel CPU profile (--kernel-profile): one CPU
// clock per online CPU, in frequency mode, each running the sampling
// program. Opened disabled; follow() enables them while threads are
// accounted and disables them when none is, so that the host pays no
// timer interrupt for the tool between boots. Each is detached (its link
// destroyed, which closes its perf event) with this object.
class CpuSampling {
 public:
  // Throws RuntimeError naming what failed (the CPU, why).
  CpuSampling(bpf_program* program, std::size_t possible_cpus, std::uint32_t hz);
  ~CpuSampling() = default;
  CpuSampling(const CpuSampling&) = delete;
  CpuSampling& operator=(const CpuSampling&) = delete;
  CpuSampling(CpuSampling&&) = delete;
  CpuSampling& operator=(CpuSampling&&) = delete;

  // Enables the events when `threads_accounted` and they are off, disables
  // them when not and they are on.
  void follow(bool threads_accounted);
  // Since when the events sampled without a break, up to the instant `ns`
  // (CLOCK_MONOTONIC, the records' clock) that lies in a stretch they were
  // enabled; nullopt when they were off then (or that is too long ago to
  // be remembered). Conservative: a stretch begins once every event is on
  // and ends before the first is turned off.
  [[nodiscard]] std::optional<std::uint64_t> sampling_since(std::uint64_t ns) const;
  // The links, handed over to be destroyed in parallel with the others.
  std::vector<bpf_link*> release_links();

 private:
  struct Stretch {
    std::uint64_t on_ns = 0;
    std::uint64_t off_ns = 0;  // kOpen while enabled
  };
  static constexpr std::uint64_t kOpen = ~std::uint64_t{0};
  // Enough for the boots whose profile is taken after their end.
  static constexpr std::size_t kStretchesKept = 64;
  void set_enabled(bool enabled);

  struct LinkDeleter {
    void operator()(bpf_link* link) const;
  };
  std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links_;
  struct PerfEvent {
    int fd = -1;  // owned by its link
    std::size_t cpu = 0;
  };
  std::vector<PerfEvent> perf_fds_;
  std::deque<Stretch> stretches_;
  bool enabled_ = false;
};

}  // namespace hacoboot
