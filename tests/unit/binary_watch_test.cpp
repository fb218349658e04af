#include "capture/binary_watch.hpp"

#include <gtest/gtest.h>

namespace hacoboot {
namespace {

FileVersion file(ino_t inode, off_t size = 1000, std::int64_t modified_ns = 1) {
  return {.device = 8, .inode = inode, .size = size, .modified_ns = modified_ns};
}

TEST(BinaryWatch, TheAttachedFileIsNeverOfferedWhateverItHolds) {
  BinaryWatch watch(file(1));
  EXPECT_FALSE(watch.observe(file(1)));
  EXPECT_FALSE(watch.observe(file(1)));
  // Rewritten in place: the same inode, which the probe is on already.
  EXPECT_FALSE(watch.observe(file(1, 2000, 2)));
  EXPECT_FALSE(watch.observe(file(1, 2000, 2)));
  EXPECT_EQ(watch.files_attached(), 1U);
}

// A package upgrade renames a complete new file over the old one: offered
// once seen the same twice, then never again once attached.
TEST(BinaryWatch, ANewFileIsOfferedOnceSettled) {
  BinaryWatch watch(file(1));
  EXPECT_FALSE(watch.observe(file(2))) << "seen once: it may still be written";
  const auto offered = watch.observe(file(2));
  ASSERT_TRUE(offered);
  EXPECT_EQ(offered->inode, 2U);
  watch.attached(*offered);
  EXPECT_FALSE(watch.observe(file(2)));
  EXPECT_EQ(watch.files_attached(), 2U);
}

// A rename into place or a finished write (inotify) says the file is whole:
// offered at once, and never again once attached or found unusable unchanged.
TEST(BinaryWatch, AWholeFileIsOfferedAtOnce) {
  BinaryWatch watch(file(1));
  EXPECT_FALSE(watch.offer(file(1))) << "the attached file";
  const auto offered = watch.offer(file(2));
  ASSERT_TRUE(offered);
  watch.attached(*offered);
  EXPECT_FALSE(watch.offer(file(2)));
  watch.unusable(file(3));
  EXPECT_FALSE(watch.offer(file(3)));
  EXPECT_TRUE(watch.offer(file(3, 2000, 2))) << "rewritten since it was found unusable";
  EXPECT_FALSE(watch.offer(std::nullopt));
}

// `install` or `cp` to a new file writes it where it will stay: not offered
// while it grows.
TEST(BinaryWatch, AFileStillBeingWrittenWaits) {
  BinaryWatch watch(file(1));
  EXPECT_FALSE(watch.observe(file(2, 100, 10)));
  EXPECT_FALSE(watch.observe(file(2, 500, 20)));
  EXPECT_FALSE(watch.observe(file(2, 900, 30)));
  EXPECT_TRUE(watch.observe(file(2, 900, 30)));
}

TEST(BinaryWatch, NothingAtThePathOffersNothing) {
  BinaryWatch watch(file(1));
  EXPECT_FALSE(watch.observe(std::nullopt));
  EXPECT_FALSE(watch.observe(std::nullopt));
  EXPECT_FALSE(watch.observe(file(3)));
  EXPECT_TRUE(watch.observe(file(3)));
}

// A file without the probe is not tried at every look; rewritten, it is.
TEST(BinaryWatch, AnUnusableFileIsOfferedAgainOnlyOnceItChanged) {
  BinaryWatch watch(file(1));
  watch.observe(file(2));
  const auto offered = watch.observe(file(2));
  ASSERT_TRUE(offered);
  watch.unusable(*offered);
  EXPECT_FALSE(watch.observe(file(2)));
  EXPECT_FALSE(watch.observe(file(2)));
  EXPECT_FALSE(watch.observe(file(2, 3000, 5)));
  EXPECT_TRUE(watch.observe(file(2, 3000, 5)));
  EXPECT_EQ(watch.files_attached(), 1U);
}

// Back to the file the probe is on (a downgrade by renaming the old one back).
TEST(BinaryWatch, ReturningToAnAttachedFileOffersNothing) {
  BinaryWatch watch(file(1));
  watch.observe(file(2));
  watch.attached(*watch.observe(file(2)));
  EXPECT_FALSE(watch.observe(file(1)));
  EXPECT_FALSE(watch.observe(file(1)));
}

}  // namespace
}  // namespace hacoboot
