#include "pipeline/boot_sinks.hpp"

#include <fmt/format.h>

#include "model/boot_analysis.hpp"

namespace hacoboot {

void BootSinks::open_rows() {
  if (config_.events.empty()) return;
  events_ = std::make_unique<OutputFile>(config_.events, OutputFile::Kind::Streamed);
  start_rows();
}

std::optional<std::string> BootSinks::reopen_rows() {
  if (!events_) return std::nullopt;
  if (const auto reopened = events_->reopen(); !reopened) {
    rows_.reset();
    return fmt::format("warning: --events {}: cannot reopen it: {}; its rows are dropped until a SIGHUP reopens it",
                       config_.events, reopened.error());
  }
  std::optional<std::string> told;
  if (dropped_rows_ > 0)
    told = fmt::format("--events {} reopened; {} rows were dropped before", config_.events, dropped_rows_);
  dropped_rows_ = 0;
  start_rows();
  return told;
}

std::optional<std::string> BootSinks::finish_rows() {
  if (!events_) return std::nullopt;
  std::optional<std::string> told;
  if (!events_->open()) {
    told =
        fmt::format("warning: --events {}: {} rows dropped: it could not be reopened", config_.events, dropped_rows_);
  }
  events_->finish();
  return told;
}

void BootSinks::add(const BootRecord& boot) {
  // Once per boot: the summary and the rows read the same analysis.
  const auto analysis = analyse_boot(boot);
  summary_.add(boot, analysis);
  if (rows_) {
    rows_->write(boot, analysis);
  } else if (events_) {
    dropped_rows_ += boot.timeline().size();  // a row per milestone
  }
  if (config_.keep_for_pictures && pictured_.size() < kMaxPictured) pictured_.push_back(boot);
}

// Rows from here on go to events_ (a TSV header first; again after a reopen).
void BootSinks::start_rows() {
  rows_.emplace(events_->stream(), config_.events_format, config_.phase_names);
}

}  // namespace hacoboot
