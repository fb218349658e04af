#include "cli/output_paths.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/process.hpp"
#include "temp_dir.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

// The message of the UsageError check_output_paths throws; "" when it accepts.
std::string refusal(const std::vector<NamedOutput>& outputs, const std::vector<NamedInput>& inputs = {}) {
  try {
    check_output_paths(outputs, inputs);
    return "";
  } catch (const UsageError& e) {
    return e.what();
  }
}

void make_file(const fs::path& path) {
  std::ofstream(path) << "precious\n";
}

// chattr +i / -i; false when the file system or the user cannot.
bool set_immutable(const fs::path& path, bool immutable) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool done = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  flags = immutable ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
  done = done && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  ::close(fd);
  return done;
}

TEST(CheckOutputPaths, NothingOrARegularFileIsAccepted) {
  const test::TempDir dir;
  make_file(dir.path() / "old.json");
  EXPECT_EQ(refusal({{.option = "-o", .path = (dir.path() / "old.json").string()},
                     {.option = "--events", .path = (dir.path() / "new.tsv").string()},
                     {.option = "--textfile", .path = (dir.path() / "m.prom").string(), .regular_file_only = true},
                     {.option = "--timeline", .path = "-"},
                     {.option = "--trace-out", .path = ""}}),
            "");
}

TEST(CheckOutputPaths, MissingDirectoryIsRefusedNamingOptionAndPath) {
  const test::TempDir dir;
  const auto path = (dir.path() / "missing" / "m.prom").string();
  const auto message = refusal({{.option = "--textfile", .path = path, .regular_file_only = true}});
  EXPECT_NE(message.find("--textfile: cannot write " + path), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(CheckOutputPaths, AFileInPlaceOfTheDirectoryIsRefused) {
  const test::TempDir dir;
  make_file(dir.path() / "file");
  const auto message = refusal({{.option = "-o", .path = (dir.path() / "file" / "out.json").string()}});
  EXPECT_NE(message.find("Not a directory"), std::string::npos) << message;
}

TEST(CheckOutputPaths, PathWithoutAFileNameIsRefused) {
  const test::TempDir dir;
  for (const auto& path : {dir.path().string() + "/", (dir.path() / ".").string(), (dir.path() / "..").string()}) {
    EXPECT_NE(refusal({{.option = "-o", .path = path}}).find("not a file name"), std::string::npos) << path;
  }
}

TEST(CheckOutputPaths, SymbolicLinkDirectoryAndSocketAreRefused) {
  const test::TempDir dir;
  make_file(dir.path() / "target");
  fs::create_symlink(dir.path() / "target", dir.path() / "link");
  fs::create_directory(dir.path() / "directory");
  ASSERT_NO_THROW(it::make_socket_file(dir.path() / "socket"));
  for (const bool regular_file_only : {false, true}) {
    const auto refused = [&](const char* name) {
      return refusal(
          {{.option = "--events", .path = (dir.path() / name).string(), .regular_file_only = regular_file_only}});
    };
    EXPECT_NE(refused("link").find("it is a symbolic link"), std::string::npos);
    EXPECT_NE(refused("directory").find("it is a directory"), std::string::npos);
    EXPECT_NE(refused("socket").find("it is a socket"), std::string::npos);
  }
}

// -o /dev/null, or a pipe someone reads: written in place. --textfile renames
// a new file over its path: it would replace the device node or the FIFO.
TEST(CheckOutputPaths, CharacterDeviceOrFifoIsWrittenInPlaceExceptByTheTextfile) {
  const test::TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& path : {std::string("/dev/null"), fifo.string()}) {
    EXPECT_EQ(refusal({{.option = "-o", .path = path}}), "") << path;
    const auto message = refusal({{.option = "--textfile", .path = path, .regular_file_only = true}});
    EXPECT_NE(message.find("only a regular file can be there"), std::string::npos) << message;
  }
  EXPECT_NE(refusal({{.option = "--textfile", .path = "/dev/null", .regular_file_only = true}})
                .find("it is a character device"),
            std::string::npos);
  EXPECT_NE(refusal({{.option = "--textfile", .path = fifo.string(), .regular_file_only = true}}).find("it is a FIFO"),
            std::string::npos);
}

// --events and --record open as the run starts: a FIFO of theirs must have a
// reader at the check, or a run refused then would already have truncated
// the outputs opened before it. With a reader, its write end is held.
TEST(CheckOutputPaths, AStreamedFifoNeedsAReaderAtTheCheck) {
  const test::TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto message = refusal({{.option = "--record", .path = fifo.string(), .streamed = true}});
  EXPECT_NE(message.find("--record: cannot write " + fifo.string() + ": it is a FIFO no process reads"),
            std::string::npos)
      << message;
  EXPECT_EQ(refusal({{.option = "-o", .path = fifo.string()}}), "") << "written at the end: a reader may come";

  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  const auto held = check_output_paths({{.option = "--events", .path = fifo.string(), .streamed = true}}, {});
  ASSERT_EQ(held.size(), 1U);
  EXPECT_EQ(::write(held.front().get(), "x", 1), 1) << "the held end writes to the reader";
  ::close(reader);
}

// An existing file that cannot be written (immutable, or read-only for a user
// without CAP_DAC_OVERRIDE) is refused before the run: written in place, or
// renamed over, it would fail only at the end, the run's results lost.
TEST(CheckOutputPaths, AFileThatCannotBeWrittenIsRefused) {
  const test::TempDir dir;
  const auto file = dir.path() / "old.json";
  make_file(file);
  ASSERT_EQ(::chmod(file.c_str(), 0444), 0);
  const bool overrides = ::access(file.c_str(), W_OK) == 0;  // root
  for (const bool streamed : {false, true}) {
    const auto message = refusal({{.option = "-o", .path = file.string(), .streamed = streamed}});
    if (overrides) {
      EXPECT_EQ(message, "");
    } else {
      EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
    }
  }
  if (!set_immutable(file, true)) GTEST_SKIP() << "no immutable files here (root, and a file system that has them)";
  const auto message = refusal({{.option = "--events", .path = file.string(), .streamed = true}});
  const auto replaced = refusal({{.option = "-o", .path = file.string()}});
  ASSERT_TRUE(set_immutable(file, false));
  EXPECT_NE(message.find("--events: cannot write " + file.string() + ": Operation not permitted"), std::string::npos)
      << message;
  EXPECT_NE(replaced.find("Operation not permitted"), std::string::npos) << replaced;
}

// A replaced output's temporary file is its name and 8 bytes more.
TEST(CheckOutputPaths, ANameWithoutRoomForTheTemporaryFileIsRefused) {
  const test::TempDir dir;
  const auto longest = (dir.path() / std::string(247, 'n')).string();
  const auto longer = (dir.path() / std::string(248, 'n')).string();
  EXPECT_EQ(refusal({{.option = "-o", .path = longest}}), "");
  const auto message = refusal({{.option = "--timeline", .path = longer}});
  EXPECT_NE(message.find("--timeline: cannot write " + longer + ": its name is longer than 247 bytes"),
            std::string::npos)
      << message;
  EXPECT_EQ(refusal({{.option = "--events", .path = longer, .streamed = true}}), "") << "written in place";
}

// "-" is standard output for the outputs written in place; --textfile, renamed
// over its path, would make a file named "-" in the working directory.
TEST(CheckOutputPaths, TheTextfileIsNotStandardOutput) {
  EXPECT_EQ(refusal({{.option = "--stacks", .path = "-"}}), "");
  const auto message = refusal({{.option = "--textfile", .path = "-", .regular_file_only = true}});
  EXPECT_NE(message.find("--textfile: cannot write -: "), std::string::npos) << message;
  EXPECT_NE(message.find("standard output cannot take it"), std::string::npos) << message;
}

TEST(CheckOutputPaths, TwoOutputsOnTheSamePathAreRefusedNamingBoth) {
  const test::TempDir dir;
  const test::InDirectory in(dir.path());
  fs::create_directory(dir.path() / "a");
  const auto absolute = (dir.path() / "x.json").string();
  // Relative and absolute spellings, through "a/..": whether x.json exists or not.
  for (const bool exists : {false, true}) {
    if (exists) make_file(absolute);
    const auto message =
        refusal({{.option = "--timeline", .path = "a/../x.json"}, {.option = "--trace-out", .path = absolute}});
    EXPECT_EQ(message, "--timeline a/../x.json and --trace-out " + absolute + " are the same file") << exists;
    EXPECT_NE(refusal({{.option = "-o", .path = "x.json"}, {.option = "--textfile", .path = "./x.json"}}), "");
  }
}

TEST(CheckOutputPaths, AHardLinkIsTheSameFile) {
  const test::TempDir dir;
  make_file(dir.path() / "x.json");
  fs::create_hard_link(dir.path() / "x.json", dir.path() / "y.tsv");
  const auto message = refusal({{.option = "-o", .path = (dir.path() / "x.json").string()},
                                {.option = "--events", .path = (dir.path() / "y.tsv").string()}});
  EXPECT_NE(message.find("are the same file"), std::string::npos) << message;
}

TEST(CheckOutputPaths, AMissingFileThroughALinkedDirectoryIsTheSameFile) {
  const test::TempDir dir;
  fs::create_directory(dir.path() / "real");
  fs::create_directory_symlink(dir.path() / "real", dir.path() / "alias");
  EXPECT_NE(refusal({{.option = "-o", .path = (dir.path() / "real" / "x.json").string()},
                     {.option = "--events", .path = (dir.path() / "alias" / "x.json").string()}}),
            "");
}

TEST(CheckOutputPaths, DevNullMayTakeSeveralOutputs) {
  EXPECT_EQ(refusal({{.option = "-o", .path = "/dev/null"}, {.option = "--events", .path = "/dev/null"}}), "");
}

TEST(CheckOutputPaths, AnOutputThatIsAnInputIsRefused) {
  const test::TempDir dir;
  const test::InDirectory in(dir.path());
  make_file(dir.path() / "base.json");
  const auto message = refusal({{.option = "-o", .path = "base.json"}},
                               {{.option = "--baseline", .path = (dir.path() / "base.json").string()}});
  EXPECT_EQ(message, "-o base.json and --baseline " + (dir.path() / "base.json").string() +
                         " are the same file: an output never replaces an input");
  EXPECT_EQ(refusal({{.option = "-o", .path = "new.json"}}, {{.option = "--baseline", .path = "base.json"}}), "");
}

}  // namespace
}  // namespace hacoboot
