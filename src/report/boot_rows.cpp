#include "report/boot_rows.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "report/sched_json.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

using Json = nlohmann::ordered_json;

// The fields of a row, in the order of the TSV's columns: the first twelve
// are the original ones, the scheduler's come after them.
constexpr std::array<std::string_view, 22> kColumns{
    "boot",
    "hpid",
    "container_pid",
    "cgroup_id",
    "cgroup_path",
    "kind",
    "phase",
    "name",
    "t_ns",
    "since_start_ns",
    "delta_ns",
    "end",
    "lane",
    "tid",
    "begin_ns",
    "cpu_ns",
    "run_queue_ns",
    "sleep_ns",
    "io_ns",
    "on_listen_path_ns",
    "on_execve_path_ns",
    "noise_free_ns",
};

// A text cell (a cgroup's name may hold a TAB, a CR, a backslash): TAB,
// newline and CR would break the row, so they are written as \t \n \r, and
// a backslash as \\ (the text format of PostgreSQL's COPY).
std::string tsv_cell(std::string_view text) {
  static constexpr std::array<CharEscape, 4> kTsv{{{'\t', "\\t"}, {'\n', "\\n"}, {'\r', "\\r"}, {'\\', "\\\\"}}};
  return escape_chars(text, kTsv);
}

// A JSON value as a TSV cell: null is an empty cell.
std::string cell_of(const Json& value) {
  if (value.is_null()) return {};
  if (value.is_string()) return tsv_cell(value.get_ref<const std::string&>());
  return value.dump();
}

// One TSV line: `cell(column)` for each column, in order.
template <typename Cell>
void write_tsv_line(std::ostream& out, const Cell& cell) {
  std::string_view separator;
  for (const auto column : kColumns) {
    out << separator << cell(column);
    separator = "\t";
  }
  out << '\n';
}

// The step of the analysis that this milestone ends; nullptr for the start
// and what came before it.
const LaneStep* lane_step_of(const StepTiming& timing, const BootAnalysis& analysis) {
  const auto it = std::find_if(analysis.steps.begin(), analysis.steps.end(), [&timing](const LaneStep& step) {
    return step.step == timing.step && step.end_ns == timing.ts_ns;
  });
  return it == analysis.steps.end() ? nullptr : &*it;
}

Lane lane_of(std::uint32_t tid, const BootAnalysis& analysis) {
  const auto it = std::find_if(analysis.steps.begin(), analysis.steps.end(),
                               [tid](const LaneStep& step) { return step.tid == tid; });
  return it == analysis.steps.end() ? Lane::Other : it->lane;
}

Json pieces_of(const CriticalPath& path, const BootAnalysis& analysis, const PhaseNames& names) {
  auto pieces = Json::array();
  for (const auto& piece : path.pieces) {
    Json row{{"lane", lane_name(lane_of(piece.tid, analysis))}, {"tid", piece.tid}};
    put_step(row, piece.step, names);
    row["begin_ns"] = piece.begin_ns;
    row["end_ns"] = piece.end_ns;
    put_states(row, piece.states);
    pieces.push_back(std::move(row));
  }
  return pieces;
}

// The path to this milestone, when it is execve or listen.
const std::optional<CriticalPath>& path_to(const Step& step, const BootAnalysis& analysis) {
  static const std::optional<CriticalPath> kNone;
  if (step.kind == Step::Kind::Execve) return analysis.to_execve;
  if (step.kind == Step::Kind::Listen) return analysis.to_listen;
  return kNone;
}

std::optional<std::uint64_t> noise_free_to(const Step& step, const BootAnalysis& analysis) {
  if (step.kind == Step::Kind::Execve) return analysis.noise_free_execve();
  if (step.kind == Step::Kind::Listen) return analysis.noise_free_listen();
  return std::nullopt;
}

// The scheduler's columns of a milestone row; all null before the start.
void put_lane_step(Json& row, const LaneStep* step) {
  row["lane"] = step ? Json(lane_name(step->lane)) : Json();
  row["tid"] = step ? Json(step->tid) : Json();
  row["begin_ns"] = step ? Json(step->begin_ns) : Json();
  put_states(row, step ? step->states : std::nullopt);
  row["on_listen_path_ns"] = step ? Json(step->on_listen_path_ns) : Json();
  row["on_execve_path_ns"] = step ? Json(step->on_execve_path_ns) : Json();
}

}  // namespace

BootRowWriter::BootRowWriter(std::ostream& out, Format format, PhaseNames names)
    : out_(out), format_(format), names_(std::move(names)) {
  if (format_ == Format::Tsv) {
    write_tsv_line(out_, [](std::string_view column) { return column; });
    out_.flush();
  }
}

void BootRowWriter::write(const BootRecord& boot) {
  write(boot, analyse_boot(boot));
}

void BootRowWriter::write(const BootRecord& boot, const BootAnalysis& analysis) {
  for (const auto& timing : boot.timeline()) {
    Json row{{"boot", boot.sequence},
             {"hpid", boot.hpid},
             {"container_pid", boot.container_pid},
             {"cgroup_id", boot.cgroup_id},
             {"cgroup_path", boot.cgroup_path}};
    put_step(row, timing.step, names_);
    row["t_ns"] = timing.ts_ns;
    row["since_start_ns"] = optional_json(timing.since_start);
    row["delta_ns"] = optional_json(timing.delta);
    row["end"] = boot_end_name(boot.end);
    put_lane_step(row, lane_step_of(timing, analysis));
    row["noise_free_ns"] = optional_json(noise_free_to(timing.step, analysis));
    if (format_ == Format::Tsv) {
      write_tsv_line(out_, [&row](std::string_view column) { return cell_of(row.at(std::string(column))); });
      continue;
    }
    const auto& path = path_to(timing.step, analysis);
    row["critical_path"] = path ? pieces_of(*path, analysis, names_) : Json();
    // Bytes that are not UTF-8 (a cgroup's name is any bytes) become U+FFFD
    // instead of an exception that would end the run.
    out_ << row.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
  }
  out_.flush();
}

}  // namespace hacoboot
