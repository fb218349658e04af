#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "report/report.hpp"

namespace hacoboot {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(250);

}  // namespace

ProgressLine::ProgressLine(bool wanted) : enabled_(wanted && ::isatty(STDERR_FILENO) == 1) {}

void ProgressLine::boot_done(const BootRecord& boot) {
  ++boots_;
  if (const auto listen_ns = boot.listen_ns ? boot.since_start(*boot.listen_ns) : std::nullopt) {
    last_listen_ns_ = listen_ns;
  }
}

void ProgressLine::update(std::uint64_t in_flight, std::uint64_t lost_events) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kRedrawEvery;
  const auto last = last_listen_ns_ ? format_duration(*last_listen_ns_) : std::string("-");
  fmt::print(stderr, "\r\033[K{} boots done, {} in flight, last listen {}, {} events lost", boots_, in_flight, last,
             lost_events);
  (void)std::fflush(stderr);
  if (!drawn_) drawn_.reset(stderr);
}

void ProgressLine::EraseLine::operator()(std::FILE* terminal) const {
  fmt::print(terminal, "\r\033[K");
  (void)std::fflush(terminal);
}

}  // namespace hacoboot
