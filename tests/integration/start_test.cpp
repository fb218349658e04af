// How the tool starts: the kernel types CO-RE needs, from a cache filled once
// per kernel, the two ways of seeing execve and listen, and the two ways of
// attaching the probe.
#include <sys/stat.h>

#include <cctype>
#include <fstream>
#include <thread>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

class StartTest : public IntegrationTest {
 protected:
  // One boot, -v: the run's stderr tells where the kernel types came from.
  ProcessResult boot_once(const std::vector<std::string>& args) {
    return expect_one_boot(run_sampler(one_boot_argv(launcher_command({"-n", "1"}), args)));
  }

  // The same where tracefs is not mounted, whatever the host's state.
  ProcessResult boot_once_without_tracefs(const std::vector<std::string>& args) {
    const auto argv = sampler_argv(one_boot_argv(launcher_command({"-n", "1"}), args));
    return expect_one_boot(run_process(with_tracefs(Tracefs::Unmounted, argv), dir(), 90s));
  }

  // The same, for a run that must fill the BTF cache. The extract comes from
  // a niced bpftool that the tool waits for 2 s at most when it ends (a later
  // run fills the cache otherwise): on a busy host a short run ends first.
  // This run boots once its bpftool has ended.
  ProcessResult boot_filling_cache(const std::vector<std::string>& args) {
    const auto ended = dir() / "bpftool-ended";
    std::filesystem::remove(ended);
    Process tool(
        sampler_argv(one_boot_argv(wait_for_file_command(ended) + " && " + launcher_command({"-n", "1"}), args)),
        dir());
    EXPECT_TRUE(tool.wait_for_text("filling the BTF cache with", true, 90s)) << tool.err();
    for (int i = 0; i < 1200 && bpftool_running(tool.pid()); ++i) std::this_thread::sleep_for(100ms);
    std::ofstream(ended.string()).put('\n');
    ProcessResult r;
    r.status = tool.wait_or_kill(90s);
    r.out = tool.out();
    r.err = tool.err();
    return expect_one_boot(std::move(r));
  }

  std::vector<std::string> one_boot_argv(const std::string& run, const std::vector<std::string>& args) const {
    std::vector<std::string> all{"-v", "--format", "json", "--run", run, app().string()};
    all.insert(all.end(), args.begin(), args.end());
    return all;
  }

  static ProcessResult expect_one_boot(ProcessResult r) {
    EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
    if (r.status.exited && r.status.code == 0) expect_boot_counts(nlohmann::json::parse(r.out), 1, 1, 1, 0);
    return r;
  }

  // Whether the tool's bpftool child still runs: a live child named bpftool,
  // or one still named as the tool (forked, not yet exec'd; the tool's other
  // helper, the tracefs lookup, has ended by the time it starts bpftool).
  static bool bpftool_running(pid_t tool) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const auto name = entry.path().filename().string();
      if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) == 0) continue;
      const auto stat = proc_stat(static_cast<pid_t>(std::stol(name)));
      if (stat && stat->ppid == tool && stat->state != 'Z' &&
          (stat->comm == "bpftool" || stat->comm == "hacoboot-sample")) {
        return true;
      }
    }
    return false;
  }

  // Three boots traced with -v and `args`: every one measured within the
  // ground truth, and stderr says `said` (which hooks or attachment ran).
  void expect_three_boots_traced(const std::vector<std::string>& args, const std::string& said) {
    std::vector<std::string> all{"-v"};
    all.insert(all.end(), args.begin(), args.end());
    const auto traced = trace_boots({"-n", "3"}, {}, all);
    ASSERT_FALSE(HasFailure());
    EXPECT_NE(traced.result.err.find(said), std::string::npos) << traced.result.err;
    expect_boot_counts(traced.summary, 3, 3, 3, 0);
    expect_boots_match_truth(traced, 3);
  }

  // The files in a cache directory whose names start with `prefix` and end
  // with `suffix`: the kernel type extracts ("", ".btf"), the tracepoint ids.
  static std::vector<std::filesystem::path> files_in(const std::filesystem::path& directory,
                                                     const std::string& prefix = "",
                                                     const std::string& suffix = ".btf") {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
      const auto name = entry.path().filename().string();
      if (name.starts_with(prefix) && name.ends_with(suffix)) files.push_back(entry.path());
    }
    return files;
  }
};

constexpr const char* kFromKernel = "kernel types from /sys/kernel/btf/vmlinux";

TEST_F(StartTest, BtfCacheIsFilledByTheFirstRunAndUsedByTheNext) {
  const auto cache = dir() / "btf-cache";
  // An extract for another kernel stays whatever happens: it may be booted again.
  ASSERT_TRUE(std::filesystem::create_directory(cache));
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  const auto other_kernel = cache / "0123456789abcdef-0000000000000000.btf";
  std::ofstream(other_kernel) << "another kernel's types";
  const auto this_kernels = [&] {
    auto files = files_in(cache);
    std::erase(files, other_kernel);
    return files;
  };

  const auto first = boot_filling_cache({"--btf-cache", cache.string()});
  EXPECT_NE(first.err.find(kFromKernel), std::string::npos) << first.err;
  const auto files = this_kernels();
  ASSERT_EQ(files.size(), 1U) << "one extract";
  EXPECT_EQ(files_in(cache, ".").size(), 0U) << "a temporary file is left";
  EXPECT_GT(std::filesystem::file_size(files.front()), 0U);

  const auto second = boot_once({"--btf-cache", cache.string()});
  EXPECT_NE(second.err.find("kernel types from " + files.front().string() + " (cached)"), std::string::npos)
      << second.err;
  EXPECT_EQ(this_kernels().size(), 1U);

  // A tool upgrade: the extract of the older object is replaced, not kept.
  const auto name = files.front().filename().string();
  const auto older_object = cache / (name.substr(0, name.find('-') + 1) + "0000000000000000.btf");
  std::filesystem::rename(files.front(), older_object);
  const auto third = boot_filling_cache({"--btf-cache", cache.string()});
  EXPECT_NE(third.err.find(kFromKernel), std::string::npos) << third.err;
  EXPECT_EQ(this_kernels(), files) << "the older object's extract is still there";
  EXPECT_TRUE(std::filesystem::exists(other_kernel)) << "another kernel's extract was removed";
}

// Whoever can write to the cache decides which kernel memory the programs
// read: a directory others may write to is not used, whatever it holds.
TEST_F(StartTest, BtfCacheOthersCanWriteToIsIgnored) {
  const auto cache = dir() / "btf-cache";
  boot_filling_cache({"--btf-cache", cache.string()});
  ASSERT_EQ(files_in(cache).size(), 1U);
  ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
  const auto r = boot_once({"--btf-cache", cache.string()});
  EXPECT_NE(r.err.find(kFromKernel), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a directory only this user can write to"), std::string::npos) << r.err;
}

// A damaged extract (disk error, a crash mid-copy by hand) must not stop the
// tool: it warns, reads the kernel's BTF instead and refills the cache.
TEST_F(StartTest, DamagedBtfCacheIsReplaced) {
  const auto cache = dir() / "btf-cache";
  boot_filling_cache({"--btf-cache", cache.string()});
  const auto files = files_in(cache);
  ASSERT_EQ(files.size(), 1U);
  const auto good = read_file(files.front());
  std::ofstream(files.front(), std::ios::trunc) << "not BTF at all";
  const auto r = boot_filling_cache({"--btf-cache", cache.string()});
  EXPECT_NE(r.err.find("is unusable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kFromKernel), std::string::npos) << r.err;
  ASSERT_EQ(files_in(cache).size(), 1U);
  EXPECT_EQ(read_file(files.front()), good) << "not refilled";
}

TEST_F(StartTest, BtfCacheOff) {
  const auto r = boot_once({"--btf-cache", "off"});
  EXPECT_NE(r.err.find(kFromKernel), std::string::npos) << r.err;
}

// Where tracefs is not mounted (these runs hide the host's, if it has one),
// the first run on a boot finds the syscall tracepoint ids through a private
// mount and keeps them for the next runs, which neither fork nor mount; a
// damaged file is looked up again.
TEST_F(StartTest, SyscallTracepointIdsAreCachedForTheRestOfTheBoot) {
  const auto cache = dir() / "cache";
  ASSERT_TRUE(std::filesystem::create_directory(cache));
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  const auto earlier_boot = cache / "syscall-tracepoints-00000000-0000-0000-0000-000000000000";
  std::ofstream(earlier_boot) << "1 2\n";
  const auto first = boot_once_without_tracefs({"--btf-cache", cache.string()});
  EXPECT_NE(first.err.find("(ids from a private tracefs mount)"), std::string::npos) << first.err;
  const auto files = files_in(cache, "syscall-tracepoints-", "");
  ASSERT_EQ(files.size(), 1U) << "an earlier boot's ids are left";
  EXPECT_EQ(files.front().filename().string(),
            "syscall-tracepoints-" + split_lines(read_file("/proc/sys/kernel/random/boot_id")).at(0));

  // The kernel's own ids, from tracefs.
  const auto ids =
      run_process(with_tracefs(Tracefs::Mounted, {"/bin/cat", "/sys/kernel/tracing/events/syscalls/sys_enter_execve/id",
                                                  "/sys/kernel/tracing/events/syscalls/sys_exit_listen/id"}),
                  dir(), 30s);
  ASSERT_TRUE(ids.status.exited && ids.status.code == 0) << ids.err;
  const auto lines = split_lines(ids.out);
  ASSERT_EQ(lines.size(), 2U) << ids.out;
  EXPECT_EQ(read_file(files.front()), lines[0] + " " + lines[1] + "\n");

  const auto second = boot_once_without_tracefs({"--btf-cache", cache.string()});
  EXPECT_NE(second.err.find("(ids from " + files.front().string() + " (cached))"), std::string::npos) << second.err;

  std::ofstream(files.front(), std::ios::trunc) << "862";
  const auto third = boot_once_without_tracefs({"--btf-cache", cache.string()});
  EXPECT_NE(third.err.find("(ids from a private tracefs mount)"), std::string::npos) << third.err;
  EXPECT_EQ(read_file(files.front()), lines[0] + " " + lines[1] + "\n") << "not rewritten";
}

// Both ways of seeing execve and listen measure the same boots; -v says
// which one ran.
TEST_F(StartTest, SyscallTracepointsWithoutTracefsMountedOnTheHost) {
  const auto r = boot_once({"--syscall-hooks", "tracepoints"});
  EXPECT_NE(r.err.find("execve/listen through syscalls:* tracepoints"), std::string::npos) << r.err;
}

TEST_F(StartTest, RawSyscallsFallback) {
  expect_three_boots_traced({"--syscall-hooks", "raw_syscalls"}, "execve/listen through raw_syscalls");
}

// Both ways of attaching the probe read the phases and hpids of the same
// boots; -v says which one ran.
TEST_F(StartTest, ProbeThroughOneUprobeMultiLink) {
  expect_three_boots_traced({"--usdt-attach", "uprobe_multi"}, "the probe through one uprobe_multi link");
}

TEST_F(StartTest, ProbeThroughLibbpfPerfUprobes) {
  expect_three_boots_traced({"--usdt-attach", "perf"}, "the probe through perf uprobes (--usdt-attach perf)");
}

// A probe guarded by a semaphore fires only while a tracer has raised it:
// the binary passes START_SV (argc 1) with its own pid only then.
TEST_F(StartTest, SemaphoreGuardedProbeIsRaisedByEitherAttachment) {
  for (const char* how : {"uprobe_multi", "perf"}) {
    const auto r = run_process(
        {sampler().string(), "--haconiwa", HACOBOOT_SEMAPHORE_PROBES_PATH, "--btf-cache", HACOBOOT_TEST_BTF_CACHE,
         "--usdt-attach", how, "--format", "json", "--run", HACOBOOT_SEMAPHORE_PROBES_PATH},
        dir(), 90s);
    ASSERT_TRUE(r.status.exited && r.status.code == 0) << how << ": " << r.status.describe() << "\nstderr: " << r.err;
    const auto summary = nlohmann::json::parse(r.out);
    EXPECT_EQ(summary.value("boots", nlohmann::json::object()).value("started", -1), 1) << how << ": " << r.out;
  }
}

}  // namespace
}  // namespace hacoboot::it
