#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "exporter/metrics_textfile.hpp"
#include "temp_dir.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

TEST(WriteFileAtomically, CreatesThenReplacesLeavingNoTemporaryFile) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  write_file_atomically(path.string(), "first 1\n");
  EXPECT_EQ(read_file(path), "first 1\n");
  write_file_atomically(path.string(), "second 2\n");
  EXPECT_EQ(read_file(path), "second 2\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"hacoboot.prom"});
}

TEST(WriteFileAtomically, IsReadableByTheCollectorsUser) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  write_file_atomically(path.string(), "");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777U, 0644U);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(WriteFileAtomically, KeepsThePermissionsOfTheFileItReplaces) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  write_file_atomically(path.string(), "first 1\n");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomically(path.string(), "second 2\n");
  EXPECT_EQ(fs::status(path).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

// Only a regular file is replaced: renaming over a symbolic link, a FIFO, a
// socket or a device node would replace what the user put there.
TEST(WriteFileAtomically, RefusesWhatIsNotARegularFile) {
  const test::TempDir dir;
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, dir.path() / "link");
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  std::vector<std::string> names{"fifo", "link", "victim"};
  if (::geteuid() == 0) {
    // The null device's numbers: never the real /dev/null.
    ASSERT_EQ(::mknod((dir.path() / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    names.emplace_back("null");
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (name == "victim") continue;
    try {
      write_file_atomically((dir.path() / name).string(), "metrics 1\n");
      ADD_FAILURE() << "replaced " << name;
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("only a regular file is replaced"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link"));
  EXPECT_TRUE(fs::is_fifo(dir.path() / "fifo"));
  auto left = names_in(dir.path());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, names) << "no temporary file left";
}

// A full disk (here the file size limit, which fails a write the same way)
// leaves the previous file whole, and no temporary file.
TEST(WriteFileAtomically, FailedWriteKeepsThePreviousFile) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  write_file_atomically(path.string(), "old 1\n");
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  rlimit small = saved;
  small.rlim_cur = 4;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_file_atomically(path.string(), "new contents longer than four bytes\n");
  } catch (const RuntimeError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_EQ(read_file(path), "old 1\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"hacoboot.prom"});
}

TEST(WriteFileAtomically, MissingDirectoryIsAnErrorNamingThePath) {
  const test::TempDir dir;
  const auto path = dir.path() / "missing" / "hacoboot.prom";
  try {
    write_file_atomically(path.string(), "x 1\n");
    FAIL() << "wrote into a missing directory";
  } catch (const RuntimeError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
  EXPECT_TRUE(names_in(dir.path()).empty());
}

// For a cache, whose failure is no reason to stop: the same refusal as a
// value, and the previous file left as it was.
TEST(ReplaceFile, SaysWhyWithoutThrowing) {
  const test::TempDir dir;
  const auto path = dir.path() / "a-directory";
  std::filesystem::create_directory(path);
  const auto replaced = replace_file(path.string(), "x 1\n");
  ASSERT_FALSE(replaced);
  EXPECT_EQ(replaced.error(),
            "cannot write " + path.string() + ": it is a directory (only a regular file is replaced)");
  EXPECT_TRUE(std::filesystem::is_directory(path));
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"a-directory"});
  EXPECT_TRUE(replace_file((dir.path() / "cache").string(), "x 1\n"));
  EXPECT_EQ(read_file(dir.path() / "cache"), "x 1\n");
}

TEST(WriteFileAtomically, FailedRenameRemovesTheTemporaryFile) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  fs::create_directory(path);
  fs::create_directory(path / "keep");  // a directory that is not empty cannot be replaced
  EXPECT_THROW(write_file_atomically(path.string(), "x 1\n"), RuntimeError);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"hacoboot.prom"});
}

TEST(WriteFileAtomically, PathWithoutAFileNameIsRefused) {
  const test::TempDir dir;
  EXPECT_THROW(write_file_atomically(dir.path().string() + "/", "x 1\n"), RuntimeError);
  EXPECT_TRUE(names_in(dir.path()).empty());
}

// --textfile: written at the first update, then at most once an interval
// (the times are the test's, not the wall clock's), and at the run's end.
TEST(MetricsTextfile, RewritesOnceAnIntervalAndAtTheEnd) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  MetricsTextfile textfile(path.string(), std::chrono::seconds(15));
  int rendered = 0;
  const auto render = [&rendered] { return "hacoboot_render " + std::to_string(++rendered) + "\n"; };
  const MetricsTextfile::Clock::time_point start{std::chrono::hours(1)};

  EXPECT_TRUE(textfile.update(start, render));
  EXPECT_EQ(read_file(path), "hacoboot_render 1\n");
  EXPECT_FALSE(textfile.update(start + std::chrono::seconds(14), render));
  EXPECT_EQ(rendered, 1) << "nothing rendered before it is due";
  EXPECT_TRUE(textfile.update(start + std::chrono::seconds(15), render));
  EXPECT_EQ(read_file(path), "hacoboot_render 2\n");
  EXPECT_TRUE(textfile.update(start + std::chrono::seconds(16), render, /*now_anyway=*/true));
  EXPECT_EQ(read_file(path), "hacoboot_render 3\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"hacoboot.prom"});
}

// The largest interval --textfile-interval takes (2562047h): the next due
// time saturates instead of overflowing into the past.
TEST(MetricsTextfile, TheLongestIntervalIsNotDueAtEveryPoll) {
  const test::TempDir dir;
  const auto path = dir.path() / "hacoboot.prom";
  MetricsTextfile textfile(path.string(), std::chrono::nanoseconds::max());
  int rendered = 0;
  const auto render = [&rendered] { return "hacoboot_render " + std::to_string(++rendered) + "\n"; };
  const MetricsTextfile::Clock::time_point start{std::chrono::hours(1)};
  EXPECT_TRUE(textfile.update(start, render));
  EXPECT_FALSE(textfile.update(start + std::chrono::seconds(1), render));
  EXPECT_FALSE(textfile.update(start + std::chrono::hours(24 * 365), render));
  EXPECT_EQ(rendered, 1);
}

TEST(MetricsTextfile, AFileThatCannotBeReplacedIsAnErrorNamingIt) {
  const test::TempDir dir;
  const auto path = dir.path() / "missing" / "hacoboot.prom";
  MetricsTextfile textfile(path.string(), std::chrono::seconds(15));
  try {
    textfile.update(MetricsTextfile::Clock::now(), [] { return std::string(); });
    FAIL() << "no error for a missing directory";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hacoboot
