#include "hacoboot/textfile.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hacoboot/errors.hpp"
#include "temp_dir.hpp"

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

TEST(WriteFileAtomically, ReplacesASymlinkInsteadOfWritingThroughIt) {
  const test::TempDir dir;
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "precious\n";
  const auto path = dir.path() / "hacoboot.prom";
  fs::create_symlink(victim, path);
  write_file_atomically(path.string(), "metrics 1\n");
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(read_file(path), "metrics 1\n");
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

}  // namespace
}  // namespace hacoboot
