#include "capture/cpu_sampling.hpp"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "capture/records_clock.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

[[noreturn]] void fail(const std::string& what, std::size_t cpu, int error, const std::string& hint = {}) {
  std::string message = what + " on CPU " + std::to_string(cpu) + ": " + std::strerror(error);
  if (error == EACCES || error == EPERM) message += " (needs root or CAP_PERFMON)";
  throw RuntimeError(message + hint);
}

std::optional<std::uint64_t> max_sample_rate() {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  std::uint64_t rate = 0;
  if (in >> rate) return rate;
  return std::nullopt;
}

}  // namespace

std::string sampling_refusal_hint(int error, std::uint32_t hz, std::optional<std::uint64_t> max_sample_rate) {
  if (error != EINVAL || !max_sample_rate || hz <= *max_sample_rate) return {};
  return " (--kernel-profile-hz " + std::to_string(hz) + " is above kernel.perf_event_max_sample_rate, " +
         std::to_string(*max_sample_rate) + ", which the kernel lowers when sampling takes too long: ask for " +
         std::to_string(*max_sample_rate) + " Hz or less)";
}

CpuSampling::CpuSampling(bpf_program* program, std::size_t possible_cpus, std::uint32_t hz) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof(attr);
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = hz;  // NOLINT(cppcoreguidelines-pro-type-union-access): perf_event_attr's C layout
  attr.disabled = 1;
  for (std::size_t cpu = 0; cpu < possible_cpus; ++cpu) {
    // pid -1: every task on that CPU; the program keeps the accounted ones.
    const long fd = ::syscall(__NR_perf_event_open, &attr, -1, static_cast<int>(cpu), -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == ENODEV) continue;  // a possible CPU that is offline
    if (fd < 0) {
      const int error = errno;
      fail("opening the kernel profile's CPU clock", cpu, error, sampling_refusal_hint(error, hz, max_sample_rate()));
    }
    links_.emplace_back(bpf_program__attach_perf_event(program, static_cast<int>(fd)));
    if (links_.back() == nullptr) {
      const int err = errno;
      links_.pop_back();
      ::close(static_cast<int>(fd));
      fail("attaching the kernel profile's program", cpu, err);
    }
    // The link owns the perf event fd from now on.
    perf_fds_.push_back({.fd = static_cast<int>(fd), .cpu = cpu});
  }
  // libbpf enables an event as it attaches to it: off until a boot runs.
  enabled_ = true;
  set_enabled(false);
}

void CpuSampling::LinkDeleter::operator()(bpf_link* link) const {
  bpf_link__destroy(link);
}

std::vector<bpf_link*> CpuSampling::release_links() {
  perf_fds_.clear();
  enabled_ = false;
  std::vector<bpf_link*> released;
  released.reserve(links_.size());
  for (auto& link : links_) released.push_back(link.release());
  links_.clear();
  return released;
}

void CpuSampling::follow(bool threads_accounted) {
  if (threads_accounted != enabled_) set_enabled(threads_accounted);
}

void CpuSampling::set_enabled(bool enabled) {
  if (!enabled && !stretches_.empty() && stretches_.back().off_ns == kOpen) stretches_.back().off_ns = monotonic_ns();
  for (const auto& event : perf_fds_) {
    if (::ioctl(event.fd, enabled ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) != 0) {
      fail(enabled ? "enabling the kernel profile's CPU clock" : "disabling the kernel profile's CPU clock", event.cpu,
           errno);
    }
  }
  enabled_ = enabled;
  if (!enabled) return;
  stretches_.push_back({.on_ns = monotonic_ns(), .off_ns = kOpen});
  if (stretches_.size() > kStretchesKept) stretches_.pop_front();
}

std::optional<std::uint64_t> CpuSampling::sampling_since(std::uint64_t ns) const {
  const auto found = std::find_if(stretches_.begin(), stretches_.end(),
                                  [ns](const Stretch& stretch) { return stretch.on_ns <= ns && ns < stretch.off_ns; });
  if (found == stretches_.end()) return std::nullopt;
  return found->on_ns;
}

}  // namespace hacoboot
