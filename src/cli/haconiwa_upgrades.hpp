#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "capture/binary_watch.hpp"
#include "capture/tracer.hpp"

namespace hacoboot {

// Follows the haconiwa binary across upgrades for a tracer that runs for
// days: a package upgrade writes a new file and renames it over the old one,
// and the probe, attached to the old file, would never see a launch of the
// new one. Every kUpgradeCheckInterval the file at the path is looked at; a
// new one that has the probe gets it attached as well, and the old file's
// stays for the processes that still run it.
class HaconiwaUpgrades {
 public:
  static constexpr auto kCheckInterval = std::chrono::seconds(1);
  // More files than this attached means an upgrade loop, not upgrades.
  static constexpr std::size_t kMaxFiles = 16;

  // `path`: the binary as --haconiwa named it, resolved; `attached` what it
  // was when the probe was attached. Says what it does on `diagnostics`
  // (warnings always, the rest unless quiet).
  HaconiwaUpgrades(std::string path, const FileVersion& attached, bool quiet, std::ostream& diagnostics);

  // Looks at the path when the interval is over, and attaches to a new file.
  void check(Tracer& tracer, std::chrono::steady_clock::time_point now);

  // Files the probe is attached to, the first included.
  [[nodiscard]] std::uint64_t files_attached() const { return watch_.files_attached(); }
  // New files seen at the path since the start, attached or not.
  [[nodiscard]] std::uint64_t replacements() const { return replacements_; }

 private:
  void attach(Tracer& tracer, const FileVersion& file);

  std::string path_;
  BinaryWatch watch_;
  bool quiet_;
  std::ostream& diagnostics_;
  std::uint64_t replacements_ = 0;
  bool told_full_ = false;
  std::chrono::steady_clock::time_point next_check_;
};

}  // namespace hacoboot
