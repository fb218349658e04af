// The probe goes only where its notes were read, and only into a binary no
// one but root or the tool's user can change; it follows that binary across
// upgrades as they happen (renamed over, written in place) without ever
// sitting at sites the file no longer has; bpftool is never taken from PATH.
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>
#include <csignal>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "faults.hpp"
#include "support/build_paths.hpp"

namespace hacoboot::it {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ProbeTargetTest : public FaultTest {
 protected:
  // hacoboot-sampler --haconiwa HACONIWA ARGS..., the tests' BTF cache.
  [[nodiscard]] static std::vector<std::string> tool_argv(const fs::path& haconiwa,
                                                          const std::vector<std::string>& args) {
    std::vector<std::string> argv{sampler().string(), "--btf-cache", test::btf_cache().string(), "--haconiwa",
                                  haconiwa.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // `binary -n BOOTS -- app`: BOOTS launches of `binary`, as a shell command.
  [[nodiscard]] std::string boots_of(const fs::path& binary, int boots) const {
    return shell_command({binary.string(), "-n", std::to_string(boots), "--", app().string(), "--hold-ms", "0"});
  }
  // A traced --run of `command` with the probe on `haconiwa`: its summary.
  // `before`: what runs the tool (env ...); `options`, more of its options.
  nlohmann::json trace(const fs::path& haconiwa, const std::string& command,
                       const std::vector<std::string>& before = {}, std::vector<std::string> options = {}) {
    auto argv = before;
    options.insert(options.end(), {"--format", "json", "--run", command, app().string()});
    const auto tool = tool_argv(haconiwa, options);
    argv.insert(argv.end(), tool.begin(), tool.end());
    const auto result = run_process(argv, dir(), 120s);
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << "\n" << result.err;
    try {
      return nlohmann::json::parse(result.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "no JSON summary: " << e.what() << "\n" << result.out << "\n" << result.err;
      return nlohmann::json::object();
    }
  }
};

// ---------------------------------------------------------------------------
// Trust: a binary, or a directory on its way, that another user can change
// ---------------------------------------------------------------------------
struct Untrusted {
  const char* name;
  const char* expected;  // in the refusal
  friend std::ostream& operator<<(std::ostream& out, const Untrusted& untrusted) { return out << untrusted.name; }
};

class UntrustedBinaryTest : public ProbeTargetTest, public ::testing::WithParamInterface<Untrusted> {
 protected:
  // The launcher at a path that GetParam() makes untrusted; the path given.
  fs::path place_launcher() {
    const auto shared = dir() / "shared";
    fs::create_directory(shared);
    const std::string name = GetParam().name;
    if (name == "directory writable by others") {
      fs::copy_file(launcher(), shared / "haconiwa");
      fs::permissions(shared, fs::perms(0777));
      return shared / "haconiwa";
    }
    if (name == "link in a directory writable by others") {
      fs::create_symlink(launcher(), shared / "haconiwa");
      fs::permissions(shared, fs::perms(0777));
      return shared / "haconiwa";
    }
    if (name == "file of another user") {
      fs::copy_file(launcher(), dir() / "haconiwa");
      const passwd* nobody = ::getpwnam("nobody");
      EXPECT_NE(nobody, nullptr);
      EXPECT_EQ(::chown((dir() / "haconiwa").c_str(), nobody != nullptr ? nobody->pw_uid : 65534, 0), 0);
      return dir() / "haconiwa";
    }
    fs::copy_file(launcher(), dir() / "haconiwa");  // file writable by its group
    fs::permissions(dir() / "haconiwa", fs::perms(0775));
    return dir() / "haconiwa";
  }
};

TEST_P(UntrustedBinaryTest, IsRefusedBeforeAnythingIsAttachedAndCheckSaysWhy) {
  const auto haconiwa = place_launcher();
  const auto refused = run_process(tool_argv(haconiwa, {"--run", "true"}), dir(), 90s);
  EXPECT_TRUE(refused.status.exited && refused.status.code == 2) << refused.status.describe() << "\n" << refused.err;
  EXPECT_NE(refused.err.find("refusing to attach to " + haconiwa.string()), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(GetParam().expected), std::string::npos) << refused.err;

  const auto check = run_process(tool_argv(haconiwa, {"--check"}), dir(), 90s);
  EXPECT_TRUE(check.status.exited && check.status.code == 1) << check.status.describe() << "\n" << check.out;
  EXPECT_NE(check.out.find(GetParam().expected), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("not ready: haconiwa"), std::string::npos) << check.out;
}

INSTANTIATE_TEST_SUITE_P(
    Binary, UntrustedBinaryTest,
    ::testing::Values(Untrusted{"directory writable by others", "shared: writable by its group and others"},
                      Untrusted{"link in a directory writable by others", "shared: writable by its group and others"},
                      Untrusted{"file of another user", "owned by uid "},
                      Untrusted{"file writable by its group", "haconiwa: writable by its group"}),
    [](const ::testing::TestParamInfo<Untrusted>& param) {
      std::string name = param.param.name;
      for (auto& c : name) c = std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
      return name;
    });

// As in /tmp: others may add files there, but not replace root's.
TEST_F(ProbeTargetTest, RootsBinaryInAStickyDirectoryIsTraced) {
  const auto sticky = dir() / "sticky";
  fs::create_directory(sticky);
  fs::copy_file(launcher(), sticky / "haconiwa");
  fs::permissions(sticky, fs::perms(01777));
  const auto summary = trace(sticky / "haconiwa", boots_of(sticky / "haconiwa", 2));
  expect_boot_counts(summary, 2, 2, 2, 0);
}

// ---------------------------------------------------------------------------
// The probe lands where its notes were read
// ---------------------------------------------------------------------------
class AttachRaceTest : public ProbeTargetTest, public ::testing::WithParamInterface<const char*> {};

// The path replaced between the notes' reading and the attach (an upgrade
// landing then, or another user's symlink swap): the probe still goes to
// the file read, whose boots are all counted, and never to the other file.
TEST_P(AttachRaceTest, APathReplacedBeforeTheAttachLeavesTheProbeOnTheFileRead) {
  const auto bin = dir() / "bin";
  fs::create_directory(bin);
  fs::copy_file(launcher(), bin / "haconiwa");
  // The file read stays reachable under a second name; the one renamed
  // over its path is no haconiwa at all.
  fs::create_hard_link(bin / "haconiwa", bin / "original");
  fs::copy_file(app(), bin / "other");
  const auto summary =
      trace(bin / "haconiwa", boots_of(bin / "original", 3),
            {"/usr/bin/env", "LD_PRELOAD=" + test::attach_race_shim().string(), "ASAN_OPTIONS=verify_asan_link_order=0",
             "HACOBOOT_SHIM_RENAME_FROM=" + (bin / "other").string(),
             "HACOBOOT_SHIM_RENAME_TO=" + (bin / "haconiwa").string()},
            {"--usdt-attach", GetParam()});
  ASSERT_FALSE(fs::exists(bin / "other")) << "the rename did not happen: the test proves nothing";
  expect_boot_counts(summary, 3, 3, 3, 0);
}

INSTANTIATE_TEST_SUITE_P(Attach, AttachRaceTest, ::testing::Values("uprobe_multi", "perf"));

// ---------------------------------------------------------------------------
// Upgrades as they happen
// ---------------------------------------------------------------------------
// The tracer, live, on bin/haconiwa (a copy of the launcher); stderr says what it follows.
class FollowTest : public ProbeTargetTest {
 protected:
  void SetUp() override {
    ProbeTargetTest::SetUp();
    if (IsSkipped() || HasFailure()) return;
    bin_ = dir() / "bin";
    haconiwa_ = bin_ / "haconiwa";
    fs::create_directory(bin_);
    fs::copy_file(launcher(), haconiwa_);
    tool_ = std::make_unique<Process>(tool_argv(haconiwa_, {"--duration", "900s", "--format", "json", app().string()}),
                                      dir());
    ASSERT_TRUE(tool_->wait_for_text("Hit Ctrl-C", true, 60s)) << tool_->err();
  }
  // `launches` boots of bin/haconiwa, each in a session of its own (no
  // controlling terminal, as under a service manager), started at once.
  void boot_now(int launches) const {
    const auto result = run_process({"/usr/bin/setsid", "--wait", haconiwa_.string(), "-n", std::to_string(launches),
                                     "--", app().string(), "--hold-ms", "0"},
                                    dir(), 120s);
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << "\n" << result.err;
  }

  fs::path bin_;
  fs::path haconiwa_;
  std::unique_ptr<Process> tool_;
};

// `cp new haconiwa`: the same inode, new code. The probe leaves the old
// sites at the first write and comes back at the new ones.
TEST_F(FollowTest, ABinaryWrittenInPlaceHasItsProbeMovedToItsNewSites) {
  if (!tool_) return;
  boot_now(1);
  fs::copy_file(test::launcher_variant(), haconiwa_, fs::copy_options::overwrite_existing);
  ASSERT_TRUE(tool_->wait_for_text("was written in place: its probe is attached again", true, 30s)) << tool_->err();
  EXPECT_NE(tool_->err().find("is being written in place: its probe is detached"), std::string::npos) << tool_->err();
  boot_now(2);
  const auto summary = stop_tracer(*tool_);
  expect_boot_counts(summary, 3, 3, 3, 0);
}

// Made writable by its group: someone else may now write code where the
// probe's breakpoints sit.
TEST_F(FollowTest, ABinaryMadeWritableByOthersLosesItsProbe) {
  if (!tool_) return;
  fs::permissions(haconiwa_, fs::perms(0775));
  ASSERT_TRUE(tool_->wait_for_text("is no longer trusted (writable by its group): its probe is detached", true, 30s))
      << tool_->err();
  boot_now(1);
  const auto summary = stop_tracer(*tool_);
  expect_boot_counts(summary, 0, 0, 0, 0);
}

// A boot started the moment an upgrade renamed its new file into place is
// counted: the new file is caught at its first exec and held until the
// probe is on it.
TEST_F(FollowTest, ABootStartedRightAfterTheRenameIsCounted) {
  if (!tool_) return;
  constexpr int kUpgrades = 5;
  for (int i = 0; i < kUpgrades; ++i) {
    const auto staged = bin_ / ".haconiwa.dpkg-new";
    fs::copy_file(i % 2 == 0 ? test::launcher_variant() : launcher(), staged);
    fs::rename(staged, haconiwa_);
    boot_now(1);
  }
  const auto summary = stop_tracer(*tool_);
  expect_boot_counts(summary, kUpgrades, kUpgrades, kUpgrades, 0);
  EXPECT_EQ(summary.value("untracked_phase_events", kAbsent), 0U) << summary.dump(2);
}

// An upgrade's first exec after the last read of records (here during the
// --run command's grace, which ignores SIGTERM) is not held: no one would
// continue it, and the launch would stay stopped after the tool's exit.
TEST_F(ProbeTargetTest, AnExecAfterTracingEndedIsNotLeftStopped) {
  const auto bin = dir() / "bin";
  const auto haconiwa = bin / "haconiwa";
  const auto ended = dir() / "tracing-ended";
  fs::create_directory(bin);
  fs::copy_file(launcher(), haconiwa);
  const auto run = "trap 'touch " + ended.string() + "' TERM; while :; do sleep 0.1; done";
  Process tool(tool_argv(haconiwa, {"--duration", "1s", "--run", run, app().string()}), dir());
  ASSERT_TRUE(wait_until([&] { return fs::exists(ended); }, 60s)) << tool.err();
  const auto staged = bin / ".haconiwa.dpkg-new";
  fs::copy_file(test::launcher_variant(), staged);
  fs::rename(staged, haconiwa);
  Process launch({"/usr/bin/setsid", "--wait", haconiwa.string(), "-n", "1", "--", app().string(), "--hold-ms", "0"},
                 dir());
  const auto tool_status = tool.wait_or_kill(60s);
  EXPECT_TRUE(tool_status.exited && tool_status.code == 0) << tool_status.describe() << "\n" << tool.err();
  const auto status = launch.wait_or_kill(60s);
  EXPECT_TRUE(status.exited && status.code == 0) << "the launch after tracing ended: " << status.describe();
  for (const pid_t stopped : processes_mentioning(haconiwa.string())) ::kill(stopped, SIGKILL);  // after a failure
}

// ---------------------------------------------------------------------------
// bpftool runs as root: never the one PATH names
// ---------------------------------------------------------------------------
TEST_F(ProbeTargetTest, ABpftoolInPathIsNeverRunForTheBtfCache) {
  const auto planted = dir() / "planted";
  fs::create_directory(planted);
  const auto marker = dir() / "planted-bpftool-ran";
  write_file(planted / "bpftool", "#!/bin/sh\ntouch " + marker.string() + "\nexit 1\n");
  fs::permissions(planted / "bpftool", fs::perms(0755));
  const auto cache = dir() / "btf-cache";  // empty: this run fills it
  const auto path = planted.string() + ":" + (std::getenv("PATH") != nullptr ? std::getenv("PATH") : "");
  const auto result = run_process({"/usr/bin/env", "PATH=" + path, sampler().string(), "--btf-cache", cache.string(),
                                   "--haconiwa", launcher().string(), "--run", "true"},
                                  dir(), 90s);
  EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << "\n" << result.err;
  EXPECT_FALSE(fs::exists(marker)) << "the bpftool in PATH ran as root";
}

}  // namespace
}  // namespace hacoboot::it
