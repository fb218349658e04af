// The real Haconiwa capture (tests/fixtures/real-haconiwa-3boots.tsv)
// re-enacted live by hacoboot-reenact under the real tool: it finds the
// capture's three boots with the capture's phases, in order. The replay
// tier's recordings of the re-enactment (tests/fixtures/README.md) are made
// the same way: this keeps the re-enactment from drifting from the capture.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fixture.hpp"
#include "support/build_paths.hpp"
#include "support/capture_tsv.hpp"

namespace hacoboot::it {
namespace {

// Each launch's phases in the capture, by time: its CLI's phase 0 (the CLI
// forked the supervisor), then those passed under the supervisor's pid.
std::vector<std::vector<std::int64_t>> captured_launch_phases() {
  const auto rows = test::sorted_by_time(test::load_capture(test::fixtures_dir() / "real-haconiwa-3boots.tsv"));
  std::map<std::uint32_t, std::uint32_t> parent;
  for (const auto& row : rows) {
    if (row.kind == "fork") parent[row.child_pid.value()] = row.pid;
  }
  std::vector<std::vector<std::int64_t>> launches;
  for (const auto& start : rows) {
    if (start.kind != "phase" || start.phase != 1 || start.hpid != start.pid) continue;
    std::vector<std::int64_t> phases;
    for (const auto& row : rows) {
      if (row.kind == "phase" && (row.hpid == start.pid || (row.pid == parent[start.pid] && row.phase == 0))) {
        phases.push_back(row.phase.value());
      }
    }
    launches.push_back(phases);
  }
  return launches;
}

class ReenactTest : public IntegrationTest {};

TEST_F(ReenactTest, TheReenactedCaptureGivesTheCapturesBootsAndPhases) {
  // A private copy: the probe is attached by inode.
  const auto program = dir() / "hacoboot-reenact";
  std::filesystem::copy_file(test::reenact(), program);
  const auto commands = dir() / "commands";
  const auto rows_path = new_file("rows.tsv");
  const auto run = shell_quote(program.string()) + " " +
                   shell_quote((test::fixtures_dir() / "real-haconiwa-3boots.tsv").string()) + " " +
                   shell_quote(commands.string());
  const auto result =
      run_process({sampler().string(), "--haconiwa", program.string(), "--btf-cache", test::btf_cache().string(), "-q",
                   "--format", "json", "--events", rows_path.string(), "--run", run, (commands / "busybox").string()},
                  dir(), 90s);
  ASSERT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << "\n" << result.err;
  const auto summary = nlohmann::json::parse(result.out);
  expect_boot_counts(summary, 3, 3, 3, 0);
  EXPECT_EQ(summary["untracked_phase_events"], 0) << "every phase belongs to a launch seen starting";

  const auto boots = rows_by_boot(parse_boot_rows(read_file(rows_path)));
  const auto expected = captured_launch_phases();
  ASSERT_EQ(expected.size(), 3u);
  ASSERT_EQ(boots.size(), expected.size());
  std::size_t i = 0;
  for (const auto& [boot, rows] : boots) {
    SCOPED_TRACE("boot " + std::to_string(boot));
    std::vector<std::int64_t> phases;
    for (const auto& row : rows) {
      if (row.kind == "phase") phases.push_back(row.phase.value());
      EXPECT_EQ(row.end, "exited");
    }
    EXPECT_EQ(phases, expected[i++]);
  }
}

}  // namespace
}  // namespace hacoboot::it
