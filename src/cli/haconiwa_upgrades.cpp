#include "cli/haconiwa_upgrades.hpp"

#include <fmt/format.h>

#include <ostream>
#include <utility>

#include "capture/system_checks.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {

HaconiwaUpgrades::HaconiwaUpgrades(std::string path, const FileVersion& attached, bool quiet, std::ostream& diagnostics)
    : path_(std::move(path)), watch_(attached), quiet_(quiet), diagnostics_(diagnostics) {}

void HaconiwaUpgrades::check(Tracer& tracer, std::chrono::steady_clock::time_point now) {
  if (now < next_check_) return;
  next_check_ = now + kCheckInterval;
  if (const auto file = watch_.observe(file_version(path_))) attach(tracer, *file);
}

void HaconiwaUpgrades::attach(Tracer& tracer, const FileVersion& file) {
  ++replacements_;
  const auto shown = printable(path_);
  const auto refuse = [&](const std::string& why) {
    watch_.unusable(file);
    diagnostics_ << fmt::format(
                        "hacoboot-sampler: warning: {} is a new file (inode {}), {}: its launches are not seen\n",
                        shown, file.inode, printable(why, kUncut))
                 << std::flush;
  };
  if (watch_.files_attached() >= kMaxFiles) {
    if (!told_full_) refuse(fmt::format("the probe is in {} files already (restart the tool)", kMaxFiles));
    told_full_ = true;
    watch_.unusable(file);
    return;
  }
  try {
    tracer.attach_phase_probe_to(path_, require_phase_probe(path_));
  } catch (const std::runtime_error& e) {  // UsageError (no probe) or RuntimeError (attach)
    refuse(e.what());
    return;
  }
  watch_.attached(file);
  if (quiet_) return;
  diagnostics_ << fmt::format(
                      "hacoboot-sampler: {} is a new file (inode {}), as after an upgrade: the probe is attached to it "
                      "too, and stays on the old one while its processes run\n",
                      shown, file.inode)
               << std::flush;
}

}  // namespace hacoboot
