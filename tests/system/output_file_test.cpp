// OutputFile on what may be at an output's path: why a write failed is kept
// until it is reported, and a reopen (SIGHUP) never waits, never follows a
// symbolic link, and fails without ending anything.
#include "util/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "support/process.hpp"
#include "temp_dir.hpp"
#include "util/errors.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

// The message of the RuntimeError finish() throws; "" when it succeeds.
std::string finish_failure(OutputFile& file) {
  try {
    file.finish();
    return "";
  } catch (const RuntimeError& e) {
    return e.what();
  }
}

// The rows hit a full device early on; by the end, other calls have set errno
// to something else (here ENOENT): the message must still say ENOSPC.
TEST(OutputFile, AWriteErrorIsReportedWithItsOwnCause) {
  OutputFile rows("/dev/full", OutputFile::Kind::Streamed);
  rows.stream() << "boot\tphase\n" << std::flush;
  EXPECT_FALSE(rows.stream().good());
  struct stat st {};
  EXPECT_NE(::stat("/nonexistent/hacoboot", &st), 0);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(finish_failure(rows), std::string("writing /dev/full failed: ") + std::strerror(ENOSPC));
}

TEST(OutputFile, AReopenOntoASymbolicLinkFailsAndWritesNowhereUntilTheNext) {
  const test::TempDir dir;
  const auto path = dir.path() / "rows.tsv";
  OutputFile rows(path.string(), OutputFile::Kind::Streamed);
  rows.stream() << "first\n";
  fs::rename(path, dir.path() / "rows.1.tsv");
  fs::create_symlink(dir.path() / "elsewhere.tsv", path);

  const auto reopened = rows.reopen();
  ASSERT_FALSE(reopened);
  EXPECT_EQ(reopened.error(), "it is a symbolic link (refused: it could point anywhere)");
  EXPECT_FALSE(rows.open());
  rows.stream() << "dropped\n";
  EXPECT_FALSE(fs::exists(dir.path() / "elsewhere.tsv"));

  fs::remove(path);
  ASSERT_TRUE(rows.reopen());
  EXPECT_TRUE(rows.open());
  rows.stream() << "second\n";
  EXPECT_EQ(finish_failure(rows), "");
  EXPECT_EQ(it::read_file(dir.path() / "rows.1.tsv"), "first\n");
  EXPECT_EQ(it::read_file(path), "second\n");
}

// In the event loop, an open waiting for a reader would stop the draining of
// the ring buffer: a FIFO no process reads is refused at once.
TEST(OutputFile, AFifoNoOneReadsIsRefusedWithoutWaiting) {
  const test::TempDir dir;
  const auto path = dir.path() / "rows.tsv";
  OutputFile rows(path.string(), OutputFile::Kind::Streamed);
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);

  const auto reopened = rows.reopen();
  ASSERT_FALSE(reopened);
  EXPECT_EQ(reopened.error(), "it is a FIFO no process reads (the tool does not wait for a reader)");

  // With a reader, it is written in place, and writes wait for it as a pipe's do.
  {
    const UniqueFd reader(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    ASSERT_TRUE(reader.valid()) << std::strerror(errno);
    ASSERT_TRUE(rows.reopen());
    rows.stream() << "row\n" << std::flush;
    std::array<char, 8> got{};
    EXPECT_EQ(::read(reader.get(), got.data(), got.size()), 4);
    EXPECT_EQ(std::string(got.data(), 4), "row\n");
    EXPECT_EQ(finish_failure(rows), "");
  }

  EXPECT_THROW(OutputFile(path.string(), OutputFile::Kind::Streamed), UsageError) << "a first open without a reader";
}

}  // namespace
}  // namespace hacoboot
