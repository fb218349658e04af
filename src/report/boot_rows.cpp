#include "report/boot_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

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

// A text cell (a cgroup's name may hold a TAB, a CR, a backslash, any
// byte but / and NUL): TAB, newline and CR would break the row, so they are
// written as \t \n \r, a backslash as \\, and any other control character or
// byte of invalid UTF-8 as \xNN, so that none reaches a terminal raw (the
// text format of PostgreSQL's COPY).
std::string tsv_cell(std::string_view text) {
  static constexpr std::array<CharEscape, 4> kTsv{{{'\t', "\\t"}, {'\n', "\\n"}, {'\r', "\\r"}, {'\\', "\\\\"}}};
  return printable(escape_chars(text, kTsv), kUncut);
}

// A cell of a row: empty (null in JSON), a number, or text.
using Cell = std::variant<std::monostate, std::uint64_t, std::int64_t, std::string>;
using Row = std::array<Cell, kColumns.size()>;

template <typename T>
Cell optional_cell(const std::optional<T>& value) {
  return value ? Cell(*value) : Cell();
}

// Appends a number cell; false for text and empty cells.
bool append_number(std::string& line, const Cell& cell) {
  if (const auto* count = std::get_if<std::uint64_t>(&cell)) {
    line += fmt::format_int(*count).str();
  } else if (const auto* number = std::get_if<std::int64_t>(&cell)) {
    line += fmt::format_int(*number).str();
  } else {
    return false;
  }
  return true;
}

// Rows are written straight from their cells, not through a JSON object: a
// busy host's boots end in bursts, and every microsecond the reader spends
// here is ring buffer the kernel side may fill (tests/integration
// LoadTest.ManyBootsInFlightAllAccountedWithFlatMemory).
void append_tsv(std::string& line, const Row& row) {
  std::string_view separator;
  for (const auto& cell : row) {
    line += separator;
    separator = "\t";
    if (const auto* text = std::get_if<std::string>(&cell))
      line += tsv_cell(*text);
    else
      append_number(line, cell);
  }
  line += '\n';
}

// Printable ASCII but quote and backslash (every name this tool writes)
// goes as it is; anything else through the JSON library.
void append_json_string(std::string& line, const std::string& text) {
  const bool plain =
      std::all_of(text.begin(), text.end(), [](char c) { return c >= ' ' && c <= '~' && c != '"' && c != '\\'; });
  if (plain) {
    line += '"';
    line += text;
    line += '"';
  } else {
    line += Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

// `"key":value` pairs, comma-separated. Bytes that are not UTF-8 (a
// cgroup's name is any bytes) become U+FFFD instead of an exception that
// would end the run.
void append_json_members(std::string& line, std::span<const std::string_view> keys, std::span<const Cell> cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += '"';
    line += keys[i];
    line += "\":";
    if (const auto* text = std::get_if<std::string>(&cells[i])) {
      append_json_string(line, *text);
    } else if (!append_number(line, cells[i])) {
      line += "null";
    }
  }
}

// The step of the analysis that this milestone ends; nullptr for the start
// and what came before it.
const LaneStep* lane_step_of(const StepTiming& timing, const BootAnalysis& analysis) {
  const auto it = std::find_if(analysis.steps.begin(), analysis.steps.end(), [&timing](const LaneStep& step) {
    return step.step == timing.step && step.end_ns == timing.ts_ns;
  });
  return it == analysis.steps.end() ? nullptr : &*it;
}

constexpr std::array<std::string_view, 11> kPieceFields{
    "lane", "tid", "kind", "phase", "name", "begin_ns", "end_ns", "cpu_ns", "run_queue_ns", "sleep_ns", "io_ns"};

// The step's "kind" (phase, execve, listen), "phase" (its number) and
// "name"; all three empty for a thread's time after its last step.
std::array<Cell, 3> step_cells(const std::optional<Step>& step, const PhaseNames& names) {
  if (!step) return {};
  const bool is_phase = step->kind == Step::Kind::Phase;
  auto name = step_name(*step, names);
  return {is_phase ? std::string("phase") : name, is_phase ? Cell(step->phase) : Cell(), std::move(name)};
}

// cpu_ns, run_queue_ns, sleep_ns, io_ns: empty when not accounted.
std::array<Cell, 4> state_cells(const std::optional<SchedTotals>& states) {
  if (!states) return {};
  return {states->cpu, states->run_queue, states->sleep, states->io};
}

// The pieces of a path, as a JSON array of objects.
void append_pieces(std::string& line, const CriticalPath& path, const BootRecord& boot, const PhaseNames& names) {
  line += '[';
  for (const auto& piece : path.pieces) {
    const auto step = step_cells(piece.step, names);
    const auto states = state_cells(piece.states);
    const std::array<Cell, kPieceFields.size()> cells{std::string(lane_name(lane_of_thread(boot, piece.tid))),
                                                      std::uint64_t{piece.tid},
                                                      step[0],
                                                      step[1],
                                                      step[2],
                                                      piece.begin_ns,
                                                      piece.end_ns,
                                                      states[0],
                                                      states[1],
                                                      states[2],
                                                      states[3]};
    line += &piece == path.pieces.data() ? "{" : ",{";
    append_json_members(line, kPieceFields, cells);
    line += '}';
  }
  line += ']';
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

// One milestone's cells, in the order of kColumns; the scheduler's are
// empty before the start (no step of the analysis ends there).
Row row_of(const BootRecord& boot, const StepTiming& timing, const BootAnalysis& analysis, const PhaseNames& names) {
  auto step_columns = step_cells(timing.step, names);
  const LaneStep* step = lane_step_of(timing, analysis);
  const auto scheduler = [step](auto read) { return step ? Cell(read(*step)) : Cell(); };
  auto states = state_cells(step ? step->states : std::nullopt);
  return {boot.sequence,
          std::uint64_t{boot.hpid},
          std::uint64_t{boot.container_pid},
          boot.cgroup_id,
          boot.cgroup_path,
          std::move(step_columns[0]),
          std::move(step_columns[1]),
          std::move(step_columns[2]),
          timing.ts_ns,
          optional_cell(timing.since_start),
          optional_cell(timing.delta),
          std::string(boot_end_name(boot.end)),
          scheduler([](const LaneStep& s) { return std::string(lane_name(s.lane)); }),
          scheduler([](const LaneStep& s) { return std::uint64_t{s.tid}; }),
          scheduler([](const LaneStep& s) { return s.begin_ns; }),
          std::move(states[0]),
          std::move(states[1]),
          std::move(states[2]),
          std::move(states[3]),
          scheduler([](const LaneStep& s) { return s.on_listen_path_ns; }),
          scheduler([](const LaneStep& s) { return s.on_execve_path_ns; }),
          optional_cell(noise_free_to(timing.step, analysis))};
}

}  // namespace

BootRowWriter::BootRowWriter(std::ostream& out, Format format, PhaseNames names)
    : out_(out), format_(format), names_(std::move(names)) {
  if (format_ == Format::Tsv) {
    Row header;
    std::transform(kColumns.begin(), kColumns.end(), header.begin(),
                   [](std::string_view column) { return Cell(std::string(column)); });
    std::string line;
    append_tsv(line, header);
    out_ << line << std::flush;
  }
}

void BootRowWriter::write(const BootRecord& boot) {
  write(boot, analyse_boot(boot));
}

void BootRowWriter::write(const BootRecord& boot, const BootAnalysis& analysis) {
  std::string lines;
  for (const auto& timing : boot.timeline()) {
    const auto row = row_of(boot, timing, analysis, names_);
    if (format_ == Format::Tsv) {
      append_tsv(lines, row);
      continue;
    }
    lines += '{';
    append_json_members(lines, kColumns, row);
    // The step's syscalls as the summary has them (its calls in this boot).
    const LaneStep* step = lane_step_of(timing, analysis);
    lines += ",\"syscalls\":";
    lines += syscalls_json(step ? step->syscalls : std::nullopt).dump(-1, ' ', false, Json::error_handler_t::replace);
    lines += ",\"critical_path\":";
    if (const auto& path = path_to(timing.step, analysis)) {
      append_pieces(lines, *path, boot, names_);
    } else {
      lines += "null";
    }
    lines += "}\n";
  }
  out_ << lines << std::flush;
}

}  // namespace hacoboot
