#include "support/capture_tsv.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace hacoboot::test {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cells;
  std::string::size_type from = 0;
  while (true) {
    const auto tab = line.find('\t', from);
    cells.push_back(line.substr(from, tab == std::string::npos ? std::string::npos : tab - from));
    if (tab == std::string::npos) return cells;
    from = tab + 1;
  }
}

template <typename T>
T number(std::string_view cell, std::size_t line, const char* column) {
  T value{};
  const auto* end = cell.data() + cell.size();
  const auto [ptr, ec] = std::from_chars(cell.data(), end, value);
  if (cell.empty() || ec != std::errc{} || ptr != end) {
    throw std::runtime_error("line " + std::to_string(line) + ": bad " + column + " '" + std::string(cell) + "'");
  }
  return value;
}

template <typename T>
std::optional<T> optional_number(std::string_view cell, std::size_t line, const char* column) {
  if (cell.empty()) return std::nullopt;
  return number<T>(cell, line, column);
}

}  // namespace

std::vector<CaptureRow> load_capture(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  static const std::string kHeader = "ts_ns\tkind\tpid\ttid\tcomm\tphase\thpid\tchild_pid\tfilename\tret\tcgroup_id";
  std::string text;
  std::getline(in, text);
  if (text != kHeader) throw std::runtime_error(path.string() + ": unexpected header '" + text + "'");

  std::vector<CaptureRow> rows;
  std::size_t line = 1;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    const auto c = split_tabs(text);
    if (c.size() != 11) {
      throw std::runtime_error("line " + std::to_string(line) + ": " + std::to_string(c.size()) + " columns");
    }
    CaptureRow row;
    row.line = line;
    row.ts_ns = number<std::uint64_t>(c[0], line, "ts_ns");
    row.kind = c[1];
    row.pid = number<std::uint32_t>(c[2], line, "pid");
    // c[3], the tid: the tool keys processes by tgid.
    row.comm = c[4];
    row.phase = optional_number<std::int64_t>(c[5], line, "phase");
    row.hpid = optional_number<std::uint32_t>(c[6], line, "hpid");
    row.child_pid = optional_number<std::uint32_t>(c[7], line, "child_pid");
    row.filename = c[8];
    row.ret = optional_number<std::int64_t>(c[9], line, "ret");
    row.cgroup_id = number<std::uint64_t>(c[10], line, "cgroup_id");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<CaptureRow> sorted_by_time(std::vector<CaptureRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  return rows;
}

}  // namespace hacoboot::test
