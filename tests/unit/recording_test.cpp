// Recordings (docs/recording.md): written as the live run goes, read back
// within bounds, cut ones read up to the cut, newer ones refused by name,
// and replayed into the same figures as the records fed live.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "recording/recording_reader.hpp"
#include "recording/recording_writer.hpp"
#include "recording/replay.hpp"
#include "report/report.hpp"
#include "ring_records.hpp"
#include "system/temp_dir.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

using test::kCgroupId;
using test::kCommand;
using test::Record;
using test::Records;

constexpr std::size_t kPreambleBytes = 16;  // magic, format, layout

RecordingHeader header() {
  return {.tool_version = "9.9.9",
          .layout = HACOBOOT_RECORD_LAYOUT_VERSION,
          .boot_id = "0d9c6a2e-0000-4000-8000-000000000000",
          .start_phase = 2,
          .command = kCommand,
          .warmup = 1,
          .phase_names = PhaseNames::parse("123 APP_READY\n", "test")};
}

std::vector<Record> three_launches() {
  Records records;
  std::vector<Record> all;
  for (int i = 0; i < 3; ++i) {
    auto launch = records.launch();
    all.insert(all.end(), launch.begin(), launch.end());
  }
  return all;
}

const RecordedEnd kEnd{.counters = {.lost_events = 3,
                                    .tracked_full = 1,
                                    .untracked_phases = 2,
                                    .kernel_maps = {{.map = "syscall_aggregates", .peak = 310, .capacity = 32'768}}},
                       .tracked_at_exit = 5};

// The bytes of a complete recording of `records`.
std::string recorded(const std::vector<Record>& records, const RecordingHeader& with = header()) {
  const test::TempDir dir;
  const auto path = (dir.path() / "run.hbrec").string();
  {
    RecordingWriter writer(path, with);
    for (const auto& record : records) {
      writer.record(record);
      writer.cgroup_path(kCgroupId, "/haconiwa/app");  // written once
    }
    writer.finish(kEnd);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string json_summary(Pipeline& pipeline, std::uint64_t tracked_at_exit) {
  std::ostringstream out;
  make_report_writer(ReportFormat::Json)->write(pipeline.sinks().summary(), pipeline.run_facts(tracked_at_exit), out);
  return out.str();
}

std::string refusal(const std::string& bytes) {
  try {
    (void)parse_recording(bytes, "run.hbrec");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(read without error)";
}

TEST(Recording, HoldsTheHeaderTheRecordsTheCgroupPathsAndTheEnd) {
  const auto records = three_launches();
  const auto recording = parse_recording(recorded(records), "run.hbrec");
  EXPECT_FALSE(recording.cut.has_value()) << *recording.cut;
  EXPECT_EQ(recording.header.tool_version, "9.9.9");
  EXPECT_EQ(recording.header.boot_id, header().boot_id);
  EXPECT_EQ(recording.header.start_phase, 2);
  EXPECT_EQ(recording.header.command, kCommand);
  EXPECT_EQ(recording.header.warmup, 1U);
  EXPECT_EQ(recording.header.phase_names.name(123), "APP_READY");
  EXPECT_EQ(recording.records, records);
  EXPECT_EQ(recording.cgroup_paths, (std::map<std::uint64_t, std::string>{{kCgroupId, "/haconiwa/app"}}));
  ASSERT_TRUE(recording.end.has_value());
  EXPECT_EQ(recording.end->counters.lost_events, 3U);
  EXPECT_EQ(recording.end->counters.untracked_phases, 2U);
  EXPECT_EQ(recording.end->counters.kernel_maps, kEnd.counters.kernel_maps);
  EXPECT_EQ(recording.end->tracked_at_exit, 5U);
}

// Where a launch's calls blocked, its stacks named as they were live, is
// read back as written, for the replay's table and JSON.
TEST(Recording, HoldsTheBlockingAggregatesWithTheirNamedStacks) {
  const std::vector<BlockingAggregate> blocking{
      {.tid = 12,
       .segment_ns = 1'000,
       .nr = 0,
       .count = 2,
       .time_ns = 5'000,
       .frames = {"schedule+0x23", "anon_pipe_read+0x4fa"},
       .waker_tid = 14,
       .waker_frames = {"anon_pipe_write+0x3ad"}},
      {.tid = 13, .nr = 230, .count = 1, .time_ns = 20, .frames = {"0xffff1"}}};
  const test::TempDir dir;
  const auto path = (dir.path() / "run.hbrec").string();
  {
    RecordingWriter writer(path, header());
    writer.blocking(7, blocking);
    writer.finish(kEnd);
  }
  const auto recording = read_recording(path);
  EXPECT_EQ(recording.blocking, (std::map<std::uint32_t, std::vector<BlockingAggregate>>{{7, blocking}}));
  EXPECT_EQ(recorded_blocking(recording)(7), blocking);
  EXPECT_TRUE(recorded_blocking(recording)(8).empty());
}

// A launch's kernel profile, in as many frames as its entries need, and one
// without samples, read back as written.
TEST(Recording, HoldsTheKernelProfilesWithTheirNamedStacks) {
  KernelProfile profile{.hz = 999, .sampled_since_ns = 500, .samples = {}};
  for (std::uint32_t i = 0; i < 40; ++i) {
    profile.samples.push_back({.tid = 12,
                               .segment_ns = 1'000 + i,
                               .nr = 165,
                               .samples = i + 1,
                               .frames = {"path_mount+0x5", "__x64_sys_mount+0x121"}});
  }
  const KernelProfile unsampled{.hz = 999, .sampled_since_ns = std::nullopt, .samples = {}};
  const test::TempDir dir;
  const auto path = (dir.path() / "run.hbrec").string();
  {
    RecordingWriter writer(path, header());
    writer.kernel_profile(7, profile);
    writer.kernel_profile(8, unsampled);
    writer.finish(kEnd);
  }
  const auto recording = read_recording(path);
  EXPECT_EQ(recording.kernel_profiles, (std::map<std::uint32_t, KernelProfile>{{7, profile}, {8, unsampled}}));
  EXPECT_EQ(recorded_kernel_profiles(recording)(7, 0), profile);
  EXPECT_EQ(recorded_kernel_profiles(recording)(9, 0), KernelProfile());
}

TEST(Recording, ReplaysIntoTheFiguresOfTheRecordsFedLive) {
  const auto records = three_launches();
  Pipeline live(recorded_pipeline_config(header(), {}),
                [](std::uint64_t id) { return id == kCgroupId ? std::string("/haconiwa/app") : std::string(); });
  for (const auto& record : records) live.on_record(record);
  live.set_kernel_counters(kEnd.counters);
  live.finish();

  const auto recording = parse_recording(recorded(records), "run.hbrec");
  Pipeline replayed(recorded_pipeline_config(recording.header, {}), recorded_cgroup_paths(recording));
  replay(recording, replayed);
  EXPECT_EQ(replayed.sinks().summary().boots().listen, 2U) << "three boots, the first one the warm-up";
  EXPECT_EQ(json_summary(replayed, recording.end->tracked_at_exit), json_summary(live, kEnd.tracked_at_exit));
}

TEST(Recording, ACutOneIsReadUpToItsLastWholeFrameAndSaysItWasCut) {
  const auto bytes = recorded(three_launches());
  const auto whole = parse_recording(bytes, "run.hbrec");
  std::size_t fewer_records_seen = 0;
  // Every cut past the header: within a frame's head, within its payload, between frames.
  for (std::size_t size = kPreambleBytes + 200; size < bytes.size(); size += 7) {
    const auto cut = parse_recording(bytes.substr(0, size), "run.hbrec");
    ASSERT_TRUE(cut.cut.has_value()) << size;
    EXPECT_TRUE(cut.cut->starts_with("cut ")) << *cut.cut;
    ASSERT_LE(cut.records.size(), whole.records.size());
    EXPECT_TRUE(std::equal(cut.records.begin(), cut.records.end(), whole.records.begin())) << size;
    if (cut.records.size() < whole.records.size()) ++fewer_records_seen;
  }
  EXPECT_GT(fewer_records_seen, 0U);
  const auto in_a_frame = parse_recording(bytes.substr(0, bytes.size() - 3), "run.hbrec");
  EXPECT_NE(in_a_frame.cut->find("of a frame's"), std::string::npos) << *in_a_frame.cut;
}

TEST(Recording, ANewerLayoutOrFormatIsRefusedNamingTheToolThatWroteIt) {
  auto bytes = recorded(three_launches());
  bytes[12] = static_cast<char>(HACOBOOT_RECORD_LAYOUT_VERSION + 1);  // the preamble's layout
  EXPECT_NE(refusal(bytes).find(fmt::format("recorded by hacoboot-sampler 9.9.9 with recording format {} and record "
                                            "layout {}; this build reads up to format {} and layout {}",
                                            kRecordingFormat, HACOBOOT_RECORD_LAYOUT_VERSION + 1, kRecordingFormat,
                                            HACOBOOT_RECORD_LAYOUT_VERSION)),
            std::string::npos)
      << refusal(bytes);
  bytes = recorded(three_launches());
  bytes[8] = static_cast<char>(kRecordingFormat + 1);  // the format
  EXPECT_NE(refusal(bytes).find(fmt::format("recording format {}", kRecordingFormat + 1)), std::string::npos)
      << refusal(bytes);
}

// A newer format's header is read for its tool only: one whose tool is no
// string is refused all the same, naming no tool (found by fuzz_recording).
TEST(Recording, ANewerFormatWhoseToolIsNoStringIsRefusedAllTheSame) {
  auto bytes = recorded(three_launches());
  const std::string version = "\"tool_version\":\"9.9.9\"";
  const auto at = bytes.find(version);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, version.size(), "\"tool_version\":    999");  // same length: the frame stays whole
  bytes[8] = static_cast<char>(kRecordingFormat + 1);
  EXPECT_NE(refusal(bytes).find("recorded by hacoboot-sampler ? with recording format"), std::string::npos)
      << refusal(bytes);
}

TEST(Recording, MalformedOnesAreRefusedNamingTheOffset) {
  EXPECT_NE(refusal("GIF89a...").find("not a hacoboot-sampler recording"), std::string::npos);
  const auto bytes = recorded(three_launches());
  auto too_long = bytes;
  too_long[kPreambleBytes + 7] = 0x7f;  // the header frame's length, past kMaxFrameBytes
  EXPECT_NE(refusal(too_long).find("run.hbrec: byte 16: a frame of"), std::string::npos) << refusal(too_long);
  EXPECT_NE(refusal(bytes + bytes.substr(bytes.size() - 16)).find("data after the trailer"), std::string::npos);
  auto unknown = bytes;
  const auto first_record = kPreambleBytes + 8 +
                            (static_cast<unsigned char>(bytes[kPreambleBytes + 4]) |
                             static_cast<unsigned char>(bytes[kPreambleBytes + 5]) << 8U);
  unknown[first_record] = 99;
  EXPECT_NE(refusal(unknown).find(fmt::format("byte {}: a frame of unknown kind 99", first_record)), std::string::npos)
      << refusal(unknown);
}

// A recording comes from elsewhere: what its header says reaches terminals
// and reports, so it holds what the recording run's options could have
// (a crafted COMMAND with an escape sequence would retitle a terminal).
TEST(Recording, AHeaderNoRunCouldHaveWrittenIsRefused) {
  auto escape = header();
  escape.command = "/x\x1b]0;PWNED\x07";
  EXPECT_NE(refusal(recorded(three_launches(), escape)).find("a header whose COMMAND '/x\\x1B]0;PWNED\\x07' is no"),
            std::string::npos)
      << refusal(recorded(three_launches(), escape));
  for (const std::int64_t phase : {-1L, 128L}) {
    auto start = header();
    start.start_phase = phase;
    EXPECT_NE(refusal(recorded(three_launches(), start)).find(fmt::format("start phase {} is no phase", phase)),
              std::string::npos)
        << phase;
  }
  auto warmup = header();
  warmup.warmup = ~0ULL;
  EXPECT_NE(refusal(recorded(three_launches(), warmup)).find("warm-up of"), std::string::npos);
  auto format = recorded(three_launches());
  format[8] = 0;  // the preamble's format
  EXPECT_NE(refusal(format).find("recording format 0, which no build wrote"), std::string::npos) << refusal(format);
}

// Empty records would cost memory without bound as a 1 GiB file of them is
// read; no record the kernel side writes is shorter than its base size.
TEST(Recording, ARecordShorterThanAnyEventIsRefused) {
  auto records = three_launches();
  records.insert(records.begin() + 1, Record{});
  EXPECT_NE(refusal(recorded(records))
                .find(fmt::format("a record of 0 bytes, fewer than the {} of the smallest", HACOBOOT_EVENT_BASE_SIZE)),
            std::string::npos)
      << refusal(recorded(records));
}

}  // namespace
}  // namespace hacoboot
