#include "hacoboot/boot_rows.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>

namespace hacoboot {
namespace {

std::string optional_cell(std::optional<std::uint64_t> value) {
  return value ? std::to_string(*value) : std::string();
}

nlohmann::ordered_json optional_json(std::optional<std::uint64_t> value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace

BootRowWriter::BootRowWriter(std::ostream& out, Format format, PhaseNames names)
    : out_(out), format_(format), names_(std::move(names)) {
  if (format_ == Format::Tsv) {
    out_ << "boot\thpid\tcontainer_pid\tcgroup_id\tcgroup_path\tkind\tphase\tname\tt_ns\tsince_start_ns\tdelta_ns\n";
    out_.flush();
  }
}

void BootRowWriter::write(const BootRecord& boot) {
  for (const auto& timing : boot.timeline()) {
    const bool is_phase = timing.step.kind == Step::Kind::Phase;
    const auto name = step_name(timing.step, names_);
    const auto kind = is_phase ? std::string("phase") : name;
    if (format_ == Format::Tsv) {
      out_ << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", boot.sequence, boot.hpid, boot.container_pid,
                          boot.cgroup_id, boot.cgroup_path, kind,
                          is_phase ? std::to_string(timing.step.phase) : std::string(), name, timing.ts_ns,
                          optional_cell(timing.since_start), optional_cell(timing.delta));
      continue;
    }
    const nlohmann::ordered_json row{
        {"boot", boot.sequence},
        {"hpid", boot.hpid},
        {"container_pid", boot.container_pid},
        {"cgroup_id", boot.cgroup_id},
        {"cgroup_path", boot.cgroup_path},
        {"kind", kind},
        {"phase", is_phase ? nlohmann::ordered_json(timing.step.phase) : nlohmann::ordered_json()},
        {"name", name},
        {"t_ns", timing.ts_ns},
        {"since_start_ns", optional_json(timing.since_start)},
        {"delta_ns", optional_json(timing.delta)},
    };
    out_ << row.dump() << '\n';
  }
  out_.flush();
}

}  // namespace hacoboot
