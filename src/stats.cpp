#include "hacoboot/stats.hpp"

#include <algorithm>

namespace hacoboot {

void SampleStats::add(std::uint64_t value_ns) {
  ++count_;
  sum_ += value_ns;
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
}

std::uint64_t SampleStats::avg() const {
  return empty() ? 0 : static_cast<std::uint64_t>(sum_ / count_);
}

void Summary::add(const BootRecord& boot) {
  if (!boot.started()) {
    ++boots_.unstarted;
    return;
  }
  ++boots_.started;
  const auto execve = boot.execve_ns ? boot.since_start(*boot.execve_ns) : std::nullopt;
  const auto listen = boot.listen_ns ? boot.since_start(*boot.listen_ns) : std::nullopt;
  if (execve) {
    ++boots_.execve;
    execve_.add(*execve);
  }
  if (listen) {
    ++boots_.listen;
    listen_.add(*listen);
  }
  if (!execve || !listen) ++boots_.incomplete;
  for (const auto& mark : boot.phases) {
    if (mark.phase == boot.start_phase) continue;  // always 0
    if (const auto since = boot.since_start(mark.ts_ns)) phases_[mark.phase].add(*since);
  }
}

}  // namespace hacoboot
