#include "report/boot_rows.hpp"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "util/text.hpp"

namespace hacoboot {
namespace {

std::string optional_cell(std::optional<std::uint64_t> value) {
  return value ? std::to_string(*value) : std::string();
}

// A text cell (a cgroup's name may hold a TAB, a CR, a backslash): TAB,
// newline and CR would break the row, so they are written as \t \n \r, and
// a backslash as \\ (the text format of PostgreSQL's COPY).
std::string tsv_cell(std::string_view text) {
  static constexpr std::array<CharEscape, 4> kTsv{{{'\t', "\\t"}, {'\n', "\\n"}, {'\r', "\\r"}, {'\\', "\\\\"}}};
  return escape_chars(text, kTsv);
}

nlohmann::ordered_json optional_json(std::optional<std::uint64_t> value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace

BootRowWriter::BootRowWriter(std::ostream& out, Format format, PhaseNames names)
    : out_(out), format_(format), names_(std::move(names)) {
  if (format_ == Format::Tsv) {
    out_ << "boot\thpid\tcontainer_pid\tcgroup_id\tcgroup_path\tkind\tphase\tname\tt_ns\tsince_start_ns\tdelta_"
            "ns\tend\n";
    out_.flush();
  }
}

void BootRowWriter::write(const BootRecord& boot) {
  for (const auto& timing : boot.timeline()) {
    const bool is_phase = timing.step.kind == Step::Kind::Phase;
    const auto name = step_name(timing.step, names_);
    const auto kind = is_phase ? std::string("phase") : name;
    if (format_ == Format::Tsv) {
      out_ << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", boot.sequence, boot.hpid,
                          boot.container_pid, boot.cgroup_id, tsv_cell(boot.cgroup_path), tsv_cell(kind),
                          is_phase ? std::to_string(timing.step.phase) : std::string(), tsv_cell(name), timing.ts_ns,
                          optional_cell(timing.since_start), optional_cell(timing.delta), boot_end_name(boot.end));
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
        {"end", boot_end_name(boot.end)},
    };
    // Bytes that are not UTF-8 (a cgroup's name is any bytes) become U+FFFD
    // instead of an exception that would end the run.
    out_ << row.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }
  out_.flush();
}

}  // namespace hacoboot
