#include "support/formats.hpp"

#include <algorithm>
#include <charconv>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hacoboot::it {
namespace {

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string::size_type begin = 0;
  while (true) {
    const auto end = line.find(separator, begin);
    fields.push_back(line.substr(begin, end - begin));
    if (end == std::string::npos) return fields;
    begin = end + 1;
  }
}

template <typename T>
T number(const std::string& text, const std::string& what, std::size_t line_no) {
  T value{};
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw std::runtime_error("line " + std::to_string(line_no) + ": " + what + " '" + text + "' is not a number");
  }
  return value;
}

template <typename T>
std::optional<T> optional_number(const std::string& text, const std::string& what, std::size_t line_no) {
  if (text.empty()) return std::nullopt;
  return number<T>(text, what, line_no);
}

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

namespace {

struct TruthLine {
  std::uint32_t hpid;
  std::string key;
  std::int64_t value;
};

std::vector<TruthLine> truth_lines(const std::string& text) {
  std::vector<TruthLine> parsed;
  std::size_t line_no = 0;
  for (const auto& line : split_lines(text)) {
    ++line_no;
    const auto fields = split(line, '\t');
    if (fields.size() != 3)
      throw std::runtime_error("truth line " + std::to_string(line_no) + ": not 3 fields: " + line);
    parsed.push_back({number<std::uint32_t>(fields[0], "hpid", line_no), fields[1],
                      number<std::int64_t>(fields[2], fields[1], line_no)});
  }
  return parsed;
}

}  // namespace

Truth parse_truth(const std::string& text) {
  Truth truth;
  for (const auto& [hpid, key, value] : truth_lines(text)) truth[hpid][key] = value;
  return truth;
}

std::vector<Launch> parse_truth_launches(const std::string& text) {
  std::vector<Launch> launches;
  std::map<std::uint32_t, std::size_t> current;  // hpid -> its latest launch
  for (const auto& [hpid, key, value] : truth_lines(text)) {
    if (key == "start_lo" || !current.contains(hpid)) {
      current[hpid] = launches.size();
      launches.push_back({hpid, {}});
    }
    launches[current[hpid]].facts[key] = value;
  }
  return launches;
}

std::vector<BootRow> parse_boot_rows(const std::string& text) {
  // Columns are found by name: the format may gain columns (it has: cgroup_path).
  static const std::vector<std::string> kRequired{"boot", "hpid", "container_pid",  "cgroup_id", "kind", "phase",
                                                  "name", "t_ns", "since_start_ns", "delta_ns",  "end"};
  const auto lines = split_lines(text);
  if (lines.empty()) throw std::runtime_error("events TSV: empty, no header");
  const auto header = split(lines.front(), '\t');
  std::map<std::string, std::size_t> column;
  for (const auto& name : kRequired) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error("events TSV: no column " + name + " in header: " + lines.front());
    column[name] = static_cast<std::size_t>(it - header.begin());
  }

  std::vector<BootRow> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t line_no = i + 1;
    const auto f = split(lines[i], '\t');
    if (f.size() != header.size()) {
      throw std::runtime_error("events line " + std::to_string(line_no) + ": " + std::to_string(f.size()) +
                               " fields, header has " + std::to_string(header.size()) + ": " + lines[i]);
    }
    const auto cell = [&](const char* name) -> const std::string& { return f[column.at(name)]; };
    BootRow row;
    row.boot = number<std::uint64_t>(cell("boot"), "boot", line_no);
    row.hpid = number<std::uint32_t>(cell("hpid"), "hpid", line_no);
    row.container_pid = number<std::uint32_t>(cell("container_pid"), "container_pid", line_no);
    row.cgroup_id = number<std::uint64_t>(cell("cgroup_id"), "cgroup_id", line_no);
    row.kind = cell("kind");
    if (row.kind != "phase" && row.kind != "execve" && row.kind != "listen") {
      throw std::runtime_error("events line " + std::to_string(line_no) + ": unknown kind " + row.kind);
    }
    row.phase = optional_number<std::int64_t>(cell("phase"), "phase", line_no);
    if (row.phase.has_value() != (row.kind == "phase")) {
      throw std::runtime_error("events line " + std::to_string(line_no) + ": phase column does not fit kind");
    }
    row.name = cell("name");
    row.t_ns = number<std::uint64_t>(cell("t_ns"), "t_ns", line_no);
    row.since_start_ns = optional_number<std::uint64_t>(cell("since_start_ns"), "since_start_ns", line_no);
    row.delta_ns = optional_number<std::uint64_t>(cell("delta_ns"), "delta_ns", line_no);
    row.end = cell("end");
    static const std::set<std::string> kEnds{"exited", "tracing_stopped", "replaced", "evicted", "vanished"};
    if (!kEnds.contains(row.end)) {
      throw std::runtime_error("events line " + std::to_string(line_no) + ": unknown end " + row.end);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::map<std::uint64_t, std::vector<BootRow>> rows_by_boot(const std::vector<BootRow>& rows) {
  std::map<std::uint64_t, std::vector<BootRow>> boots;
  for (const auto& row : rows) boots[row.boot].push_back(row);
  return boots;
}

std::vector<MapLine> parse_map_lines(const std::string& text) {
  static const std::regex kLine(R"(^@([A-Za-z0-9_]+): (\d+)$)");
  std::vector<MapLine> result;
  for (const auto& line : split_lines(text)) {
    std::smatch m;
    if (std::regex_match(line, m, kLine)) result.push_back({m[1].str(), std::stoull(m[2].str())});
  }
  return result;
}

std::map<std::string, std::uint64_t> map_values(const std::vector<MapLine>& lines) {
  std::map<std::string, std::uint64_t> values;
  for (const auto& line : lines) values[line.name] = line.value;
  return values;
}

}  // namespace hacoboot::it
