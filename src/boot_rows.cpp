#include "hacoboot/boot_rows.hpp"

#include <fmt/format.h>

#include <ostream>
#include <string>

namespace hacoboot {
namespace {

std::string optional_cell(std::optional<std::uint64_t> value) {
  return value ? std::to_string(*value) : std::string();
}

}  // namespace

BootRowWriter::BootRowWriter(std::ostream& out) : out_(out) {
  out_ << "boot\thpid\tcontainer_pid\tcgroup_id\tkind\tphase\tname\tt_ns\tsince_start_ns\tdelta_ns\n";
  out_.flush();
}

void BootRowWriter::write(const BootRecord& boot) {
  for (const auto& timing : boot.timeline()) {
    const bool is_phase = timing.step.kind == Step::Kind::Phase;
    out_ << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", boot.sequence, boot.hpid, boot.container_pid,
                        boot.cgroup_id, is_phase ? "phase" : step_name(timing.step),
                        is_phase ? std::to_string(timing.step.phase) : std::string(), step_name(timing.step),
                        timing.ts_ns, optional_cell(timing.since_start), optional_cell(timing.delta));
  }
  out_.flush();
}

}  // namespace hacoboot
