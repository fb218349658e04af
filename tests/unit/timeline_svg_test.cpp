#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "report/timeline_svg.hpp"

#include "model/boot_analysis.hpp"
#include "model/critical_path.hpp"
#include "util/text.hpp"
#include "xml_checker.hpp"

namespace hacoboot {
namespace {

using test::XmlChecker;

std::size_t count(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The text of every tick label, upper and lower axis.
std::vector<std::string> tick_labels(const std::string& svg) {
  static const std::regex kTick(R"(<text class="tick"[^>]*>([^<]*)</text>)");
  std::vector<std::string> labels;
  for (std::sregex_iterator it(svg.begin(), svg.end(), kTick), end; it != end; ++it) labels.push_back((*it)[1]);
  return labels;
}

// A boot in the order Haconiwa runs one, scaled so that execve comes at
// `span_ns` * 0.7 and listen at `span_ns` after the start (phase 1). The
// supervisor is the hpid, the container hpid + 1 and listens itself.
BootRecord boot_spanning(std::uint64_t sequence, std::uint64_t span_ns) {
  constexpr std::uint64_t kStart = 5'000'000'000;
  BootRecord b;
  b.sequence = sequence;
  b.hpid = static_cast<std::uint32_t>(1000 + sequence);
  b.container_pid = b.hpid + 1;
  b.start_ns = kStart;
  const auto at = [&](std::uint64_t permille) { return kStart + span_ns * permille / 1000; };
  b.phases = {{0, kStart - span_ns / 20},
              {1, at(0)},
              {31, at(10)},
              {32, at(60)},
              {2, at(80)},
              {11, at(100)},
              {12, at(300)},
              {21, at(650)}};
  b.execve_ns = at(700);
  b.listen_ns = at(1000);
  b.start_tid = b.hpid;
  b.execve_tid = b.container_pid;
  b.listen_tid = b.container_pid;
  return b;
}

// A step's time split 4:2:1:1 into CPU, run queue, sleep and I/O.
SchedTotals split(std::uint64_t ns) {
  const std::uint64_t eighth = ns / 8;
  return {.cpu = ns - 4 * eighth, .run_queue = 2 * eighth, .sleep = eighth, .io = eighth};
}

LaneStep lane_step(Lane lane, std::uint32_t tid, std::optional<Step> step, std::uint64_t begin_ns,
                   std::uint64_t end_ns) {
  LaneStep s;
  s.lane = lane;
  s.step = step;
  s.tid = tid;
  s.begin_ns = begin_ns;
  s.end_ns = end_ns;
  s.states = split(end_ns - begin_ns);
  return s;
}

Step phase(std::int64_t number) {
  return {Step::Kind::Phase, number};
}

PathPiece piece(std::uint32_t tid, std::uint64_t begin_ns, std::uint64_t end_ns) {
  return {.tid = tid, .step = std::nullopt, .begin_ns = begin_ns, .end_ns = end_ns, .states = split(end_ns - begin_ns)};
}

// What analyse_boot makes of boot_spanning: the supervisor's steps until
// START_FORK, the container's from there to listen, and a path to listen
// through the fork (the supervisor until START_FORK, then the container).
BootAnalysis analysis_of(const BootRecord& b) {
  const auto ts = [&b](std::int64_t number) {
    return std::find_if(b.phases.begin(), b.phases.end(), [&](const PhaseMark& m) { return m.phase == number; })->ts_ns;
  };
  const auto sv = b.hpid;
  const auto ct = b.container_pid;
  BootAnalysis a;
  a.steps = {lane_step(Lane::Supervisor, sv, phase(31), ts(1), ts(31)),
             lane_step(Lane::Supervisor, sv, phase(32), ts(31), ts(32)),
             lane_step(Lane::Supervisor, sv, phase(2), ts(32), ts(2)),
             lane_step(Lane::Container, ct, phase(11), ts(2), ts(11)),
             lane_step(Lane::Container, ct, phase(12), ts(11), ts(12)),
             lane_step(Lane::Container, ct, phase(21), ts(12), ts(21)),
             lane_step(Lane::Container, ct, Step{Step::Kind::Execve}, ts(21), *b.execve_ns),
             lane_step(Lane::Container, ct, Step{Step::Kind::Listen}, *b.execve_ns, *b.listen_ns)};
  for (auto& step : a.steps) step.on_listen_path_ns = step.duration();
  a.to_listen = CriticalPath{{piece(sv, ts(1), ts(2)), piece(ct, ts(2), *b.listen_ns)}};
  return a;
}

std::string render(const std::vector<BootRecord>& boots, const BootAnalyser& analyse = analysis_of) {
  std::ostringstream out;
  write_timeline_svg(boots, out, {}, analyse);
  return out.str();
}

// The SVG of the step whose title starts with `title`: its <g class="step">.
std::string step_group(const std::string& svg, const std::string& title) {
  const auto at = svg.find("<title>" + title);
  if (at == std::string::npos) return {};
  const auto begin = svg.rfind("<g class=\"step\"", at);
  return svg.substr(begin, svg.find("</g>", at) - begin);
}

// The width of every state part of a step, by state.
std::map<std::string, double> part_widths(const std::string& step) {
  static const std::regex kPart(R"re(<rect class="state ([a-z-]+)" x="[^"]*" y="[^"]*" width="([^"]*)")re");
  std::map<std::string, double> widths;
  for (std::sregex_iterator it(step.begin(), step.end(), kPart), end; it != end; ++it) {
    widths[(*it)[1]] = std::stod((*it)[2]);
  }
  return widths;
}

TEST(XmlChecker, CatchesWhatItIsFor) {
  EXPECT_EQ(XmlChecker("<a><b/>x</a>").problem(), "");
  EXPECT_NE(XmlChecker("<a><b></a>").problem(), "");
  EXPECT_NE(XmlChecker("<a>").problem(), "");
  EXPECT_NE(XmlChecker("<a>&</a>").problem(), "");
  EXPECT_NE(XmlChecker("<a>x<y</a>").problem(), "");
  EXPECT_NE(XmlChecker(R"(<a t="<"/>)").problem(), "");
  EXPECT_NE(XmlChecker("<a/><b/>").problem(), "");
  EXPECT_EQ(XmlChecker("<a>" + xml_escape("<&> \"'") + "</a>").problem(), "");
}

TEST(TimelineSvg, IsWellFormedWithSizeAndBackground) {
  const auto svg = render({boot_spanning(1, 8'000'000), boot_spanning(2, 9'500'000)});
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_TRUE(std::regex_search(svg, std::regex(R"(<svg [^>]*width="\d+" height="\d+" viewBox="0 0 \d+ \d+")")));
  EXPECT_NE(svg.find(R"(fill="#ffffff")"), std::string::npos);
}

TEST(TimelineSvg, OneGroupPerStartedBootBySequence) {
  auto unstarted = boot_spanning(2, 8'000'000);
  unstarted.start_ns.reset();
  const auto svg = render({boot_spanning(3, 8'000'000), unstarted, boot_spanning(1, 7'000'000)});
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="boot")"), 2U);
  const auto first = svg.find(">boot 1 (hpid 1001)<");
  const auto third = svg.find(">boot 3 (hpid 1003)<");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(third, std::string::npos);
  EXPECT_LT(first, third);
  EXPECT_EQ(svg.find("boot 2 (hpid"), std::string::npos);
  EXPECT_NE(svg.find("1 boots not drawn: tracing began after their start."), std::string::npos);
}

TEST(TimelineSvg, OneLanePerProcessOfEachBootByRole) {
  // The second boot's server listens in a child of the container.
  auto forked_server = boot_spanning(2, 10'000'000);
  forked_server.listen_tid = 2000;
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    if (b.listen_tid != b.container_pid) {
      a.steps.back().lane = Lane::Listener;
      a.steps.back().tid = b.listen_tid;
    }
    return a;
  };
  const auto svg = render({boot_spanning(1, 10'000'000), forked_server}, analyse);
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="lane")"), 5U);
  const auto supervisor = svg.find(R"(<g class="lane" data-lane="supervisor" data-tid="1002">)");
  const auto container = svg.find(R"(<g class="lane" data-lane="container" data-tid="1003">)");
  const auto listener = svg.find(R"(<g class="lane" data-lane="listener" data-tid="2000">)");
  ASSERT_NE(supervisor, std::string::npos);
  ASSERT_NE(container, std::string::npos);
  ASSERT_NE(listener, std::string::npos);
  EXPECT_LT(supervisor, container);
  EXPECT_LT(container, listener);
  EXPECT_NE(svg.find(">listener 2000</text>"), std::string::npos);
  // Each lane holds its own process's steps: the supervisor 3, the container 5.
  EXPECT_EQ(count(svg.substr(0, svg.find(R"(<g class="lane" data-lane="container")")), R"(<g class="step")"), 3U);
  EXPECT_EQ(count(svg, R"(<g class="step")"), 16U);
}

TEST(TimelineSvg, StepBarIsSplitInTheRatioOfItsStates) {
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    // CONTAINER_EXECING, 3.5 ms: 2 ms CPU, 1 ms run queue, 0 sleep, 0.5 ms I/O.
    a.steps[5].states = SchedTotals{.cpu = 2'000'000, .run_queue = 1'000'000, .sleep = 0, .io = 500'000};
    return a;
  };
  const auto step = step_group(render({boot_spanning(1, 10'000'000)}, analyse), "CONTAINER_EXECING");
  ASSERT_FALSE(step.empty());
  const auto widths = part_widths(step);
  ASSERT_EQ(widths.size(), 3U) << step;  // no part for a state with no time
  // 3.5 of 10 ms: 350 px, of which 4/7 CPU, 2/7 run queue, 1/7 I/O.
  EXPECT_NEAR(widths.at("cpu"), 200, 0.05);
  EXPECT_NEAR(widths.at("run-queue"), 100, 0.05);
  EXPECT_NEAR(widths.at("io"), 50, 0.05);
}

TEST(TimelineSvg, StepWithoutStatesIsOneNeutralPart) {
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    a.forks_only = true;
    for (auto& step : a.steps) step.states.reset();
    return a;
  };
  const auto svg = render({boot_spanning(1, 10'000'000)}, analyse);
  EXPECT_EQ(count(svg, R"(<rect class="state unknown")"), 8U);
  EXPECT_EQ(count(svg, R"(<rect class="state cpu")"), 0U);
  EXPECT_NE(svg.find("; states not accounted;"), std::string::npos);
}

TEST(TimelineSvg, StepTitleHasNameOwnTimeStatesAndPathTime) {
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    a.steps[5].on_listen_path_ns = 1'500'000;
    a.steps[1].on_listen_path_ns = 0;
    return a;
  };
  const auto svg = render({boot_spanning(1, 10'000'000)}, analyse);
  EXPECT_NE(svg.find("<title>CONTAINER_EXECING (container 1002): 3.000 ms to 6.500 ms, own time "
                     "3.500 ms; CPU 1.750 ms, run queue 875.000 µs, sleep 437.500 µs, I/O 437.500 µs; on the path "
                     "to listen 1.500 ms</title>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<title>END_CREATE_NETWORK (supervisor 1001): 100.000 µs to 600.000 µs, own time 500.000 µs; "
                     "CPU 250.000 µs, run queue 125.000 µs, sleep 62.500 µs, I/O 62.500 µs; off the path to listen"
                     "</title>"),
            std::string::npos);
}

TEST(TimelineSvg, StepsOnThePathToListenAreOutlined) {
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    // The supervisor's steps waited off the path.
    for (std::size_t i = 0; i < 3; ++i) a.steps[i].on_listen_path_ns = 0;
    return a;
  };
  const auto svg = render({boot_spanning(1, 10'000'000)}, analyse);
  EXPECT_EQ(count(svg, R"(<g class="step" data-on-path="listen">)"), 5U);
  EXPECT_EQ(count(svg, R"(<rect class="on-path")"), 5U);
  EXPECT_EQ(step_group(svg, "END_CREATE_NETWORK").find("on-path"), std::string::npos);
  // A band beneath each piece of the path.
  EXPECT_EQ(count(svg, R"(<rect class="path")"), 2U);
}

TEST(TimelineSvg, ArrowWherePathPassesToAnotherProcess) {
  const auto fork_svg = render({boot_spanning(1, 10'000'000)});
  EXPECT_EQ(count(fork_svg, R"(<g class="arrow )"), 1U);
  EXPECT_NE(fork_svg.find(R"(<g class="arrow fork"><title>fork: supervisor 1001 forked container 1002 at 800.000 µs)"
                          "</title>"),
            std::string::npos);

  // The uid-map ping-pong: the container waits for the supervisor's maps,
  // the path goes through the supervisor until it wakes the container.
  auto ping_pong = boot_spanning(1, 10'000'000);
  const std::uint64_t woken = *ping_pong.start_ns + 2'500'000;
  ping_pong.wakeups = {{.ts_ns = woken,
                        .waker_tid = ping_pong.hpid,
                        .wakee_tid = ping_pong.container_pid,
                        .waker_totals = {},
                        .wakee_totals = {}}};
  const auto analyse = [woken](const BootRecord& b) {
    auto a = analysis_of(b);
    a.to_listen = CriticalPath{{piece(b.hpid, *b.start_ns, woken), piece(b.container_pid, woken, *b.listen_ns)}};
    return a;
  };
  const auto svg = render({ping_pong}, analyse);
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="arrow )"), 1U);
  EXPECT_NE(svg.find(R"(<g class="arrow wakeup"><title>wakeup: supervisor 1001 woke container 1002 at 2.500 ms)"
                     "</title>"),
            std::string::npos);
  // Down from the supervisor's lane to the top of the container's bar, at 2.5 ms.
  static const std::regex kArrow(
      R"re(<g class="arrow wakeup">.*\n<line x1="([0-9.]+)" y1="([0-9.]+)" x2="([0-9.]+)" y2="([0-9.]+)")re");
  std::smatch arrow;
  ASSERT_TRUE(std::regex_search(svg, arrow, kArrow));
  EXPECT_EQ(arrow[1], arrow[3]);
  EXPECT_LT(std::stod(arrow[2]), std::stod(arrow[4]));
}

TEST(TimelineSvg, SpanEndsAtTheLastListenAndClipsWhatFollows) {
  // After listen the supervisor waits 150 ms for the container to be
  // stopped, as Haconiwa's START_WAIT .. END_WAIT.
  auto boot = boot_spanning(1, 10'000'000);
  const auto listen = *boot.listen_ns;
  boot.phases.push_back({4, listen - 1'000'000});
  boot.phases.push_back({5, listen + 150'000'000});
  boot.container_exit_ns = listen + 149'000'000;
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    const auto start_wait = std::find_if(b.phases.begin(), b.phases.end(), [](const auto& m) { return m.phase == 4; });
    if (start_wait == b.phases.end()) return a;
    const auto start_fork = a.steps[2].end_ns;
    a.steps.insert(a.steps.begin() + 3, lane_step(Lane::Supervisor, b.hpid, phase(4), start_fork, start_wait->ts_ns));
    a.steps.push_back(lane_step(Lane::Supervisor, b.hpid, phase(5), start_wait->ts_ns, b.phases.back().ts_ns));
    return a;
  };
  const auto svg = render({boot, boot_spanning(2, 12'000'000)}, analyse);
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  // The span is the boots' own: from the start to the later listen, 12 ms.
  const auto labels = tick_labels(svg);
  EXPECT_EQ(labels.front(), "0 ms");
  EXPECT_EQ(labels[labels.size() / 2 - 1], "12 ms");
  // END_WAIT's bar is cut at the edge; the lanes say how long they go on.
  EXPECT_EQ(count(step_group(svg, "END_WAIT"), R"(<path class="torn")"), 1U);
  EXPECT_NE(svg.find(R"(<g class="clipped"><title>supervisor 1001 goes on 148.000 ms past the span drawn, until )"
                     R"(END_WAIT</title>)"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">… +148.000 ms</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>container 1002 goes on 147.000 ms past the span drawn, until its exit</title>"),
            std::string::npos);
  // The boot that ends at the span's end is not clipped.
  EXPECT_EQ(count(svg, R"(<g class="clipped">)"), 2U);
}

TEST(TimelineSvg, StepFromBeforeTheStartIsCutAtZero) {
  const auto analyse = [](const BootRecord& b) {
    auto a = analysis_of(b);
    a.steps.front().begin_ns = *b.start_ns - 2'000'000;  // the supervisor's time in the CLI
    return a;
  };
  const auto svg = render({boot_spanning(1, 10'000'000)}, analyse);
  const auto step = step_group(svg, "START_CREATE_NETWORK");
  EXPECT_NE(step.find("(supervisor 1001): -2.000 ms to 100.000 µs, own time 2.100 ms"), std::string::npos) << step;
  EXPECT_EQ(count(step, R"(<path class="torn")"), 1U);
  // The axis still starts at the boot's start.
  EXPECT_EQ(tick_labels(svg).front(), "0 ms");
}

TEST(TimelineSvg, NoiseFreeFigureUnderTheBootLabel) {
  // The path's pieces are a quarter run queue: 10 ms to listen, 7.5 ms noise-free.
  const auto svg = render({boot_spanning(1, 10'000'000)});
  EXPECT_NE(svg.find(">noise-free 7.500 ms</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>critical path to listen 10.000 ms: CPU 5.000 ms, run queue 2.500 ms, sleep 1.250 ms, "
                     "I/O 1.250 ms; without its run-queue time 7.500 ms</title>"),
            std::string::npos);

  const auto forks_only = render({boot_spanning(1, 10'000'000)}, [](const BootRecord& b) {
    auto a = analysis_of(b);
    a.forks_only = true;
    return a;
  });
  EXPECT_EQ(forks_only.find("noise-free"), std::string::npos);
}

TEST(TimelineSvg, MarksExecveAndListenOnTheLanesThatPassedThem) {
  auto no_listen = boot_spanning(2, 10'000'000);
  no_listen.listen_ns.reset();
  const auto svg = render({boot_spanning(1, 10'000'000), no_listen});
  EXPECT_EQ(count(svg, R"(<g class="execve">)"), 2U);
  EXPECT_EQ(count(svg, R"(<g class="listen">)"), 1U);
  EXPECT_NE(svg.find("<title>execve at 7.000 ms</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>listen at 10.000 ms</title>"), std::string::npos);
  // On the container's lane, the second of the boot's rows (22 px each).
  static const std::regex kExecveLine(R"re(<g class="execve">.*\n<line [^>]*y1="([0-9.]+)")re");
  std::smatch line;
  ASSERT_TRUE(std::regex_search(svg, line, kExecveLine));
  EXPECT_EQ(std::stod(line[1]), 112 + 22 + 1);
}

TEST(TimelineSvg, BootWithoutStepsKeepsItsRowAndMarkers) {
  const auto svg = render({boot_spanning(1, 10'000'000)}, [](const BootRecord&) { return BootAnalysis{}; });
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_NE(svg.find(">boot 1 (hpid 1001)<"), std::string::npos);
  EXPECT_EQ(count(svg, R"(<g class="lane")"), 0U);
  EXPECT_EQ(count(svg, R"(<g class="listen">)"), 1U);
}

TEST(TimelineSvg, LabelsOnlyBarsWideEnough) {
  const auto svg = render({boot_spanning(1, 10'000'000)});
  // 3.5 of 10 ms: a third of the plot.
  EXPECT_NE(svg.find(">CONTAINER_EXECING</text>"), std::string::npos);
  // 0.2 of 10 ms: 20 px, too narrow for its name.
  EXPECT_EQ(svg.find(">START_FORK</text>"), std::string::npos);
}

TEST(TimelineSvg, AxisUnitFollowsTheRange) {
  struct Case {
    std::uint64_t span_ns;
    std::string unit;
  };
  const std::array<Case, 3> cases{{{300'000, " µs"}, {8'000'000, " ms"}, {3'000'000'000, " s"}}};
  for (const auto& c : cases) {
    const auto labels = tick_labels(render({boot_spanning(1, c.span_ns)}));
    ASSERT_GE(labels.size(), 8U) << c.unit;
    for (const auto& label : labels) EXPECT_TRUE(label.ends_with(c.unit)) << label;
  }
  const auto labels = tick_labels(render({boot_spanning(1, 8'000'000)}));
  EXPECT_NE(std::find(labels.begin(), labels.end(), "0 ms"), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "8 ms"), labels.end());
}

TEST(TimelineSvg, CapsBootsWithANote) {
  std::vector<BootRecord> boots;
  for (std::uint64_t i = 1; i <= kTimelineMaxBoots + 3; ++i) boots.push_back(boot_spanning(i, 5'000'000));
  const auto svg = render(boots);
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="boot")"), kTimelineMaxBoots);
  EXPECT_NE(svg.find("3 more boots not drawn (at most 500 are, by sequence)."), std::string::npos);
  EXPECT_EQ(svg.find(">boot 501 (hpid"), std::string::npos);
}

TEST(TimelineSvg, NothingToDrawIsStillAPicture) {
  const auto svg = render({});
  EXPECT_EQ(XmlChecker(svg).problem(), "");
  EXPECT_EQ(count(svg, R"(<g class="boot")"), 0U);
  EXPECT_NE(svg.find("No boot with a start to draw."), std::string::npos);
}

}  // namespace
}  // namespace hacoboot
