// The Pipeline on ring-buffer records as the BPF program writes them
// (include/hacoboot/contract.h): what reaches the sinks and the observers,
// what counts as lost, what the rows' file does when it goes away.
#include "pipeline/pipeline.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hacoboot/contract.h"
#include "ring_records.hpp"
#include "system/temp_dir.hpp"

namespace hacoboot {
namespace {

using test::kCgroupId;
using test::kCommand;
using test::Record;
using test::Records;

std::string cgroup_path_of(std::uint64_t id) {
  return id == kCgroupId ? "/haconiwa/app" : "";
}

void feed(Pipeline& pipeline, const std::vector<Record>& records) {
  for (const auto& record : records) pipeline.on_record(record);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Pipeline, WarmUpBootsAreInNoFigureAndNoObserverCall) {
  Pipeline pipeline({.command = kCommand, .warmup = 2}, cgroup_path_of);
  std::vector<std::uint64_t> done;
  std::uint64_t settled_seen = 0;
  pipeline.on_boot_done([&](const BootRecord& boot) { done.push_back(boot.sequence); });
  pipeline.on_boot_settled([&](const BootRecord&) { ++settled_seen; });
  Records records;
  for (int i = 0; i < 5; ++i) feed(pipeline, records.launch());
  pipeline.finish();
  EXPECT_EQ(done, (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(settled_seen, 3U);
  EXPECT_EQ(pipeline.settled_boots(), 3U);
  EXPECT_EQ(pipeline.sinks().summary().boots().listen, 3U);
}

TEST(Pipeline, UndecodableRecordsAreCountedAsLostBesideTheKernelsLosses) {
  Pipeline pipeline({.command = kCommand}, cgroup_path_of);
  const Record too_short(3);
  pipeline.on_record(too_short);
  Records records;
  auto unknown_kind = records.make(HACOBOOT_EV_PHASE, 1, 1, 0, 0);
  const unsigned bad_kind = 200;
  std::memcpy(unknown_kind.data() + offsetof(hacoboot_event, kind), &bad_kind, sizeof bad_kind);
  pipeline.on_record(unknown_kind);
  pipeline.set_kernel_counters({.lost_events = 5, .untracked_phases = 2, .repaired_switch_ins = 7});
  EXPECT_EQ(pipeline.undecodable(), 2U);
  EXPECT_EQ(pipeline.events_lost(), 7U);
  const auto facts = pipeline.run_facts(/*tracked_at_exit=*/4);
  EXPECT_EQ(facts.lost_events, 7U);
  EXPECT_EQ(facts.untracked_phases, 2U);
  EXPECT_EQ(facts.repaired_switch_ins, 7U);
  EXPECT_EQ(facts.tracked_at_exit, 4U);
  EXPECT_EQ(facts.command, kCommand);
}

TEST(Pipeline, ABootSettlesAtItsListenAndIsDoneAtItsEndOrAtFinish) {
  Pipeline pipeline({.command = kCommand}, cgroup_path_of);
  std::vector<BootRecord> done;
  pipeline.on_boot_done([&](const BootRecord& boot) { done.push_back(boot); });
  Records records;
  feed(pipeline, records.launch(/*ended=*/false));
  EXPECT_EQ(pipeline.settled_boots(), 1U) << "a boot that listened counts for -n";
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(pipeline.live_boots(), 1U);
  pipeline.finish();
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(pipeline.live_boots(), 0U);
  EXPECT_EQ(pipeline.settled_boots(), 1U) << "settled once";
  EXPECT_EQ(done.front().cgroup_path, "/haconiwa/app") << "the resolver's path of the exec's cgroup";
}

TEST(Pipeline, VanishedBootsEndWhenTheirProcessesAreGone) {
  Pipeline pipeline({.command = kCommand}, cgroup_path_of);
  Records records;
  feed(pipeline, records.launch(/*ended=*/false));
  pipeline.expire_vanished([](std::uint32_t) { return true; });
  EXPECT_EQ(pipeline.live_boots(), 1U);
  pipeline.expire_vanished([](std::uint32_t) { return false; });
  EXPECT_EQ(pipeline.live_boots(), 0U);
  EXPECT_EQ(pipeline.sinks().summary().boots().listen, 1U);
}

TEST(Pipeline, RowsAreDroppedAndCountedWhileTheirFileCannotBeReopened) {
  const test::TempDir dir;
  const auto path = dir.path() / "rows.tsv";
  Pipeline pipeline({.command = kCommand, .sinks = {.events = path.string()}}, cgroup_path_of);
  pipeline.sinks().open_rows();
  Records records;
  feed(pipeline, records.launch());
  const auto first = read_file(path);
  EXPECT_NE(first.find("/haconiwa/app"), std::string::npos) << first;

  // logrotate moved the file away, and a symbolic link now stands at the path.
  std::filesystem::rename(path, dir.path() / "rows.tsv.1");
  std::filesystem::create_symlink(dir.path() / "elsewhere", path);
  const auto refused = pipeline.sinks().reopen_rows();
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("cannot reopen"), std::string::npos) << *refused;
  feed(pipeline, records.launch());
  EXPECT_GT(pipeline.sinks().dropped_rows(), 0U);
  EXPECT_EQ(pipeline.sinks().summary().boots().listen, 2U) << "the summary still has every boot";

  std::filesystem::remove(path);
  const auto reopened = pipeline.sinks().reopen_rows();
  ASSERT_TRUE(reopened.has_value());
  EXPECT_NE(reopened->find("rows were dropped before"), std::string::npos) << *reopened;
  EXPECT_EQ(pipeline.sinks().dropped_rows(), 0U);
  feed(pipeline, records.launch());
  pipeline.finish();
  EXPECT_FALSE(pipeline.sinks().finish_rows().has_value());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "elsewhere"));
  EXPECT_NE(read_file(path).find("/haconiwa/app"), std::string::npos) << "the third boot's rows";
}

TEST(Pipeline, PicturesKeepTheFirstBootsOnly) {
  Pipeline pipeline({.command = kCommand, .sinks = {.keep_for_pictures = true}}, cgroup_path_of);
  Records records;
  for (std::size_t i = 0; i < kMaxPictured + 3; ++i) feed(pipeline, records.launch());
  pipeline.finish();
  ASSERT_EQ(pipeline.sinks().pictured().size(), kMaxPictured);
  EXPECT_EQ(pipeline.sinks().pictured().back().sequence, kMaxPictured);
  EXPECT_EQ(pipeline.sinks().summary().boots().listen, kMaxPictured + 3);
}

TEST(Pipeline, NoPicturesKeptUnlessAskedFor) {
  Pipeline pipeline({.command = kCommand}, cgroup_path_of);
  Records records;
  feed(pipeline, records.launch());
  pipeline.finish();
  EXPECT_TRUE(pipeline.sinks().pictured().empty());
}

}  // namespace
}  // namespace hacoboot
