// Parsers for the files the integration tests read: the demo launcher's
// ground truth, the tracer's --events TSV and bpftrace-style map lines.
// Malformed input throws std::runtime_error naming the line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hacoboot::it {

// hpid -> key -> value, from lines "hpid\tkey\tvalue".
using Truth = std::map<std::uint32_t, std::map<std::string, std::int64_t>>;
Truth parse_truth(const std::string& text);

// One launch of the truth file: a supervisor's facts, from its start_lo line
// on. A pid the kernel gives to a later supervisor starts a new launch: on a
// busy host (or next to a test that winds ns_last_pid back) pids are reused.
struct Launch {
  std::uint32_t hpid = 0;
  std::map<std::string, std::int64_t> facts;
};
std::vector<Launch> parse_truth_launches(const std::string& text);

// One row of --events: the columns boot hpid container_pid cgroup_id kind
// phase name t_ns since_start_ns delta_ns end, found by name in the header.
struct BootRow {
  std::uint64_t boot = 0;
  std::uint32_t hpid = 0;
  std::uint32_t container_pid = 0;
  std::uint64_t cgroup_id = 0;
  std::string kind;  // phase | execve | listen
  std::optional<std::int64_t> phase;
  std::string name;
  std::uint64_t t_ns = 0;
  std::optional<std::uint64_t> since_start_ns;
  std::optional<std::uint64_t> delta_ns;
  std::string end;  // exited | tracing_stopped | replaced | evicted | vanished
};
std::vector<BootRow> parse_boot_rows(const std::string& text);
// Rows grouped by their boot column, each group in file order.
std::map<std::uint64_t, std::vector<BootRow>> rows_by_boot(const std::vector<BootRow>& rows);

// "@name: 123" lines, in order; other lines are ignored.
struct MapLine {
  std::string name;
  std::uint64_t value = 0;
};
std::vector<MapLine> parse_map_lines(const std::string& text);
std::map<std::string, std::uint64_t> map_values(const std::vector<MapLine>& lines);

std::vector<std::string> split_lines(const std::string& text);

}  // namespace hacoboot::it
