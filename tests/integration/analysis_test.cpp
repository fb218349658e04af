// What a user reads after a live run that a recording cannot stand for: the
// --timeline SVG rendered by a real browser, the --stacks of a run's real
// syscalls, and the gate's files of a run whose --run command or output fails. What the outputs and the gate say of
// given boots is the replay tier's (tests/unit/replay_outputs_test.cpp).
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

constexpr std::uint64_t kBoots = 4;

// ---- small helpers ---------------------------------------------------------

std::string describe(const ProcessResult& r) {
  return r.status.describe() + "\n--- stderr ---\n" + r.err + "--- stdout ---\n" + r.out;
}

void expect_exit(const ProcessResult& r, int code) {
  EXPECT_TRUE(r.status.exited && r.status.code == code) << "expected exit status " << code << ", got " << describe(r);
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// ---- PNG ---------------------------------------------------------------------

struct PngImage {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uintmax_t bytes = 0;
};

// The size of a PNG from its signature and IHDR chunk; fails the test and
// returns nullopt when the file is not a PNG.
std::optional<PngImage> read_png(const std::filesystem::path& path) {
  constexpr std::string_view kSignature("\x89PNG\r\n\x1a\n", 8);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    ADD_FAILURE() << "no image at " << path;
    return std::nullopt;
  }
  const auto data = read_file(path);
  if (data.size() < 24 || data.compare(0, kSignature.size(), kSignature) != 0 || data.compare(12, 4, "IHDR") != 0) {
    ADD_FAILURE() << path << " is not a PNG (signature, then IHDR)";
    return std::nullopt;
  }
  const auto big_endian = [&data](std::size_t offset) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<unsigned char>(data[offset + i]);
    return value;
  };
  return PngImage{big_endian(16), big_endian(20), data.size()};
}

// ---- the fixture -----------------------------------------------------------

class AnalysisTest : public IntegrationTest {
 protected:
  // hacoboot-sampler ARGS --run "<launcher> -n BOOTS LAUNCHER_ARGS -- <app>" <app>
  ProcessResult run_boots(std::uint64_t boots, std::vector<std::string> args,
                          const std::vector<std::string>& launcher_args = {}) {
    std::vector<std::string> launcher{"-n", std::to_string(boots)};
    launcher.insert(launcher.end(), launcher_args.begin(), launcher_args.end());
    args.insert(args.end(), {"--run", launcher_command(launcher), app().string()});
    return run_sampler(args);
  }

  // trace_boots (JSON summary, --events TSV) over `boots` boots with more sampler arguments.
  TracedBoots trace_with(std::uint64_t boots, const std::vector<std::string>& sampler_args) {
    return trace_boots({"-n", std::to_string(boots)}, {}, sampler_args);
  }

  // Chromium's headless screenshot of the page at `path`, 1400x900, with a
  // fresh profile; the PNG's path.
  std::filesystem::path screenshot(const std::filesystem::path& chromium, const std::filesystem::path& page) {
    const auto png = new_file(page.stem().string() + ".png");
    const auto profile = new_file("chromium-profile");
    const auto r = run_process({chromium.string(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                                "--disable-sync", "--user-data-dir=" + profile.string(), "--screenshot=" + png.string(),
                                "--window-size=1400,900", "file://" + page.string()},
                               dir());
    expect_exit(r, 0);
    return png;
  }
};

// ---- --timeline -------------------------------------------------------------

TEST_F(AnalysisTest, TimelineRendersInABrowser) {
  const auto chromium = find_in_path("chromium");
  if (!chromium) {
    if (bpf_required()) FAIL() << "chromium is not in PATH (HACOBOOT_REQUIRE_BPF=1: CI installs it, scripts/setup.sh)";
    GTEST_SKIP() << "chromium is not in PATH: install the Debian package chromium (scripts/setup.sh)";
  }
  const auto svg_path = new_file("timeline.svg");
  trace_with(kBoots, {"--timeline", svg_path.string()});
  ASSERT_FALSE(HasFailure());
  // What a white page weighs, to tell a drawing from a blank screenshot.
  const auto empty_path = new_file("empty.svg");
  write_file(empty_path,
             "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>\n");

  const auto blank = read_png(screenshot(*chromium, empty_path));
  const auto drawn = read_png(screenshot(*chromium, svg_path));
  ASSERT_TRUE(blank && drawn);
  for (const auto& image : {*blank, *drawn}) {
    EXPECT_EQ(image.width, 1400U);
    EXPECT_EQ(image.height, 900U);
  }
  // A blank 1400x900 page compresses to a few KB; the waterfall's bars,
  // markers and text take several times that.
  EXPECT_GT(drawn->bytes, 3 * blank->bytes) << "the timeline renders blank (blank page: " << blank->bytes << " bytes)";
}

// ---- --stacks ---------------------------------------------------------------

// A folded line's stack and value.
struct FoldedLine {
  std::string stack;
  std::uint64_t value = 0;
};

std::vector<FoldedLine> folded_lines(const std::string& folded) {
  std::vector<FoldedLine> lines;
  for (const auto& line : split_lines(folded)) {
    const auto value_at = line.rfind(' ');
    if (value_at == std::string::npos) {
      ADD_FAILURE() << "not a folded stack: " << line;
      continue;
    }
    lines.push_back({line.substr(0, value_at), std::stoull(line.substr(value_at + 1))});
  }
  return lines;
}

// The first `frames` frames of a stack.
std::string stack_head(const std::string& stack, int frames) {
  std::size_t end = 0;
  for (int i = 0; i < frames; ++i) {
    end = stack.find(';', i == 0 ? 0 : end + 1);
    if (end == std::string::npos) return stack;
  }
  return stack.substr(0, end);
}

// boot;lane;step of each folded line (its syscall and the frames below
// dropped) -> its ns summed.
std::map<std::string, std::uint64_t> stacks_by_step(const std::string& folded) {
  std::map<std::string, std::uint64_t> by_step;
  for (const auto& line : folded_lines(folded)) by_step[stack_head(line.stack, 3)] += line.value;
  return by_step;
}

// The same key for each step slice of --trace-out that has scheduler states
// (and so syscall figures) -> its duration_ns summed.
std::map<std::string, std::uint64_t> trace_steps(const nlohmann::json& trace) {
  std::map<std::string, std::uint64_t> by_step;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") != "X" || !event.at("cat").get<std::string>().starts_with("step")) continue;
    const auto& args = event.at("args");
    if (!args.contains("cpu_ns")) continue;
    const auto name = event.at("name").get<std::string>();
    const auto step = args.contains("phase") ? fmt::format("{:02} {}", args.at("phase").get<int>(), name) : name;
    by_step[fmt::format("boot-{};{};{}", event.at("pid").get<std::uint64_t>(), args.at("lane").get<std::string>(),
                        step)] += args.at("duration_ns").get<std::uint64_t>();
  }
  return by_step;
}

// The folded stacks of a live run with known work before phases: each
// step's lines add up to that step's time in the trace of the same run
// (its blocked lines included), the sleep is clock_nanosleep under its
// step, most of its 5 ms blocked below it down to do_nanosleep, and the
// user time a leaf of its own.
TEST_F(AnalysisTest, StacksAddUpToTheStepsTimeOfEveryBoot) {
  const auto stacks = new_file("boots.folded");
  const auto trace = new_file("boots.json");
  expect_exit(run_boots(3, {"--stacks", stacks.string(), "--trace-out", trace.string(), "-q"},
                        {"--sleep", "13:5", "--burn", "2:2"}),
              0);
  ASSERT_FALSE(HasFailure());
  const auto folded = read_file(stacks);
  const auto by_step = stacks_by_step(folded);
  EXPECT_EQ(by_step, trace_steps(nlohmann::json::parse(read_file(trace))));
  for (std::uint64_t boot = 1; boot <= 3; ++boot) {
    const auto sleep = fmt::format("boot-{};container;13 CONTAINER_FILESYSTEM_SETUP;clock_nanosleep", boot);
    EXPECT_TRUE(contains(folded, sleep + " ")) << sleep << " in:\n" << folded;
    EXPECT_TRUE(contains(folded, fmt::format("boot-{};supervisor;02 START_FORK;[user] ", boot))) << folded;
    std::uint64_t blocked_ns = 0;
    for (const auto& line : folded_lines(folded)) {
      if (!line.stack.starts_with(sleep + ";[blocked]")) continue;
      // Raw addresses where kptr_restrict hides the symbols.
      EXPECT_TRUE(line.stack.ends_with(";do_nanosleep") || contains(line.stack, ";0x")) << line.stack;
      blocked_ns += line.value;
    }
    EXPECT_GE(blocked_ns, 4'000'000U) << "the 5 ms sleep of boot " << boot << " is not blocked below it:\n" << folded;
  }
}

// ---- --baseline -------------------------------------------------------------

// The gate's files of a traced run: its verdict, or, when the --run command
// failed, that there is none: an earlier run's file never stays in place.
TEST_F(AnalysisTest, GateFilesSayTheVerdictOrThatAFailedRunHasNone) {
  const auto baseline = new_file("base.json");
  expect_exit(run_boots(3, {"-f", "json", "-o", baseline.string(), "-q"}), 0);
  ASSERT_FALSE(HasFailure());
  const auto junit = new_file("gate.xml");
  const auto markdown = new_file("gate.md");
  const std::vector<std::string> gate{"--baseline",
                                      baseline.string(),
                                      "--gate-junit",
                                      junit.string(),
                                      "--gate-markdown",
                                      markdown.string(),
                                      "--max-regression",
                                      "1000",
                                      "-q"};
  expect_exit(run_boots(3, gate), 0);
  EXPECT_TRUE(contains(read_file(junit), R"(<property name="outcome" value="passed"/>)")) << read_file(junit);
  EXPECT_TRUE(contains(read_file(junit), R"(name="listen"/>)")) << read_file(junit);
  EXPECT_TRUE(read_file(markdown).starts_with("### Boot time against the baseline: passed\n")) << read_file(markdown);

  auto failed = gate;
  failed.insert(failed.end(), {"--run", "exit 7", app().string()});
  expect_exit(run_sampler(failed), 4);
  EXPECT_TRUE(contains(read_file(junit), R"(<error type="not judged" message="--run command exited 7)"))
      << read_file(junit);
  EXPECT_TRUE(read_file(markdown).starts_with("### Boot time against the baseline: not judged\n"))
      << read_file(markdown);

  // A run that fails after tracing (its summary cannot be written) is no
  // verdict either: an earlier "passed" must not stay for CI to read.
  expect_exit(run_boots(3, gate), 0);
  ASSERT_TRUE(contains(read_file(junit), R"(<property name="outcome" value="passed"/>)")) << read_file(junit);
  auto unwritable = gate;
  unwritable.insert(unwritable.end(), {"-o", "/dev/full"});
  expect_exit(run_boots(3, unwritable), 1);
  EXPECT_TRUE(contains(read_file(junit), R"(<error type="not judged" message="the run failed: )")) << read_file(junit);
  EXPECT_FALSE(contains(read_file(junit), R"(value="passed")")) << read_file(junit);
  EXPECT_TRUE(read_file(markdown).starts_with("### Boot time against the baseline: not judged\n"))
      << read_file(markdown);
}

TEST_F(AnalysisTest, MalformedBaselineExitsWith2NamingTheFile) {
  const std::array<std::pair<const char*, const char*>, 2> cases{{
      {"not-json.json", "Boots: 20 started\n"},
      {"schema-99.json", R"({"schema": 99, "metrics": {}, "phases": []})"},
  }};
  for (const auto& [stem, content] : cases) {
    SCOPED_TRACE(stem);
    const auto path = new_file(stem);
    write_file(path, content);
    const auto r = run_sampler({"--baseline", path.string(), "--run", "true"});
    expect_exit(r, 2);
    EXPECT_EQ(split_lines(r.err).size(), 1U) << "stderr: " << r.err;
    EXPECT_TRUE(contains(r.err, path.string())) << "stderr should name " << path << ": " << r.err;
  }
}

}  // namespace
}  // namespace hacoboot::it
