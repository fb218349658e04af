// OutputFile on what may be at an output's path: why a write failed is kept
// until it is reported.
#include "cli/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/errors.hpp"

namespace hacoboot {
namespace {

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

}  // namespace
}  // namespace hacoboot
