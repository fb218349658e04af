#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "event_builders.hpp"
#include "model/boot.hpp"
#include "model/summary.hpp"

namespace hacoboot {
namespace {

using test::phase_since_start;

SampleStats stats_of(std::initializer_list<std::uint64_t> values) {
  SampleStats s;
  for (auto v : values) s.add(v);
  return s;
}

TEST(SampleStats, EmptyIsAllZero) {
  const SampleStats s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.avg(), 0u);
  EXPECT_EQ(s.min(), 0u);
  EXPECT_EQ(s.max(), 0u);
}

TEST(SampleStats, CountMinMax) {
  const auto s = stats_of({70, 10, 40});
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.count(), 3u);
  EXPECT_EQ(s.min(), 10u);
  EXPECT_EQ(s.max(), 70u);
  EXPECT_EQ(s.avg(), 40u);
}

TEST(SampleStats, AvgTruncatesLikeBpftrace) {
  EXPECT_EQ(stats_of({1, 2}).avg(), 1u);     // 1.5
  EXPECT_EQ(stats_of({2, 3, 3}).avg(), 2u);  // 2.67
  EXPECT_EQ(stats_of({5, 5, 6}).avg(), 5u);  // 5.33
  EXPECT_EQ(stats_of({0, 0, 1}).avg(), 0u);  // 0.33
  // The reference script's output in docs/outputs.md: three listens averaging 2240287035.
  EXPECT_EQ(stats_of({2100345924, 2359375184, 2261139999}).avg(), 2240287035u);  // 2240287035.67
}

TEST(SampleStats, SingleSample) {
  const auto s = stats_of({12345});
  EXPECT_EQ(s.avg(), 12345u);
  EXPECT_EQ(s.min(), 12345u);
  EXPECT_EQ(s.max(), 12345u);
}

TEST(SampleStats, SumOfHugeValuesDoesNotOverflow) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  const auto s = stats_of({kMax, kMax - 2});
  EXPECT_EQ(s.avg(), kMax - 1);
  EXPECT_EQ(s.min(), kMax - 2);
  EXPECT_EQ(s.max(), kMax);
}

TEST(SampleStats, StddevIsThePopulationOne) {
  EXPECT_EQ(stats_of({2, 4, 4, 4, 5, 5, 7, 9}).stddev(), 2u);
  EXPECT_EQ(stats_of({5}).stddev(), 0u);
  EXPECT_EQ(SampleStats{}.stddev(), 0u);
  EXPECT_EQ(stats_of({100, 200}).stddev(), 50u);
}

TEST(SampleStats, NearestRankPercentiles) {
  const auto s = stats_of({30, 10, 20, 50, 40});  // unsorted on purpose
  EXPECT_EQ(s.percentile(50), 30u);               // rank ceil(2.5) = 3
  EXPECT_EQ(s.percentile(90), 50u);               // rank ceil(4.5) = 5
  EXPECT_EQ(s.percentile(20), 10u);               // rank 1
  EXPECT_EQ(s.percentile(21), 20u);               // rank ceil(1.05) = 2
  EXPECT_EQ(s.percentile(100), 50u);
  EXPECT_TRUE(s.exact());
  EXPECT_EQ(SampleStats{}.percentile(50), 0u);
}

TEST(SampleStats, ManySamplesKeepExactCountsAndClosePercentiles) {
  SampleStats s;
  const std::uint64_t n = 3 * SampleStats::kExactSamples;
  for (std::uint64_t v = n; v >= 1; --v) s.add(v * 1'000);  // 1 us .. n ms, descending
  EXPECT_FALSE(s.exact()) << "past kExactSamples the samples go to a histogram";
  EXPECT_EQ(s.count(), n);
  EXPECT_EQ(s.min(), 1'000u);
  EXPECT_EQ(s.max(), n * 1'000);
  EXPECT_EQ(s.avg(), (n + 1) * 1'000 / 2);
  for (const double q : {50.0, 90.0, 99.0}) {
    const auto exact = static_cast<double>(static_cast<std::uint64_t>(q / 100.0 * static_cast<double>(n)) * 1'000);
    EXPECT_NEAR(static_cast<double>(s.percentile(q)), exact, exact * 0.004) << "p" << q;
  }
}

TEST(SampleStats, Log2SlotsLikeBpftraceHist) {
  const auto slots = stats_of({0, 1, 2, 3, 4, 1'000}).log2_counts();
  EXPECT_EQ(slots[0], 1u);   // 0
  EXPECT_EQ(slots[1], 1u);   // [1, 2)
  EXPECT_EQ(slots[2], 2u);   // [2, 4)
  EXPECT_EQ(slots[3], 1u);   // [4, 8)
  EXPECT_EQ(slots[10], 1u);  // [512, 1024)
  std::uint64_t total = 0;
  for (const auto c : slots) total += c;
  EXPECT_EQ(total, 6u);
}

// A boot started by phase 1, with the given milestones.
BootRecord boot_from(std::uint64_t start, std::optional<std::uint64_t> execve, std::optional<std::uint64_t> listen,
                     std::vector<PhaseMark> phases = {}) {
  BootRecord b;
  b.start_phase = 1;
  b.start_ns = start;
  b.execve_ns = execve;
  b.listen_ns = listen;
  b.phases = std::move(phases);
  return b;
}

TEST(Summary, EmptySummary) {
  const Summary s;
  EXPECT_EQ(s.boots().started, 0u);
  EXPECT_EQ(s.boots().unstarted, 0u);
  EXPECT_TRUE(s.execve().empty());
  EXPECT_TRUE(s.listen().empty());
  EXPECT_TRUE(s.steps().empty());
}

TEST(Summary, CountsBootsByWhatTheyReached) {
  Summary s;
  s.add(boot_from(1000, 5000, 9000));                  // complete
  s.add(boot_from(1000, 4000, 11000));                 // complete
  s.add(boot_from(1000, 6000, std::nullopt));          // no listen
  s.add(boot_from(1000, std::nullopt, std::nullopt));  // died before execve
  BootRecord unstarted;                                // tracing began mid-launch
  unstarted.execve_ns = 5000;
  unstarted.listen_ns = 9000;
  s.add(unstarted);

  const auto& b = s.boots();
  EXPECT_EQ(b.started, 4u);
  EXPECT_EQ(b.execve, 3u);
  EXPECT_EQ(b.listen, 2u);
  EXPECT_EQ(b.incomplete, 2u);
  EXPECT_EQ(b.unstarted, 1u);

  // Times since each boot's start; the unstarted boot is in no figure.
  EXPECT_EQ(s.execve().count(), 3u);
  EXPECT_EQ(s.execve().min(), 3000u);
  EXPECT_EQ(s.execve().max(), 5000u);
  EXPECT_EQ(s.execve().avg(), 4000u);
  EXPECT_EQ(s.listen().count(), 2u);
  EXPECT_EQ(s.listen().min(), 8000u);
  EXPECT_EQ(s.listen().max(), 10000u);
  EXPECT_EQ(s.listen().avg(), 9000u);
}

TEST(Summary, MilestoneBeforeTheStartIsNotCounted) {
  // --from CONTAINER_EXECING-like start: a listen before the start phase is
  // no "time since start".
  Summary s;
  s.add(boot_from(5000, 6000, 4000));
  EXPECT_EQ(s.boots().execve, 1u);
  EXPECT_EQ(s.boots().listen, 0u);
  EXPECT_EQ(s.boots().incomplete, 1u);
  EXPECT_TRUE(s.listen().empty());
}

TEST(Summary, PhasesSinceStartWithoutTheStartPhaseOrEarlierPhases) {
  Summary s;
  s.add(boot_from(1000, 5000, 9000, {{0, 400}, {1, 1000}, {2, 1300}, {11, 1500}}));
  s.add(boot_from(2000, 7000, 9000, {{0, 1500}, {1, 2000}, {2, 2100}, {11, 2900}}));

  EXPECT_EQ(phase_since_start(s, 0), nullptr) << "phase 0 is before the start";
  EXPECT_EQ(phase_since_start(s, 1), nullptr) << "the start phase is always 0 since itself";
  const auto* p2 = phase_since_start(s, 2);
  const auto* p11 = phase_since_start(s, 11);
  ASSERT_NE(p2, nullptr);
  ASSERT_NE(p11, nullptr);
  EXPECT_EQ(p2->count(), 2u);
  EXPECT_EQ(p2->min(), 100u);
  EXPECT_EQ(p2->max(), 300u);
  EXPECT_EQ(p2->avg(), 200u);
  EXPECT_EQ(p11->avg(), 700u);  // (500 + 900) / 2
  // Phases 2 and 11, execve and listen: nothing else.
  EXPECT_EQ(s.steps().size(), 4u);
}

TEST(Summary, StepsInBootOrderAreByMeanTimeSinceStart) {
  Summary s;
  s.add(boot_from(1000, 5000, 9000, {{1, 1000}, {31, 1100}, {2, 1300}, {11, 1500}}));
  std::vector<Step> order;
  for (const auto& [step, stats] : s.steps_in_boot_order()) order.push_back(step);
  EXPECT_EQ(order, (std::vector<Step>{{Step::Kind::Phase, 31},
                                      {Step::Kind::Phase, 2},
                                      {Step::Kind::Phase, 11},
                                      {Step::Kind::Execve, 0},
                                      {Step::Kind::Listen, 0}}));
}

TEST(Summary, StartPhaseOtherThanOneIsExcludedAndPhaseOneCounted) {
  // --from 0: the clock starts at the CLI's phase 0.
  BootRecord b = boot_from(400, 5000, 9000, {{0, 400}, {1, 1000}, {2, 1300}});
  b.start_phase = 0;
  Summary s;
  s.add(b);
  EXPECT_EQ(phase_since_start(s, 0), nullptr);
  ASSERT_NE(phase_since_start(s, 1), nullptr);
  EXPECT_EQ(phase_since_start(s, 1)->avg(), 600u);
  EXPECT_EQ(phase_since_start(s, 2)->avg(), 900u);
  EXPECT_EQ(s.execve().avg(), 4600u);
}

TEST(Summary, UnstartedBootAddsNoStep) {
  BootRecord b;
  b.phases = {{11, 100}, {12, 200}};
  b.execve_ns = 300;
  Summary s;
  s.add(b);
  EXPECT_EQ(s.boots().unstarted, 1u);
  EXPECT_EQ(s.boots().started, 0u);
  EXPECT_EQ(s.boots().incomplete, 0u);
  EXPECT_TRUE(s.steps().empty());
  EXPECT_TRUE(s.execve().empty());
}

}  // namespace
}  // namespace hacoboot
