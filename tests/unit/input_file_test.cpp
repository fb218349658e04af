// read_input_file: only regular files, and only up to a size limit, are read.
#include "util/input_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "util/errors.hpp"

namespace hacoboot {
namespace {

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(::testing::TempDir()) / ("hacoboot-input-" + std::to_string(::getpid()) + "-" +
                                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  [[nodiscard]] std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // The message of the UsageError read_input_file throws for path.
  static std::string refusal(const std::filesystem::path& path, std::size_t max_bytes = 1024) {
    try {
      read_input_file(path.string(), "--baseline", max_bytes);
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "read " << path;
    return {};
  }

  std::filesystem::path dir_;
};

TEST_F(InputFileTest, ReadsARegularFileWhole) {
  EXPECT_EQ(read_input_file(write("a.json", "{}\n").string(), "--baseline", 1024), "{}\n");
  EXPECT_EQ(read_input_file(write("empty", "").string(), "--baseline", 1024), "");
  const std::string exactly(1024, 'x');
  EXPECT_EQ(read_input_file(write("full", exactly).string(), "--baseline", 1024), exactly) << "the limit is allowed";
}

TEST_F(InputFileTest, ALargerFileIsRefusedNamingTheLimit) {
  EXPECT_EQ(refusal(write("big", std::string(1025, 'x'))),
            "--baseline: " + (dir_ / "big").string() + ": larger than 1024 bytes, the most this option reads");
  EXPECT_NE(refusal(write("huge", std::string((std::size_t{1} << 20) + 1, 'x')), std::size_t{1} << 20)
                .find("larger than 1 MiB"),
            std::string::npos);
}

// /proc files say size 0 (as does a file that grows while read): the limit
// holds on what is read, not on what stat said.
TEST_F(InputFileTest, TheLimitHoldsOnWhatIsRead) {
  EXPECT_EQ(refusal("/proc/self/status", 16),
            "--baseline: /proc/self/status: larger than 16 bytes, the most this option reads");
  EXPECT_NE(read_input_file("/proc/self/status", "--baseline", 1 << 20).find("Pid:"), std::string::npos);
}

TEST_F(InputFileTest, ADirectoryIsRefused) {
  EXPECT_EQ(refusal(dir_), "--baseline: " + dir_.string() + ": a directory, not a regular file");
}

TEST_F(InputFileTest, ADeviceIsRefusedNotReadForEver) {
  EXPECT_EQ(refusal("/dev/zero"), "--baseline: /dev/zero: a character device, not a regular file");
}

TEST_F(InputFileTest, AFifoIsRefusedWithoutBlocking) {
  const auto fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Run aside: a reader that blocks in open() must fail the test, not hang it.
  auto refused = std::async(std::launch::async, [&] { return refusal(fifo); });
  if (refused.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // A writer's open releases the blocked reader, which then reads an empty file.
    ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));
    FAIL() << "blocked on the FIFO";
  }
  EXPECT_EQ(refused.get(), "--baseline: " + fifo.string() + ": a FIFO, not a regular file");
}

TEST_F(InputFileTest, AMissingFileSaysWhy) {
  EXPECT_EQ(refusal(dir_ / "missing"),
            "--baseline: " + (dir_ / "missing").string() + ": cannot read: No such file or directory");
}

}  // namespace
}  // namespace hacoboot
