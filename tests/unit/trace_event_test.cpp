#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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

json trace_of(const std::vector<BootRecord>& boots) {
  std::ostringstream out;
  write_chrome_trace(boots, out);
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

TEST(ChromeTrace, NamesOneTrackPerBoot) {
  const auto trace = trace_of({sample_boot(), overlapping_boot()});
  std::map<std::uint64_t, std::string> names;
  for (const auto& event : events_with(trace, "M")) {
    if (event.at("name") == "thread_name") names[event.at("tid")] = event.at("args").at("name");
  }
  EXPECT_EQ(names, (std::map<std::uint64_t, std::string>{{1, "boot 1 hpid 100"}, {2, "boot 2 hpid 200"}}));
  for (const auto& event : trace.at("traceEvents")) EXPECT_EQ(event.at("pid"), 1);
}

TEST(ChromeTrace, TimesGrowAlongEachTrack) {
  const auto trace = trace_of({sample_boot(), overlapping_boot()});
  for (const std::uint64_t tid : {1U, 2U}) {
    const auto events = track(trace, tid);
    ASSERT_FALSE(events.empty());
    for (std::size_t i = 1; i < events.size(); ++i) {
      EXPECT_LE(events[i - 1].at("ts").get<double>(), events[i].at("ts").get<double>()) << events[i];
    }
  }
}

TEST(ChromeTrace, PhasesLastUntilTheNextPhaseToTheNs) {
  const auto trace = trace_of({sample_boot(), overlapping_boot()});
  std::vector<std::int64_t> durations;
  std::vector<std::int64_t> starts;
  for (const auto& event : track(trace, 2)) {
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

}  // namespace
}  // namespace hacoboot
