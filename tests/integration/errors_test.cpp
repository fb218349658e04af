// Bad usage or input: exit status 2 and one line on stderr naming the problem.
// With -q: nothing else on stderr, errors still.
#include <fstream>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

struct UsageCase {
  std::string name;
  std::vector<std::string> args;  // {dir} is replaced by the test's directory
  std::string expected_in_stderr;
};

void PrintTo(const UsageCase& c, std::ostream* os) {
  *os << c.name;
}

class UsageErrorTest : public IntegrationTest, public ::testing::WithParamInterface<UsageCase> {};

std::string expand(std::string text, const std::filesystem::path& dir) {
  const std::string key = "{dir}";
  for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key)) text.replace(pos, key.size(), dir);
  return text;
}

TEST_P(UsageErrorTest, ExitsWith2AndOneLineNamingTheProblem) {
  {
    std::ofstream text(dir() / "not-elf.txt");
    text << "#!/bin/sh\necho this is a text file\n";
  }
  std::vector<std::string> argv{sampler().string()};
  bool has_haconiwa = false;
  for (const auto& arg : GetParam().args) {
    argv.push_back(expand(arg, dir()));
    has_haconiwa = has_haconiwa || arg == "--haconiwa";
  }
  // Everything but the problem under test is valid.
  if (!has_haconiwa) argv.insert(argv.begin() + 1, {"--haconiwa", launcher().string()});
  argv.insert(argv.end(), {"--run", "true"});

  const auto r = run_process(argv, dir(), 60s);
  EXPECT_TRUE(r.status.exited && r.status.code == 2) << r.status.describe() << "\nstderr: " << r.err;
  const auto lines = split_lines(r.err);
  EXPECT_EQ(lines.size(), 1U) << "stderr: " << r.err;
  EXPECT_NE(r.err.find(expand(GetParam().expected_in_stderr, dir())), std::string::npos)
      << "stderr should name '" << expand(GetParam().expected_in_stderr, dir()) << "': " << r.err;
  EXPECT_TRUE(r.out.empty()) << "stdout: " << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, UsageErrorTest,
    ::testing::Values(UsageCase{"HaconiwaMissing", {"--haconiwa", "/nonexistent"}, "/nonexistent"},
                      UsageCase{"HaconiwaIsADirectory", {"--haconiwa", "/tmp"}, "/tmp"},
                      UsageCase{"HaconiwaIsATextFile", {"--haconiwa", "{dir}/not-elf.txt"}, "not an ELF"},
                      UsageCase{
                          "HaconiwaWithoutTheProbe", {"--haconiwa", "/bin/true"}, "haconiwa:bootstrap_phase_pass"},
                      UsageCase{"UnknownFormat", {"--format", "xml"}, "xml"},
                      UsageCase{"ZeroCount", {"-n", "0"}, "count"},
                      UsageCase{"BadDuration", {"--duration", "5x"}, "5x"},
                      UsageCase{"UnknownStartPhase", {"--from", "NOPE"}, "NOPE"},
                      UsageCase{"UnwritableOutput", {"-o", "/nonexistent-dir/out.json"}, "/nonexistent-dir/out.json"},
                      UsageCase{"QuietStillReportsTheError", {"-q", "--haconiwa", "/nonexistent"}, "/nonexistent"}),
    [](const ::testing::TestParamInfo<UsageCase>& test) { return test.param.name; });

using QuietTest = IntegrationTest;

TEST_F(QuietTest, RunCommandLeavesStderrEmptyAndTheSummaryAsIs) {
  const auto r = run_sampler({"-q", "--format", "json", "--run", launcher_command({"-n", "1"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  EXPECT_TRUE(r.err.empty()) << "stderr: " << r.err;
  nlohmann::json summary;
  ASSERT_NO_THROW(summary = nlohmann::json::parse(r.out)) << "no summary: " << r.out;
  expect_boot_counts(summary, 1, 1, 1, 0);
}

// Neither "Tracing ... Hit Ctrl-C to end." (no --run) nor "Serving Prometheus
// metrics at ..." (--serve).
TEST_F(QuietTest, NoBannerAndNoServingLine) {
  const auto r = run_sampler({"-q", "--serve", "127.0.0.1:0", "--duration", "1s", "--format", "json", app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  EXPECT_TRUE(r.err.empty()) << "stderr: " << r.err;
  nlohmann::json summary;
  ASSERT_NO_THROW(summary = nlohmann::json::parse(r.out)) << "no summary: " << r.out;
  expect_boot_counts(summary, 0, 0, 0, 0);
}

}  // namespace
}  // namespace hacoboot::it
