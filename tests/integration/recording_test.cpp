// Recordings of real runs (docs/recording.md): `report` on a live run's
// recording writes the live run's files byte for byte; a recording cut
// mid-run is reported up to the cut; one of a newer record layout is refused.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fixture.hpp"
#include "recording/recording.hpp"

namespace hacoboot::it {
namespace {

constexpr int kBoots = 3;
constexpr std::size_t kLayoutOffset = 12;  // the preamble's record layout: after the magic and the format

std::string described(const ProcessResult& r) {
  return r.status.describe() + "\n--- stderr ---\n" + r.err;
}

class RecordingTest : public IntegrationTest {
 protected:
  // hacoboot-sampler ARGS..., without --haconiwa: `report` takes no trace option.
  ProcessResult run_plain(std::vector<std::string> args) {
    args.insert(args.begin(), sampler().string());
    return run_process(args, dir());
  }

  // The outputs -o, --events, --timeline and --trace-out, under `prefix`.
  std::vector<std::filesystem::path> outputs(const std::string& prefix) {
    return {new_file(prefix + "-summary.json"), new_file(prefix + "-rows.tsv"), new_file(prefix + "-boots.svg"),
            new_file(prefix + "-trace.json")};
  }
  static std::vector<std::string> output_args(const std::vector<std::filesystem::path>& files) {
    return {"--format",    "json",
            "-o",          files[0].string(),
            "--events",    files[1].string(),
            "--timeline",  files[2].string(),
            "--trace-out", files[3].string()};
  }
};

TEST_F(RecordingTest, AReportOfTheRecordingWritesTheLiveRunsFilesByteForByte) {
  const auto live = outputs("live");
  const auto recording = new_file("run.hbrec");
  auto args = output_args(live);
  // --syscalls: the recording keeps each boot's syscalls for the report.
  const std::vector<std::string> more{
      "--record",    recording.string(), "--syscalls", "-q", "--run", launcher_command({"-n", std::to_string(kBoots)}),
      app().string()};
  args.insert(args.end(), more.begin(), more.end());
  const auto traced = run_sampler(args);
  ASSERT_TRUE(traced.status.exited && traced.status.code == 0) << described(traced);
  const auto summary = nlohmann::json::parse(read_file(live[0]));
  EXPECT_EQ(summary["boots"]["listen"], kBoots);
  EXPECT_TRUE(std::any_of(summary["steps"].begin(), summary["steps"].end(),
                          [](const nlohmann::json& step) { return step["syscalls"].is_object(); }))
      << "no step with syscalls: " << summary["steps"].dump();

  const auto reported = outputs("report");
  auto report_args = output_args(reported);
  report_args.insert(report_args.begin(), {"report", recording.string()});
  const auto report = run_plain(report_args);
  ASSERT_TRUE(report.status.exited && report.status.code == 0) << described(report);
  EXPECT_EQ(report.err, "") << "a complete recording: nothing to warn of";
  for (std::size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(read_file(reported[i]), read_file(live[i])) << live[i].filename() << " differs from its report";
  }
}

TEST_F(RecordingTest, ACutRecordingIsReportedUpToTheCutAndANewerLayoutIsRefused) {
  const auto recording = new_file("run.hbrec");
  const auto traced = run_sampler({"record", "-o", recording.string(), "-q", "--run",
                                   launcher_command({"-n", std::to_string(kBoots)}), app().string()});
  ASSERT_TRUE(traced.status.exited && traced.status.code == 0) << described(traced);
  EXPECT_EQ(traced.out, "") << "record writes nothing but the recording";
  const auto bytes = read_file(recording);

  // Cut mid-run, as a run killed outright leaves it: within a frame.
  const auto cut = new_file("cut.hbrec");
  write_file(cut, bytes.substr(0, bytes.size() / 2 + 3));
  const auto report = run_plain({"report", cut.string(), "--format", "json"});
  ASSERT_TRUE(report.status.exited && report.status.code == 0) << described(report);
  EXPECT_NE(report.err.find("cut at byte"), std::string::npos) << report.err;
  const auto summary = nlohmann::json::parse(report.out);
  EXPECT_GE(summary["boots"]["started"].get<int>(), 1) << "the boots recorded before the cut";
  EXPECT_LT(summary["boots"]["listen"].get<int>(), kBoots) << "not the boots after it";

  auto newer = bytes;
  newer[kLayoutOffset] = static_cast<char>(newer[kLayoutOffset] + 1);
  const auto patched = new_file("newer.hbrec");
  write_file(patched, newer);
  const auto refused = run_plain({"report", patched.string()});
  EXPECT_TRUE(refused.status.exited && refused.status.code == 2) << described(refused);
  EXPECT_NE(refused.err.find("recorded by hacoboot-sampler " HACOBOOT_EXPECTED_VERSION " with recording format " +
                             std::to_string(kRecordingFormat)),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("this build reads up to"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace hacoboot::it
