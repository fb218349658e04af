// How the tool starts: the kernel types CO-RE needs, from a cache filled once
// per kernel, the two ways of seeing execve and listen, and the two ways of
// attaching the probe.
#include <sys/stat.h>

#include <cctype>
#include <fstream>
#include <thread>

#include "fixture.hpp"
#include "support/build_paths.hpp"

namespace hacoboot::it {
namespace {

class StartTest : public IntegrationTest {
 protected:
  // One boot, -v: the run's stderr tells where the kernel types came from.
  ProcessResult boot_once(const std::vector<std::string>& args) {
    return expect_one_boot(run_sampler(one_boot_argv(launcher_command({"-n", "1"}), args)));
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

  // Whether the tool's bpftool child still runs: a live child running bpftool,
  // or one still named as the tool (forked, not yet exec'd; the tool's other
  // helper, the tracefs lookup, has ended by the time it starts bpftool).
  static bool bpftool_running(pid_t tool) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const auto name = entry.path().filename().string();
      if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) == 0) continue;
      const auto stat = proc_stat(static_cast<pid_t>(std::stol(name)));
      // Run through /proc/self/fd/N, bpftool is named after the descriptor:
      // its executable tells.
      std::error_code unreadable;
      const auto exe = std::filesystem::read_symlink("/proc/" + name + "/exe", unreadable);
      if (stat && stat->ppid == tool && stat->state != 'Z' &&
          (exe.filename() == "bpftool" || stat->comm == "hacoboot-sample")) {
        return true;
      }
    }
    return false;
  }

  // The tool run with `args` in a private mount namespace where tracefs is
  // mounted or not, whatever the host does, after the shell commands `then`.
  ProcessResult run_with_tracefs(Tracefs state, const std::vector<std::string>& args,
                                 const std::string& then = "true") {
    std::vector<std::string> argv{"/bin/sh", "-c", then + " && exec \"$@\"", "sh"};
    const auto tool = sampler_argv(one_boot_argv(launcher_command({"-n", "1"}), args));
    argv.insert(argv.end(), tool.begin(), tool.end());
    return run_process(with_tracefs(state, argv), dir(), 90s);
  }

  ProcessResult boot_once_with_tracefs(Tracefs state, const std::vector<std::string>& args,
                                       const std::string& then = "true") {
    return expect_one_boot(run_with_tracefs(state, args, then));
  }

  // The kernel's own ids of these tracepoints ("syscalls/sys_enter_execve"...),
  // read from tracefs (the host's, or one mounted in a private namespace).
  std::vector<std::string> tracepoint_ids(const std::vector<std::string>& events) {
    std::vector<std::string> cat{"/bin/cat"};
    for (const auto& event : events) cat.push_back("/sys/kernel/tracing/events/" + event + "/id");
    const auto ids = run_process(with_tracefs(Tracefs::Mounted, cat), dir(), 30s);
    EXPECT_TRUE(ids.status.exited && ids.status.code == 0) << ids.err;
    auto lines = split_lines(ids.out);
    EXPECT_EQ(lines.size(), events.size()) << ids.out;
    lines.resize(events.size());
    return lines;
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

// An attach that fails once the programs have loaded says nothing of the
// kernel types they loaded with: the cache stays for the next run. The
// probe's semaphore sits at an odd address, which the kernel refuses at
// every attach (a process that exits while the tool starts would do too,
// but only by a race).
TEST_F(StartTest, AnAttachFailureKeepsTheBtfCache) {
  const auto cache = dir() / "btf-cache";
  boot_filling_cache({"--btf-cache", cache.string()});
  const auto files = files_in(cache);
  ASSERT_EQ(files.size(), 1U);
  const auto extract = read_file(files.front());
  const auto r = run_process({sampler().string(), "--haconiwa", test::misaligned_semaphore_probe().string(),
                              "--btf-cache", cache.string(), "--usdt-attach", "perf", "--run", "true"},
                             dir(), 90s);
  EXPECT_TRUE(r.status.exited && r.status.code == 1) << r.status.describe() << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find("attaching USDT haconiwa:bootstrap_phase_pass"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("is unusable"), std::string::npos) << r.err;
  EXPECT_EQ(files_in(cache), files) << "the cache was emptied";
  EXPECT_EQ(read_file(files.front()), extract);
}

TEST_F(StartTest, BtfCacheOff) {
  const auto r = boot_once({"--btf-cache", "off"});
  EXPECT_NE(r.err.find(kFromKernel), std::string::npos) << r.err;
}

constexpr const char* kFromPrivateMount = "(ids from a private tracefs mount";

// A cache directory only this user may write to, as the tool wants it.
std::filesystem::path make_cache_dir(const std::filesystem::path& path) {
  EXPECT_TRUE(std::filesystem::create_directory(path));
  EXPECT_EQ(::chmod(path.c_str(), 0700), 0);
  return path;
}

std::filesystem::path ids_file_in(const std::filesystem::path& cache) {
  return cache / ("syscall-tracepoints-" + split_lines(read_file("/proc/sys/kernel/random/boot_id")).at(0));
}

// Where tracefs is not mounted, the first run on a boot finds the syscall
// tracepoint ids through a private mount and keeps them for the next runs,
// which neither fork nor mount; a damaged file is looked up again.
TEST_F(StartTest, SyscallTracepointIdsAreCachedForTheRestOfTheBoot) {
  const auto cache = make_cache_dir(dir() / "cache");
  const auto earlier_boot = cache / "syscall-tracepoints-00000000-0000-0000-0000-000000000000";
  std::ofstream(earlier_boot) << "1 2\n";
  const auto first = boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", cache.string()});
  EXPECT_NE(first.err.find(kFromPrivateMount), std::string::npos) << first.err;
  const auto files = files_in(cache, "syscall-tracepoints-", "");
  ASSERT_EQ(files.size(), 1U) << "an earlier boot's ids are left";
  EXPECT_EQ(files.front(), ids_file_in(cache));

  const auto ids = tracepoint_ids({"syscalls/sys_enter_execve", "syscalls/sys_exit_listen"});
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(read_file(files.front()), ids[0] + " " + ids[1] + "\n");

  const auto second = boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", cache.string()});
  EXPECT_NE(second.err.find("(ids from " + files.front().string() + " (cached))"), std::string::npos) << second.err;

  std::ofstream(files.front(), std::ios::trunc) << "862";
  const auto third = boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", cache.string()});
  EXPECT_NE(third.err.find(kFromPrivateMount), std::string::npos) << third.err;
  EXPECT_EQ(read_file(files.front()), ids[0] + " " + ids[1] + "\n") << "not rewritten";
}

// The ids cache decides which tracepoints the programs run on: whatever it
// holds (an id no tracepoint has, another tracepoint's, another syscall's or
// the other end of the syscall, garbage), boots are traced in full, stderr
// says what happened, the file ends up with the right ids, and the kernel
// types cached beside it are kept: they are not at fault.
TEST_F(StartTest, WrongCachedSyscallTracepointIdsAreReplaced) {
  const auto ids =
      tracepoint_ids({"syscalls/sys_enter_execve", "syscalls/sys_exit_listen", "syscalls/sys_exit_execve",
                      "syscalls/sys_enter_listen", "syscalls/sys_enter_openat", "sched/sched_process_free"});
  ASSERT_FALSE(HasFailure());
  const auto& execve = ids[0];
  const auto& listen = ids[1];
  const auto right = execve + " " + listen + "\n";
  const auto cache = make_cache_dir(dir() / "cache");
  boot_filling_cache({"--btf-cache", cache.string()});
  const auto extracts = files_in(cache);
  ASSERT_EQ(extracts.size(), 1U);
  const auto extract = read_file(extracts.front());
  const auto ids_file = ids_file_in(cache);

  constexpr const char* kWrong = "are wrong (";
  constexpr const char* kNoIds = "held no ids: removed";
  const std::vector<std::pair<std::string, std::string>> cases{
      {execve + " 999999\n", kWrong},  // no such tracepoint: opening it fails
      {"999999 " + listen + "\n", kWrong},
      {listen + " " + execve + "\n", kWrong},  // swapped: both attach, each misses its call
      {ids[2] + " " + ids[3] + "\n", kWrong},  // the other ends of both syscalls
      {ids[4] + " " + listen + "\n", kWrong},  // another syscall's entry
      {execve + " " + ids[5] + "\n", kWrong},  // a record too short for the program
      {"not ids at all\n", kNoIds},
      {"-1 -2\n", kNoIds},
      {execve + " " + listen + " 3\n", kNoIds},
  };
  for (const auto& [content, said] : cases) {
    SCOPED_TRACE("ids file: " + content);
    std::ofstream(ids_file, std::ios::trunc) << content;
    ASSERT_EQ(::chmod(ids_file.c_str(), 0600), 0);
    const auto r = boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", cache.string()});
    EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(kFromPrivateMount), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("kernel types from " + extracts.front().string() + " (cached)"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("is unusable"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(ids_file), right);
    ASSERT_TRUE(std::filesystem::exists(extracts.front())) << "the kernel types were discarded";
    EXPECT_EQ(read_file(extracts.front()), extract);
  }

  // --syscall-hooks tracepoints too: the ids are looked up again, not refused.
  std::ofstream(ids_file, std::ios::trunc) << listen + " " + execve + "\n";
  const auto r =
      boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", cache.string(), "--syscall-hooks", "tracepoints"});
  EXPECT_NE(r.err.find(kWrong), std::string::npos) << r.err;
  EXPECT_EQ(read_file(ids_file), right);

  const auto proven = boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", cache.string()});
  EXPECT_NE(proven.err.find("(ids from " + ids_file.string() + " (cached))"), std::string::npos) << proven.err;
  EXPECT_EQ(proven.err.find("warning"), std::string::npos) << proven.err;
}

// Ids read from a mounted tracefs are proven too; where they prove wrong (a
// tracefs that lies: here a tmpfs holding swapped ids), raw_syscalls take
// over, or --syscall-hooks tracepoints fails.
TEST_F(StartTest, SyscallTracepointIdsFromTracefsAreProven) {
  const auto mounted = boot_once_with_tracefs(Tracefs::Mounted, {"--btf-cache", "off"});
  EXPECT_NE(mounted.err.find("execve/listen through syscalls:* tracepoints (ids from /sys/kernel/tracing)"),
            std::string::npos)
      << mounted.err;

  const auto ids = tracepoint_ids({"syscalls/sys_enter_execve", "syscalls/sys_exit_listen"});
  ASSERT_FALSE(HasFailure());
  const std::string events = "/sys/kernel/tracing/events/syscalls";
  const std::string lying = "mount -t tmpfs tmpfs /sys/kernel/tracing && mkdir -p " + events + "/sys_enter_execve " +
                            events + "/sys_exit_listen && echo " + ids[1] + " > " + events +
                            "/sys_enter_execve/id && echo " + ids[0] + " > " + events + "/sys_exit_listen/id";
  const auto fallback = boot_once_with_tracefs(Tracefs::Unmounted, {"--btf-cache", "off"}, lying);
  EXPECT_NE(fallback.err.find("warning: syscalls:* tracepoints unusable (tracepoint id " + ids[1] +
                              " is not syscalls:sys_enter_execve"),
            std::string::npos)
      << fallback.err;
  EXPECT_NE(fallback.err.find("execve/listen through raw_syscalls (tracepoint id"), std::string::npos) << fallback.err;

  const auto refused =
      run_with_tracefs(Tracefs::Unmounted, {"--btf-cache", "off", "--syscall-hooks", "tracepoints"}, lying);
  EXPECT_TRUE(refused.status.exited && refused.status.code == 1) << refused.status.describe();
  EXPECT_NE(refused.err.find("--syscall-hooks tracepoints: tracepoint id"), std::string::npos) << refused.err;
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
        {sampler().string(), "--haconiwa", test::semaphore_probes().string(), "--btf-cache", test::btf_cache().string(),
         "--usdt-attach", how, "--format", "json", "--run", test::semaphore_probes().string()},
        dir(), 90s);
    ASSERT_TRUE(r.status.exited && r.status.code == 0) << how << ": " << r.status.describe() << "\nstderr: " << r.err;
    const auto summary = nlohmann::json::parse(r.out);
    EXPECT_EQ(summary.value("boots", nlohmann::json::object()).value("started", -1), 1) << how << ": " << r.out;
  }
}

}  // namespace
}  // namespace hacoboot::it
