// resolve_haconiwa: the PATH lookup of --haconiwa NAME, and what its error
// says (with the command line's option hint) when there is nothing to run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "capture/preload_checks.hpp"
#include "cli/capture_hints.hpp"
#include "temp_dir.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable (or unsets it: nullopt) for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ScopedEnv(ScopedEnv&&) = delete;
  ScopedEnv& operator=(ScopedEnv&&) = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void make_executable(const fs::path& path) {
  std::ofstream(path) << "#!/bin/sh\n";
  fs::permissions(path, fs::perms::owner_all);
}

std::string refusal(const std::string& name) {
  const auto found = find_haconiwa(name);
  if (found) {
    ADD_FAILURE() << "found " << name << " at " << *found;
    return {};
  }
  return with_option_hint(found.error());
}

// A directory named like the binary (or "PATH_DIR/" for an empty name) was
// taken for it and reported as "is a directory".
TEST(ResolveHaconiwa, ADirectoryInPathIsNotTheBinary) {
  const test::TempDir first;
  const test::TempDir second;
  fs::create_directory(first.path() / "haconiwa");
  make_executable(second.path() / "haconiwa");
  const ScopedEnv path("PATH", first.path().string() + ":" + second.path().string());
  EXPECT_EQ(resolve_haconiwa("haconiwa"), (second.path() / "haconiwa").string());
}

TEST(ResolveHaconiwa, NotFoundSaysWhatWasLookedUpWhere) {
  const test::TempDir dir;
  const ScopedEnv path("PATH", dir.path().string() + ":/nonexistent");
  EXPECT_EQ(refusal("haconiwa"), "'haconiwa' not found in PATH (" + dir.path().string() +
                                     ":/nonexistent): give the haconiwa binary with --haconiwa PATH");
  const ScopedEnv unset("PATH", std::nullopt);
  EXPECT_EQ(refusal("haconiwa"),
            "'haconiwa' not found in PATH, which is not set: give the haconiwa binary with --haconiwa PATH");
}

// The shell does not run ./haconiwa for `haconiwa` either: say how to.
TEST(ResolveHaconiwa, ABareNameInTheCurrentDirectoryGetsAHint) {
  const test::TempDir dir;
  make_executable(dir.path() / "my-haconiwa");
  const test::InDirectory cwd(dir.path());
  const ScopedEnv path("PATH", "/nonexistent");
  EXPECT_EQ(refusal("my-haconiwa"),
            "'my-haconiwa' not found in PATH (/nonexistent): to use the file in the current directory, give "
            "--haconiwa ./my-haconiwa");
}

}  // namespace
}  // namespace hacoboot
