// Bad usage or input: exit status 2 and one line on stderr naming the problem.
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
                      UsageCase{"UnwritableOutput", {"-o", "/nonexistent-dir/out.json"}, "/nonexistent-dir/out.json"}),
    [](const ::testing::TestParamInfo<UsageCase>& test) { return test.param.name; });

}  // namespace
}  // namespace hacoboot::it
