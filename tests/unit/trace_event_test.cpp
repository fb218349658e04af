#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/blocking.hpp"
#include "model/boot_analysis.hpp"
#include "model/kernel_profile.hpp"
#include "model/lane.hpp"
#include "model/syscalls.hpp"
#include "report/chrome_trace.hpp"

namespace hacoboot {
namespace {

using nlohmann::json;

// Boot 2 of supervisor 200: phase 0 (CLI) before the start, its execve
// before the supervisor's phase 3; odd ns everywhere, to see them kept.
BootRecord sample_boot() {
  BootRecord b;
  b.sequence = 2;
  b.hpid = 200;
  b.container_pid = 201;
  b.start_ns = 9'000'001'000;
  b.phases = {{0, 9'000'000'500}, {1, 9'000'001'000}, {2, 9'000'301'234}, {11, 9'000'501'237}, {3, 9'004'100'001}};
  b.execve_ns = 9'004'000'999;
  b.listen_ns = 9'009'000'000;
  return b;
}

// Boot 1, overlapping boot 2 in time, still running when tracing stopped.
BootRecord overlapping_boot() {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 100;
  b.start_ns = 9'000'000'100;
  b.phases = {{1, 9'000'000'100}, {2, 9'000'200'000}};
  b.execve_ns = 9'000'900'000;
  return b;
}

// With no analysis: the phases track alone, whatever analyse_boot() does.
json trace_of(const std::vector<BootRecord>& boots) {
  std::ostringstream out;
  write_chrome_trace(boots, std::vector<BootAnalysis>(boots.size()), out);
  return json::parse(out.str());
}

json trace_of(const BootRecord& boot, const BootAnalysis& analysis) {
  std::ostringstream out;
  write_chrome_trace(std::vector{boot}, std::vector{analysis}, out);
  return json::parse(out.str());
}

std::vector<json> events_with(const json& trace, const std::string& ph) {
  std::vector<json> events;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") == ph) events.push_back(event);
  }
  return events;
}

std::vector<json> track(const json& trace, std::uint64_t tid) {
  std::vector<json> events;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") != "M" && event.at("tid") == tid) events.push_back(event);
  }
  return events;
}

// Track names by track id.
std::map<std::uint64_t, std::string> track_names(const json& trace) {
  std::map<std::uint64_t, std::string> names;
  for (const auto& event : events_with(trace, "M")) {
    if (event.at("name") == "thread_name") names[event.at("tid")] = event.at("args").at("name");
  }
  return names;
}

// The events of the track named `name`; empty when there is none.
std::vector<json> track_named(const json& trace, const std::string& name) {
  for (const auto& [tid, track_name] : track_names(trace)) {
    if (track_name == name) return track(trace, tid);
  }
  return {};
}

// ns from a µs double, which must hold them exactly enough to round back.
std::int64_t ns_of(const json& micros) {
  return std::llround(micros.get<double>() * 1000.0);
}

TEST(ChromeTrace, IsTheObjectForm) {
  const auto trace = trace_of({sample_boot()});
  ASSERT_TRUE(trace.is_object());
  EXPECT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  EXPECT_EQ(trace.at("otherData").at("clock_origin_ns"), 9'000'000'500U);  // its phase 0
}

TEST(ChromeTrace, CountsOneCompleteEventPerPhaseAndOneInstantPerMilestone) {
  const auto trace = trace_of({sample_boot(), overlapping_boot()});
  EXPECT_EQ(events_with(trace, "X").size(), 5U + 2U);
  const auto instants = events_with(trace, "i");
  ASSERT_EQ(instants.size(), 2U + 1U);
  for (const auto& instant : instants) {
    EXPECT_EQ(instant.at("s"), "t");
    EXPECT_TRUE(instant.at("name") == "execve" || instant.at("name") == "listen") << instant;
  }
}

TEST(ChromeTrace, NamesAProcessPerBootWithItsPhasesTrack) {
  const auto trace = trace_of({sample_boot(), overlapping_boot()});
  std::map<std::uint64_t, std::string> processes;
  for (const auto& event : events_with(trace, "M")) {
    if (event.at("name") != "process_name") continue;
    processes[event.at("pid")] = event.at("args").at("name");
    EXPECT_EQ(event.at("tid"), event.at("pid")) << "not its main thread: " << event;
  }
  EXPECT_EQ(processes, (std::map<std::uint64_t, std::string>{{1, "boot 1 hpid 100"}, {2, "boot 2 hpid 200"}}));
  std::vector<std::string> tracks;
  for (const auto& [tid, name] : track_names(trace)) {
    tracks.push_back(name);
    // Perfetto takes a tid equal to a pid for that process's main thread.
    EXPECT_FALSE(processes.contains(tid)) << name << " has tid " << tid;
  }
  EXPECT_EQ(tracks, (std::vector<std::string>{"boot 2 phases", "boot 1 phases"}));
  for (const auto& event : track_named(trace, "boot 1 phases")) EXPECT_EQ(event.at("pid"), 1);
  for (const auto& event : track_named(trace, "boot 2 phases")) EXPECT_EQ(event.at("pid"), 2);
}

TEST(ChromeTrace, PhasesLastUntilTheNextPhaseToTheNs) {
  const auto trace = trace_of({sample_boot(), overlapping_boot()});
  std::vector<std::int64_t> durations;
  std::vector<std::int64_t> starts;
  for (const auto& event : track_named(trace, "boot 2 phases")) {
    if (event.at("ph") != "X") continue;
    ASSERT_TRUE(event.at("ts").is_number_float());
    ASSERT_TRUE(event.at("dur").is_number_float());
    starts.push_back(ns_of(event.at("ts")));
    durations.push_back(ns_of(event.at("dur")));
  }
  // From the earliest timestamp of all boots: boot 1's start, at ...100.
  EXPECT_EQ(starts, (std::vector<std::int64_t>{400, 900, 301'134, 501'137, 4'099'901}));
  EXPECT_EQ(durations, (std::vector<std::int64_t>{500, 300'234, 200'003, 3'598'764, 0}));
}

TEST(ChromeTrace, PhaseEventsCarryTheirNameAndNumber) {
  const auto trace = trace_of({sample_boot()});
  const auto phases = events_with(trace, "X");
  ASSERT_EQ(phases.size(), 5U);
  EXPECT_EQ(phases[3].at("name"), "CONTAINER_START");
  EXPECT_EQ(phases[3].at("args").at("phase"), 11);
  const auto execve = events_with(trace, "i").at(0);
  EXPECT_EQ(execve.at("name"), "execve");
  EXPECT_EQ(execve.at("args").at("since_start_ns"), 3'999'999U);
  EXPECT_EQ(ns_of(execve.at("ts")), 4'000'499);
}

TEST(ChromeTrace, NoBootsIsAnEmptyTrace) {
  const auto trace = trace_of({});
  EXPECT_TRUE(events_with(trace, "X").empty());
  EXPECT_TRUE(events_with(trace, "i").empty());
}

TEST(ChromeTrace, TheOverloadWithoutAnalysesDrawsThePhases) {
  std::ostringstream out;
  write_chrome_trace(std::vector{sample_boot()}, out);
  const auto trace = json::parse(out.str());
  std::size_t phases = 0;
  for (const auto& event : events_with(trace, "X")) phases += event.at("cat") == "phase" ? 1 : 0;
  EXPECT_EQ(phases, 5U);
}

TEST(ChromeTrace, OneAnalysisPerBootOrNothing) {
  std::ostringstream out;
  EXPECT_THROW(write_chrome_trace(std::vector{sample_boot()}, std::vector<BootAnalysis>{}, out), std::invalid_argument);
}

// --- Lanes: sample_boot as analyse_boot() would see it with the kernel's
// readings. The supervisor (200) forks the container (201) and, writing its
// uid map, wakes it at ...401'000: the path crosses into the supervisor
// there. The container forks the listener (230), which listens.
constexpr std::uint32_t kSupervisor = 200;
constexpr std::uint32_t kContainer = 201;
constexpr std::uint32_t kListener = 230;
constexpr std::uint64_t kWakeup = 9'000'401'000;
constexpr std::uint64_t kForkListener = 9'004'500'000;

BootRecord lanes_boot() {
  auto boot = sample_boot();
  boot.wakeups = {
      {.ts_ns = kWakeup, .waker_tid = kSupervisor, .wakee_tid = kContainer, .waker_totals = {}, .wakee_totals = {}}};
  return boot;
}

Step phase(std::int64_t n) {
  return Step{Step::Kind::Phase, n};
}

LaneStep lane_step(Lane lane, std::optional<Step> step, std::uint32_t tid, std::uint64_t begin, std::uint64_t end,
                   SchedTotals states, std::uint64_t on_listen_path, std::uint64_t on_execve_path) {
  return {.lane = lane,
          .step = step,
          .tid = tid,
          .begin_ns = begin,
          .end_ns = end,
          .since_start = end - 9'000'001'000,
          .states = states,
          .on_listen_path_ns = on_listen_path,
          .on_execve_path_ns = on_execve_path};
}

BootAnalysis lanes_analysis() {
  const Step execve{Step::Kind::Execve};
  const Step listen{Step::Kind::Listen};
  BootAnalysis a;
  a.steps = {
      lane_step(Lane::Supervisor, phase(2), kSupervisor, 9'000'001'000, 9'000'301'234, {200'000, 50'000, 50'234, 0},
                300'234, 300'234),
      lane_step(Lane::Container, phase(11), kContainer, 9'000'301'234, 9'000'501'237, {100'000, 3, 50'000, 50'000},
                100'237, 100'237),
      lane_step(Lane::Container, execve, kContainer, 9'000'501'237, 9'004'000'999, {3'499'762, 0, 0, 0}, 3'499'762,
                3'499'762),
      lane_step(Lane::Supervisor, phase(3), kSupervisor, 9'000'301'234, 9'004'100'001, {1'000, 0, 3'797'767, 0}, 99'766,
                99'766),
      lane_step(Lane::Container, std::nullopt, kContainer, 9'004'000'999, kForkListener, {499'001, 0, 0, 0}, 499'001,
                0),
      lane_step(Lane::Supervisor, phase(4), kSupervisor, 9'004'100'001, 9'008'000'000, {0, 0, 3'899'999, 0}, 0, 0),
      lane_step(Lane::Listener, listen, kListener, kForkListener, 9'009'000'000, {4'000'000, 500'000, 0, 0}, 4'500'000,
                0),
  };
  CriticalPath to_execve{{
      {kSupervisor, phase(2), 9'000'001'000, 9'000'301'234, SchedTotals{200'000, 50'000, 50'234, 0}},
      {kSupervisor, phase(3), 9'000'301'234, kWakeup, SchedTotals{0, 0, 99'766, 0}},
      {kContainer, phase(11), kWakeup, 9'000'501'237, SchedTotals{100'237, 0, 0, 0}},
      {kContainer, execve, 9'000'501'237, 9'004'000'999, SchedTotals{3'499'762, 0, 0, 0}},
  }};
  a.to_listen = to_execve;
  a.to_listen->pieces.push_back(
      {kContainer, std::nullopt, 9'004'000'999, kForkListener, SchedTotals{499'001, 0, 0, 0}});
  a.to_listen->pieces.push_back(
      {kListener, listen, kForkListener, 9'009'000'000, SchedTotals{4'000'000, 500'000, 0, 0}});
  a.to_execve = std::move(to_execve);
  return a;
}

TEST(ChromeTraceLanes, EachProcessOfABootHasItsTrackAndAStatesTrack) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  std::vector<std::string> names;
  for (const auto& [tid, name] : track_names(trace)) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"boot 2 phases", "boot 2 supervisor (tid 200)",
                                             "boot 2 supervisor (tid 200) states", "boot 2 container (tid 201)",
                                             "boot 2 container (tid 201) states", "boot 2 listener (tid 230)",
                                             "boot 2 listener (tid 230) states"}));
  // chrome://tracing orders the tracks by their sort index: as listed.
  std::vector<std::uint64_t> sort_indexes;
  for (const auto& event : events_with(trace, "M")) {
    if (event.at("name") == "thread_sort_index") sort_indexes.push_back(event.at("args").at("sort_index"));
  }
  EXPECT_TRUE(std::is_sorted(sort_indexes.begin(), sort_indexes.end()));
  for (const auto& event : trace.at("traceEvents")) EXPECT_EQ(event.at("pid"), 2) << event;
}

TEST(ChromeTraceLanes, StepsAreSlicesOnTheirProcessTrackToTheNs) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  std::vector<std::string> names;
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> durations;
  for (const auto& event : track_named(trace, "boot 2 container (tid 201)")) {
    if (event.at("ph") != "X") continue;
    names.push_back(event.at("name").get<std::string>());
    starts.push_back(ns_of(event.at("ts")));
    durations.push_back(ns_of(event.at("dur")));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"CONTAINER_START", "execve", "after last step"}));
  // From the earliest timestamp: phase 0 at ...000'500.
  EXPECT_EQ(starts, (std::vector<std::int64_t>{300'734, 500'737, 4'000'499}));
  EXPECT_EQ(durations, (std::vector<std::int64_t>{200'003, 3'499'762, 499'001}));
}

TEST(ChromeTraceLanes, StepsCarryTheirStatesAndTheirTimeOnThePaths) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  std::map<std::string, json> steps;
  for (const auto& event : track_named(trace, "boot 2 supervisor (tid 200)")) {
    if (event.at("ph") == "X") steps[event.at("name").get<std::string>()] = event;
  }
  ASSERT_EQ(steps.size(), 3U);
  const auto& end_setup = steps.at("END_SETUP");  // waited for the container, but for 99.766 µs of the path
  EXPECT_EQ(end_setup.at("cat"), "step,listen_path");
  EXPECT_EQ(end_setup.at("args"), (json{{"lane", "supervisor"},
                                        {"tid", 200},
                                        {"phase", 3},
                                        {"since_start_ns", 4'099'001},
                                        {"duration_ns", 3'798'767},
                                        {"cpu_ns", 1'000},
                                        {"run_queue_ns", 0},
                                        {"sleep_ns", 3'797'767},
                                        {"io_ns", 0},
                                        {"on_listen_path_ns", 99'766},
                                        {"on_execve_path_ns", 99'766}}));
  const auto& start_wait = steps.at("START_WAIT");  // off the paths
  EXPECT_EQ(start_wait.at("cat"), "step");
  EXPECT_EQ(start_wait.at("args").at("on_listen_path_ns"), 0);
}

TEST(ChromeTraceLanes, StatesAreConsecutiveSlicesInAFixedOrderThatSaysSo) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  std::vector<std::string> names;
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
  for (const auto& event : track_named(trace, "boot 2 container (tid 201) states")) {
    if (event.at("args").at("step") != "CONTAINER_START") continue;
    names.push_back(event.at("name").get<std::string>());
    starts.push_back(ns_of(event.at("ts")));
    ends.push_back(ns_of(event.at("ts")) + ns_of(event.at("dur")));
    EXPECT_EQ(event.at("cat"), "sched");
    EXPECT_NE(event.at("args").at("order").get<std::string>().find("not when"), std::string::npos) << event;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"CPU", "run queue", "sleep", "I/O"}));
  // They tile the step [300'734, 500'737] without gap: 100'000 + 3 + 50'000 + 50'000.
  EXPECT_EQ(starts, (std::vector<std::int64_t>{300'734, 400'734, 400'737, 450'737}));
  EXPECT_EQ(ends, (std::vector<std::int64_t>{400'734, 400'737, 450'737, 500'737}));
}

TEST(ChromeTraceLanes, AStateOfZeroHasNoSlice) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  std::vector<std::string> names;
  for (const auto& event : track_named(trace, "boot 2 container (tid 201) states")) {
    if (event.at("args").at("step") == "execve") names.push_back(event.at("name").get<std::string>());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"CPU"}));
}

TEST(ChromeTraceLanes, WakeupsAndForksOnThePathsAreFlowArrows) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  const auto names = track_names(trace);
  struct Arrow {
    std::string name;
    std::string from;
    std::string to;
    std::int64_t ts_ns = 0;
    bool operator==(const Arrow&) const = default;
  };
  std::map<std::uint64_t, Arrow> arrows;  // by flow id
  for (const auto& start : events_with(trace, "s")) {
    arrows[start.at("id").get<std::uint64_t>()] = {
        start.at("name").get<std::string>(), names.at(start.at("tid").get<std::uint64_t>()), "", ns_of(start.at("ts"))};
  }
  for (const auto& finish : events_with(trace, "f")) {
    auto& arrow = arrows.at(finish.at("id").get<std::uint64_t>());
    EXPECT_EQ(finish.at("name"), arrow.name);
    EXPECT_EQ(finish.at("bp"), "e");  // the wakee's waiting step, not its next one
    EXPECT_EQ(finish.at("cat"), "critical_path");
    EXPECT_EQ(ns_of(finish.at("ts")), arrow.ts_ns);
    arrow.to = names.at(finish.at("tid").get<std::uint64_t>());
  }
  // Both paths cross the wakeup: one arrow.
  std::vector<Arrow> found;
  for (const auto& [id, arrow] : arrows) found.push_back(arrow);
  EXPECT_EQ(found, (std::vector<Arrow>{
                       {"wakeup", "boot 2 supervisor (tid 200)", "boot 2 container (tid 201)", 400'500},
                       {"fork", "boot 2 container (tid 201)", "boot 2 listener (tid 230)", 4'499'500},
                   }));
}

TEST(ChromeTraceLanes, MilestonesCarryThePathAndItsNoiseFreeLength) {
  const auto trace = trace_of(lanes_boot(), lanes_analysis());
  std::map<std::string, json> milestones;
  for (const auto& event : events_with(trace, "i")) milestones[event.at("name").get<std::string>()] = event.at("args");
  // 50'000 + 500'000 ns of the path to listen waited for a CPU.
  EXPECT_EQ(milestones.at("listen"), (json{{"since_start_ns", 8'999'000},
                                           {"critical_path_ns", 8'999'000},
                                           {"critical_path_run_queue_ns", 550'000},
                                           {"noise_free_ns", 8'449'000}}));
  EXPECT_EQ(milestones.at("execve").at("noise_free_ns"), 3'949'999);
}

TEST(ChromeTraceLanes, WithoutReadingsNoStatesTrackAndNoNoiseFreeFigure) {
  auto analysis = lanes_analysis();
  analysis.forks_only = true;
  for (auto& step : analysis.steps) step.states.reset();
  for (auto* path : {&*analysis.to_execve, &*analysis.to_listen}) {
    for (auto& piece : path->pieces) piece.states.reset();
  }
  const auto trace = trace_of(lanes_boot(), analysis);
  for (const auto& [tid, name] : track_names(trace)) EXPECT_FALSE(name.ends_with(" states")) << name;
  for (const auto& event : events_with(trace, "X")) {
    if (event.at("cat") != "phase") {
      EXPECT_FALSE(event.at("args").contains("cpu_ns")) << event;
    }
  }
  for (const auto& event : events_with(trace, "i")) {
    EXPECT_TRUE(event.at("args").contains("critical_path_ns")) << event;
    EXPECT_FALSE(event.at("args").contains("noise_free_ns")) << event;
  }
}

// lanes_analysis() with the container's CONTAINER_START (200'003 ns) split
// into its syscalls and user time, as the kernel side sums them.
BootAnalysis analysis_with_syscalls() {
  auto analysis = lanes_analysis();
  analysis.steps.at(1).syscalls = StepSyscalls{
      .calls = {{.nr = SYS_fsync, .count = 2, .max_ns = 40'000, .states = {.cpu = 10'000, .io = 50'000}},
                {.nr = SYS_read, .count = 4, .max_ns = 30'000, .states = {.run_queue = 3, .sleep = 50'000}}},
      .user = {.cpu = 90'000}};
  return analysis;
}

std::vector<json> syscall_slices(const json& trace, const std::string& track_name) {
  std::vector<json> slices;
  for (const auto& event : track_named(trace, track_name)) {
    if (event.at("cat") == "syscall") slices.push_back(event);
  }
  return slices;
}

TEST(ChromeTraceSyscalls, AreTotalsNestedUnderTheirStepTheMostTimeFirstThenUserSpace) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  std::vector<std::string> names;
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
  for (const auto& slice : syscall_slices(trace, "boot 2 container (tid 201)")) {
    EXPECT_EQ(slice.at("ph"), "X");
    EXPECT_EQ(slice.at("args").at("step"), "CONTAINER_START");
    EXPECT_NE(slice.at("args").at("order").get<std::string>().find("not when"), std::string::npos) << slice;
    names.push_back(slice.at("name").get<std::string>());
    starts.push_back(ns_of(slice.at("ts")));
    ends.push_back(ns_of(slice.at("ts")) + ns_of(slice.at("dur")));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"fsync (total)", "read (total)", "user space (total)"}));
  // Inside the step [300'734, 500'737], tiling it: 60'000 + 50'003 + 90'000.
  EXPECT_EQ(starts, (std::vector<std::int64_t>{300'734, 360'734, 410'737}));
  EXPECT_EQ(ends, (std::vector<std::int64_t>{360'734, 410'737, 500'737}));
}

TEST(ChromeTraceSyscalls, CarryTheirCallsTotalLongestAndStates) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  const auto slices = syscall_slices(trace, "boot 2 container (tid 201)");
  ASSERT_EQ(slices.size(), 3U);
  auto args = slices[0].at("args");
  args.erase("order");
  EXPECT_EQ(args, (json{{"calls", 2},
                        {"max_ns", 40'000},
                        {"step", "CONTAINER_START"},
                        {"total_ns", 60'000},
                        {"cpu_ns", 10'000},
                        {"run_queue_ns", 0},
                        {"sleep_ns", 0},
                        {"io_ns", 50'000}}));
  EXPECT_FALSE(slices[2].at("args").contains("calls")) << "user time is no call: " << slices[2];
  EXPECT_EQ(slices[2].at("args").at("cpu_ns"), 90'000);
}

// Perfetto nests a slice under the one open on its track when it starts:
// the step comes first, even where its first syscall starts with it.
// The container's reads blocked at four places, the most time woken by
// the supervisor's pipe write; an fsync blocked where no stack was taken.
BootAnalysis analysis_with_blocking() {
  auto analysis = analysis_with_syscalls();
  const std::vector<std::string> pipe_read{"__schedule+0x628", "schedule+0x23", "anon_pipe_read+0x4fa",
                                           "vfs_read+0x397"};
  auto& blocking = analysis.steps.at(1).syscalls->blocking;
  blocking = {
      {.nr = SYS_read,
       .frames = pipe_read,
       .waker_tid = 200,
       .waker_lane = Lane::Supervisor,
       .waker_frames = {"try_to_wake_up+0x3b6", "anon_pipe_write+0x3ad"},
       .count = 2,
       .time_ns = 20'000},
      {.nr = SYS_fsync, .count = 1, .time_ns = 18'000},
      {.nr = SYS_read, .frames = {"schedule+0x23", "do_epoll_wait+0x1"}, .count = 1, .time_ns = 15'000},
      {.nr = SYS_read, .frames = {"schedule+0x23", "unix_stream_read_generic+0x2"}, .count = 1, .time_ns = 10'000},
      {.nr = SYS_read, .frames = {"schedule+0x23", "n_tty_read+0x3"}, .count = 1, .time_ns = 5'000}};
  return analysis;
}

// Selected in Perfetto, a syscall's slice says where the call blocked: its
// top three points (short form, time, count, waker and its role), the
// whole stacks of the top two; user space, which did not block, has none.
TEST(ChromeTraceSyscalls, CarryTheirTopBlockingPointsAndTheWakersRole) {
  const auto trace = trace_of(lanes_boot(), analysis_with_blocking());
  const auto slices = syscall_slices(trace, "boot 2 container (tid 201)");
  ASSERT_EQ(slices.size(), 3U);
  const auto& read = slices[1].at("args").at("blocking");
  ASSERT_EQ(read.size(), 3U) << "the top three points, not all four: " << read;
  EXPECT_EQ(read[0], (json{{"wait", "anon_pipe_read"},
                           {"time_ns", 20'000},
                           {"count", 2},
                           {"waker", {{"tid", 200}, {"role", "supervisor"}, {"waking", "anon_pipe_write"}}},
                           {"frames", {"__schedule+0x628", "schedule+0x23", "anon_pipe_read+0x4fa", "vfs_read+0x397"}},
                           {"waker_frames", {"try_to_wake_up+0x3b6", "anon_pipe_write+0x3ad"}}}));
  EXPECT_EQ(read[1].at("wait"), "do_epoll_wait");
  EXPECT_TRUE(read[1].at("waker").is_null()) << read[1];
  EXPECT_TRUE(read[1].contains("frames")) << read[1];
  EXPECT_EQ(read[2].at("wait"), "unix_stream_read_generic");
  EXPECT_FALSE(read[2].contains("frames")) << "only the top two carry their stacks: " << read[2];
  const auto& fsync = slices[0].at("args").at("blocking");
  ASSERT_EQ(fsync.size(), 1U);
  EXPECT_TRUE(fsync[0].at("wait").is_null()) << "no stack, no wait: " << fsync[0];
  EXPECT_EQ(fsync[0].at("time_ns"), 18'000);
  EXPECT_FALSE(slices[2].at("args").contains("blocking")) << slices[2];
}

// --kernel-profile at 999 Hz, sampling on only after the step began: the
// container's fsyncs were sampled at four stacks (one without frames), its
// user time once in user mode, 8 samples in all.
BootAnalysis analysis_with_kernel_cpu() {
  auto analysis = analysis_with_syscalls();
  const std::vector<std::string> flush{"blkdev_issue_flush+0x1", "ext4_sync_file+0x2", "do_fsync+0x3",
                                       "__x64_sys_fsync+0x4", "do_syscall_64+0x5"};
  analysis.steps.at(1).syscalls->kernel_cpu =
      StepKernelCpu{.hz = 999,
                    .partly_sampled = true,
                    .points = {{.nr = SYS_fsync, .frames = flush, .samples = 4},
                               {.nr = SYS_fsync, .frames = {"memset_orig+0x1", "ext4_sync_file+0x2"}, .samples = 1},
                               {.nr = SYS_fsync, .frames = {"jbd2_log_wait_commit+0x1"}, .samples = 1},
                               {.nr = kUserTime, .user_mode = true, .samples = 1},
                               {.nr = SYS_fsync, .samples = 1}}};
  return analysis;
}

// Selected in Perfetto, a syscall's slice says where its CPU went: its top
// three sample places with their samples and share of the step's, the
// whole stacks of the top two; the step's slice says what the shares are
// of: the frequency, the samples, and whether sampling began within it.
TEST(ChromeTraceSyscalls, CarryTheirTopKernelCpuPlacesAndTheStepItsFrequency) {
  const auto trace = trace_of(lanes_boot(), analysis_with_kernel_cpu());
  const auto slices = syscall_slices(trace, "boot 2 container (tid 201)");
  ASSERT_EQ(slices.size(), 3U);
  const auto& fsync = slices[0].at("args").at("kernel_cpu");
  ASSERT_EQ(fsync.size(), 3U) << "the top three places, not all four: " << fsync;
  EXPECT_EQ(fsync[0], (json{{"where", "blkdev_issue_flush"},
                            {"samples", 4},
                            {"share", 0.5},
                            {"frames",
                             {"blkdev_issue_flush+0x1", "ext4_sync_file+0x2", "do_fsync+0x3", "__x64_sys_fsync+0x4",
                              "do_syscall_64+0x5"}}}));
  EXPECT_EQ(fsync[1].at("where"), "ext4_sync_file") << "memset is generic code: " << fsync[1];
  EXPECT_EQ(fsync[1].at("share"), 0.125);
  EXPECT_TRUE(fsync[1].contains("frames")) << fsync[1];
  EXPECT_EQ(fsync[2].at("where"), "jbd2_log_wait_commit");
  EXPECT_FALSE(fsync[2].contains("frames")) << "only the top two carry their stacks: " << fsync[2];
  EXPECT_EQ(slices[2].at("args").at("kernel_cpu"),
            (json::array({{{"where", "user mode"}, {"samples", 1}, {"share", 0.125}}})));
  EXPECT_FALSE(slices[1].at("args").contains("kernel_cpu")) << "read has no samples: " << slices[1];
  for (const auto& event : track_named(trace, "boot 2 container (tid 201)")) {
    if (event.at("name") != "CONTAINER_START" || event.at("cat") == "syscall") continue;
    EXPECT_EQ(event.at("args").at("kernel_cpu"), (json{{"hz", 999}, {"samples", 8}, {"partly_sampled", true}}));
  }
}

TEST(ChromeTraceSyscalls, WithoutKernelProfileNoKernelCpuArgs) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  for (const auto& event : events_with(trace, "X")) {
    EXPECT_FALSE(event.at("args").contains("kernel_cpu")) << event;
  }
}

TEST(ChromeTraceSyscalls, FollowTheirStepInTheFile) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  const auto events = track_named(trace, "boot 2 container (tid 201)");
  const auto step = std::find_if(events.begin(), events.end(),
                                 [](const json& event) { return event.at("name") == "CONTAINER_START"; });
  const auto first_call =
      std::find_if(events.begin(), events.end(), [](const json& event) { return event.at("cat") == "syscall"; });
  ASSERT_NE(step, events.end());
  ASSERT_NE(first_call, events.end());
  EXPECT_LT(step - events.begin(), first_call - events.begin());
  EXPECT_EQ(ns_of(step->at("ts")), ns_of(first_call->at("ts")));
}

TEST(ChromeTraceSyscalls, AStepWithoutFiguresHasNone) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  EXPECT_TRUE(syscall_slices(trace, "boot 2 supervisor (tid 200)").empty());
  EXPECT_TRUE(syscall_slices(trace, "boot 2 container (tid 201) states").empty());
}

TEST(ChromeTraceLanes, TimesGrowAlongEachTrack) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  for (const auto& [tid, name] : track_names(trace)) {
    const auto events = track(trace, tid);
    ASSERT_FALSE(events.empty()) << name;
    for (std::size_t i = 1; i < events.size(); ++i) {
      EXPECT_LE(events[i - 1].at("ts").get<double>(), events[i].at("ts").get<double>()) << events[i];
    }
  }
}

// Perfetto reads "ts" and "dur" from the text as decimal µs: with at most
// three decimals, every ns arrives as written (a double times 1000 could be
// 1 ns short and break the tiling of a step's states).
TEST(ChromeTraceLanes, TimesAreWrittenAsExactMicroseconds) {
  std::ostringstream out;
  write_chrome_trace(std::vector{lanes_boot()}, std::vector{analysis_with_syscalls()}, out);
  const std::regex time(R"re("(ts|dur)":(-?[0-9.eE+-]+))re");
  std::size_t times = 0;
  const auto text = out.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), time); it != std::sregex_iterator(); ++it) {
    ++times;
    EXPECT_TRUE(std::regex_match((*it)[2].str(), std::regex(R"([0-9]+(\.[0-9]{1,3})?)"))) << (*it)[0];
  }
  EXPECT_GT(times, 30U);
}

// What Perfetto's and chrome://tracing's importers need of every event.
TEST(ChromeTraceLanes, EveryEventHasTheFieldsOfItsPhase) {
  const auto trace = trace_of(lanes_boot(), analysis_with_syscalls());
  for (const auto& event : trace.at("traceEvents")) {
    ASSERT_TRUE(event.at("name").is_string()) << event;
    ASSERT_TRUE(event.at("pid").is_number_unsigned()) << event;
    ASSERT_TRUE(event.at("tid").is_number_unsigned()) << event;
    const auto ph = event.at("ph").get<std::string>();
    if (ph == "M") {
      EXPECT_TRUE(event.at("args").is_object()) << event;
      continue;
    }
    EXPECT_TRUE(event.at("ts").is_number()) << event;
    EXPECT_TRUE(event.at("cat").is_string()) << event;
    if (ph == "X") {
      EXPECT_GE(event.at("dur").get<double>(), 0.0) << event;
    }
    if (ph == "s" || ph == "f") {
      EXPECT_TRUE(event.at("id").is_number_unsigned()) << event;
    }
    EXPECT_TRUE(ph == "X" || ph == "i" || ph == "s" || ph == "f") << event;
  }
}

}  // namespace
}  // namespace hacoboot
