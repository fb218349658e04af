#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/boot.hpp"
#include "model/phases.hpp"
#include "model/summary.hpp"
#include "report/boot_rows.hpp"
#include "util/output_file.hpp"

namespace hacoboot {

// Boots kept for the pictures (--timeline, --trace-out, --stacks): they are for
// looking at, and memory must not grow with the length of the run.
inline constexpr std::size_t kMaxPictured = 10'000;

// What BootSinks uses of the options.
struct BootSinksConfig {
  // The rows' file (--events); empty: none.
  std::string events{};  // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
  BootRowWriter::Format events_format = BootRowWriter::Format::Tsv;
  bool keep_for_pictures = false;  // --timeline, --trace-out or --stacks
  PhaseNames phase_names{};        // NOLINT(readability-redundant-member-init): -Wmissing-field-initializers
};

// Where each finished boot goes: the summary, the rows (--events, the only
// output written as it goes), the pictures. What goes wrong with the rows'
// file is returned as a message for the caller to tell.
class BootSinks {
 public:
  explicit BootSinks(BootSinksConfig config) : config_(std::move(config)) {}

  // Creates the rows' file: once every check passed and the probes are
  // attached. Throws UsageError naming it when it cannot be opened.
  void open_rows();
  // After logrotate moved the rows' file away (SIGHUP). What is at the path
  // then is the operator's doing, not the run's: a file that cannot be
  // opened there stops no tracing (an exporter serves on), its rows are
  // dropped and counted until a later reopen succeeds. Returns what to tell.
  std::optional<std::string> reopen_rows();
  // Flushes the rows; returns a warning when rows were dropped for good.
  // Throws RuntimeError when written rows were lost.
  std::optional<std::string> finish_rows();

  void add(const BootRecord& boot);

  [[nodiscard]] const Summary& summary() const { return summary_; }
  // The first kMaxPictured boots, when kept for the pictures.
  [[nodiscard]] const std::vector<BootRecord>& pictured() const { return pictured_; }
  // Rows not written since the rows' file was lost (a failed reopen).
  [[nodiscard]] std::uint64_t dropped_rows() const { return dropped_rows_; }

 private:
  void start_rows();

  const BootSinksConfig config_;
  Summary summary_;
  std::unique_ptr<OutputFile> events_;
  std::optional<BootRowWriter> rows_;  // none: the rows are dropped (a failed reopen)
  std::uint64_t dropped_rows_ = 0;
  std::vector<BootRecord> pictured_;
};

}  // namespace hacoboot
