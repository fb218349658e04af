#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "report/report.hpp"

namespace hacoboot {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(250);

}  // namespace

ProgressLine::ProgressLine(bool wanted) : enabled_(wanted && ::isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
  clear();
}

void ProgressLine::boot_done(std::optional<std::uint64_t> listen_ns) {
  ++boots_;
  if (listen_ns) last_listen_ns_ = listen_ns;
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
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  fmt::print(stderr, "\r\033[K");
  (void)std::fflush(stderr);
  drawn_ = false;
}

}  // namespace hacoboot
