// What every command that writes to standard output does when that output
// is lost: a pipe whose reader has quit (`| true`) and a full device
// (/dev/full) are write errors, reported with status 1, never a death by
// SIGPIPE (141) nor a silent success.
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "temp_dir.hpp"

namespace hacoboot {
namespace {

struct Command {
  const char* name;
  std::vector<std::string> args;
};

void PrintTo(const Command& command, std::ostream* os) {
  *os << command.name;
}

class StdoutTest : public ::testing::TestWithParam<Command> {
 protected:
  // The golden summary, with this tool's version: what `compare` accepts.
  std::string summary() {
    auto text = it::read_file(test::golden_dir() / "summary.json");
    const std::string placeholder = R"("version": "V")";
    text.replace(text.find(placeholder), placeholder.size(), R"("version": ")" HACOBOOT_EXPECTED_VERSION "\"");
    const auto path = dir_.path() / "summary.json";
    it::write_file(path, text);
    return path.string();
  }

  std::vector<std::string> argv() {
    std::vector<std::string> all{test::sampler().string()};
    for (const auto& arg : GetParam().args) {
      all.push_back(arg == "{launcher}" ? test::launcher().string() : arg == "{summary}" ? summary() : arg);
    }
    return all;
  }

  static void expect_write_error(const it::ExitStatus& status, const std::string& err) {
    EXPECT_TRUE(status.exited && status.code == 1) << status.describe() << ", expected exit 1\nstderr:\n" << err;
    EXPECT_NE(err.find("hacoboot-sampler: error: writing"), std::string::npos) << "not told:\n" << err;
  }

  test::TempDir dir_;
};

TEST_P(StdoutTest, IntoAPipeNoOneReadsExits1) {
  it::Process tool(argv(), dir_.path(), it::StdoutTo::ClosedPipe);
  const auto status = tool.wait_or_kill(std::chrono::seconds(30));
  expect_write_error(status, tool.err());
}

TEST_P(StdoutTest, IntoAFullDeviceExits1) {
  std::vector<std::string> shell{"/bin/sh", "-c", R"(exec "$@" > /dev/full)", "sh"};
  const auto tool = argv();
  shell.insert(shell.end(), tool.begin(), tool.end());
  const auto r = it::run_process(shell, dir_.path(), std::chrono::seconds(30));
  expect_write_error(r.status, r.err);
}

INSTANTIATE_TEST_SUITE_P(Commands, StdoutTest,
                         ::testing::Values(Command{"Version", {"--version"}}, Command{"Help", {"--help"}},
                                           Command{"CompareHelp", {"compare", "--help"}},
                                           Command{"List", {"--list", "--haconiwa", "{launcher}"}},
                                           Command{"Check", {"--check", "--haconiwa", "{launcher}"}},
                                           Command{"Compare", {"compare", "{summary}", "{summary}"}}),
                         [](const ::testing::TestParamInfo<Command>& command) {
                           return std::string(command.param.name);
                         });

}  // namespace
}  // namespace hacoboot
