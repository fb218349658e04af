// The replay tier: recordings of real runs of the demo launcher and of the
// real Haconiwa capture re-enacted (tests/fixtures/README.md), what the BPF
// program really emitted, replayed
// through the pipeline without root, BPF or sleeps, into the outputs a user
// reads, against golden files.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "golden.hpp"
#include "pipeline/pipeline.hpp"
#include "recording/recording_reader.hpp"
#include "recording/replay.hpp"
#include "report/report.hpp"
#include "support/build_paths.hpp"

namespace hacoboot {
namespace {

struct Replayed {
  Recording recording;
  std::string json;
  std::string table;
};

Replayed replayed(const std::string& fixture) {
  Replayed out{.recording = read_recording((test::fixtures_dir() / fixture).string()), .json = {}, .table = {}};
  Pipeline pipeline(recorded_pipeline_config(out.recording.header, {}), recorded_cgroup_paths(out.recording));
  pipeline.take_syscalls_from(recorded_syscalls(out.recording));
  replay(out.recording, pipeline);
  const auto facts = pipeline.run_facts(out.recording.end ? out.recording.end->tracked_at_exit : 0);
  std::ostringstream json;
  make_report_writer(ReportFormat::Json)->write(pipeline.sinks().summary(), facts, json);
  std::ostringstream table;
  make_report_writer(ReportFormat::Table)->write(pipeline.sinks().summary(), facts, table);
  out.json = json.str();
  out.table = table.str();
  return out;
}

TEST(Replay, DemoLauncherBootsGiveTheirGoldenSummaries) {
  const auto run = replayed("demo-3boots.hbrec");
  EXPECT_FALSE(run.recording.cut.has_value()) << *run.recording.cut;
  EXPECT_TRUE(test::matches_golden("replay.demo-3boots.json", run.json));
  EXPECT_TRUE(test::matches_golden("replay.demo-3boots.table.txt", run.table));
}

TEST(Replay, RealHaconiwaBootsGiveTheirGoldenSummaries) {
  const auto run = replayed("real-haconiwa-3boots.hbrec");
  EXPECT_FALSE(run.recording.cut.has_value()) << *run.recording.cut;
  EXPECT_TRUE(test::matches_golden("replay.real-haconiwa-3boots.json", run.json));
  EXPECT_TRUE(test::matches_golden("replay.real-haconiwa-3boots.table.txt", run.table));
}

}  // namespace
}  // namespace hacoboot
