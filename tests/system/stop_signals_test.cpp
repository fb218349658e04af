// A second stop signal ends the tool at once, with _exit: no destructor runs,
// yet an output it was writing must not stay as a temporary file beside the
// file it was to replace.
#include "cli/stop_signals.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StopSignals, ASecondSignalLeavesNoTemporaryFileBehind) {
  const test::TempDir dir;
  const auto written = dir.path() / "summary.txt";
  const auto pending = dir.path() / "trace.json";
  { std::ofstream(pending) << "the previous trace\n"; }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const StopSignals signals;
    ReplacementFile done(written.string());
    done.write("the summary\n");
    done.commit(0644);
    const ReplacementFile half(pending.string());  // being written when the signals come
    half.write("{\"traceEvents\":[");
    ::raise(SIGINT);  // the first: the run stops and writes its outputs
    ::raise(SIGINT);  // the second: the end, at once
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  EXPECT_EQ(names_in(dir.path()).size(), 2U)
      << "a temporary file left: " << ::testing::PrintToString(names_in(dir.path()));
  EXPECT_EQ(contents(written), "the summary\n") << "a file already in place stays";
  EXPECT_EQ(contents(pending), "the previous trace\n");
}

}  // namespace
}  // namespace hacoboot
