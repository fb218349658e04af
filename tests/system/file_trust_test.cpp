// open_trusted_file: the haconiwa binary is opened only when no one but root
// or the tool's user can change it or any directory on its way, links
// followed; the descriptor returned is of the file checked.
#include "util/file_trust.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "temp_dir.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

void make_file(const fs::path& path, fs::perms mode = fs::perms(0755)) {
  std::ofstream(path) << "#!/bin/true\n";
  fs::permissions(path, mode);
}

// Whether `fd` is the file at `path` (same inode).
bool is_file(int fd, const fs::path& path) {
  struct stat opened {};
  struct stat named {};
  return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
         opened.st_dev == named.st_dev;
}

// The failure's words, "" when the file was opened.
std::string refusal(const fs::path& path) {
  const auto opened = open_trusted_file(path, TrustedOwners::kEffectiveUserOrRoot);
  return opened ? "" : opened.error();
}

class TrustedFileTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
  // Ours alone at first: mkdtemp's mode 0700.
  [[nodiscard]] fs::path in(const std::string& name) const { return dir_.path() / name; }
};

TEST_F(TrustedFileTest, AFileOfOursInDirectoriesOfOursOrRootsIsOpened) {
  make_file(in("haconiwa"));
  const auto opened = open_trusted_file(in("haconiwa"), TrustedOwners::kEffectiveUserOrRoot);
  ASSERT_TRUE(opened) << opened.error();
  EXPECT_TRUE(is_file(opened->get(), in("haconiwa")));
}

TEST_F(TrustedFileTest, ADirectoryOthersMayWriteToIsRefusedByName) {
  fs::create_directory(in("shared"));
  make_file(in("shared") / "haconiwa");
  fs::permissions(in("shared"), fs::perms(0777));
  const auto message = refusal(in("shared") / "haconiwa");
  EXPECT_NE(message.find(in("shared").string() + ": writable by its group and others"), std::string::npos) << message;
}

TEST_F(TrustedFileTest, AGroupWritableDirectoryIsRefused) {
  fs::create_directory(in("team"));
  make_file(in("team") / "haconiwa");
  fs::permissions(in("team"), fs::perms(0775));
  EXPECT_NE(refusal(in("team") / "haconiwa").find("writable by its group"), std::string::npos);
}

TEST_F(TrustedFileTest, AFileOthersMayWriteToIsRefused) {
  make_file(in("haconiwa"), fs::perms(0757));
  EXPECT_NE(refusal(in("haconiwa")).find(in("haconiwa").string() + ": writable by others"), std::string::npos);
}

// As /tmp: others may add entries but not rename or remove ours.
TEST_F(TrustedFileTest, OurFileInAStickyDirectoryOthersMayWriteToIsOpened) {
  fs::create_directory(in("sticky"));
  make_file(in("sticky") / "haconiwa");
  fs::permissions(in("sticky"), fs::perms(01777));
  EXPECT_EQ(refusal(in("sticky") / "haconiwa"), "");
}

// Another user's link there could be pointed anywhere.
TEST_F(TrustedFileTest, ALinkInADirectoryOthersMayWriteToIsRefused) {
  make_file(in("haconiwa"));
  fs::create_directory(in("shared"));
  fs::create_symlink(in("haconiwa"), in("shared") / "link");
  fs::permissions(in("shared"), fs::perms(0777));
  EXPECT_NE(refusal(in("shared") / "link").find("writable by its group and others"), std::string::npos);
}

TEST_F(TrustedFileTest, LinksAreFollowedAndTheirDirectoriesCheckedToo) {
  fs::create_directory(in("real"));
  make_file(in("real") / "haconiwa");
  fs::create_symlink("real/haconiwa", in("relative"));
  fs::create_symlink(in("real") / "haconiwa", in("absolute"));
  for (const auto* link : {"relative", "absolute"}) {
    const auto opened = open_trusted_file(in(link), TrustedOwners::kEffectiveUserOrRoot);
    ASSERT_TRUE(opened) << link << ": " << opened.error();
    EXPECT_TRUE(is_file(opened->get(), in("real") / "haconiwa")) << link;
  }
  fs::permissions(in("real"), fs::perms(0777));
  EXPECT_NE(refusal(in("relative")).find(in("real").string() + ": writable"), std::string::npos)
      << refusal(in("relative"));
}

TEST_F(TrustedFileTest, DotDotGoesUpFromWhereTheWalkIs) {
  fs::create_directories(in("a") / "b");
  make_file(in("haconiwa"));
  const auto opened = open_trusted_file(in("a") / "b" / ".." / ".." / "haconiwa", TrustedOwners::kEffectiveUserOrRoot);
  ASSERT_TRUE(opened) << opened.error();
  EXPECT_TRUE(is_file(opened->get(), in("haconiwa")));
  const test::InDirectory here(in("a"));
  EXPECT_EQ(refusal("../haconiwa"), "");
}

TEST_F(TrustedFileTest, ALoopOfLinksIsRefused) {
  fs::create_symlink(in("two"), in("one"));
  fs::create_symlink(in("one"), in("two"));
  EXPECT_NE(refusal(in("one")).find("Too many levels of symbolic links"), std::string::npos) << refusal(in("one"));
}

TEST_F(TrustedFileTest, AFifoOrADirectoryIsNoFileAndTheOpenDoesNotHang) {
  ASSERT_EQ(::mkfifo(in("fifo").c_str(), 0600), 0);
  EXPECT_NE(refusal(in("fifo")).find("not a regular file"), std::string::npos) << refusal(in("fifo"));
  fs::create_directory(in("directory"));
  EXPECT_NE(refusal(in("directory")), "");
}

TEST_F(TrustedFileTest, AMissingFileIsNamed) {
  EXPECT_NE(refusal(in("missing")).find(in("missing").string() + ": No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace hacoboot
