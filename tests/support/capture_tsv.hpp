#pragma once
// A system-wide capture such as tests/fixtures/real-haconiwa-3boots.tsv
// (its columns: tests/fixtures/README.md): the ground truth that the
// re-enactment (reenact.cpp) plays and the integration tests compare with.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hacoboot::test {

// One line of a capture.
struct CaptureRow {
  std::size_t line = 0;  // 1-based line in the file, for messages
  std::uint64_t ts_ns = 0;
  std::string kind;  // phase | fork | execve | listen | exit
  std::uint32_t pid = 0;
  std::string comm;
  std::optional<std::int64_t> phase;
  std::optional<std::uint32_t> hpid;
  std::optional<std::uint32_t> child_pid;
  std::string filename;
  std::optional<std::int64_t> ret;
  std::uint64_t cgroup_id = 0;
};

// Rows in file order. Throws std::runtime_error naming the line on a bad row.
std::vector<CaptureRow> load_capture(const std::filesystem::path& path);

// The rows by time (stable: rows of one time keep file order). The capture
// tool printed them per CPU, not strictly by time.
std::vector<CaptureRow> sorted_by_time(std::vector<CaptureRow> rows);

}  // namespace hacoboot::test
