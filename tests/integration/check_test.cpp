// --check, the operator's "why does it not trace here?", and --btf, the
// kernel types from a file for a kernel without its own: each line --check
// can print MISSING on this machine, made to happen.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

class CheckTest : public IntegrationTest {
 protected:
  // argv run in a private mount namespace where /sys/kernel/btf is an empty
  // tmpfs: what a kernel built without CONFIG_DEBUG_INFO_BTF looks like.
  static std::vector<std::string> without_kernel_btf(const std::vector<std::string>& argv) {
    const auto unshare = find_in_path("unshare");
    if (!unshare) throw std::runtime_error("unshare not found in PATH");
    std::vector<std::string> all{unshare->string(),
                                 "--mount",
                                 "--propagation",
                                 "private",
                                 "/bin/sh",
                                 "-c",
                                 "mount -t tmpfs hidden-btf /sys/kernel/btf && exec \"$@\"",
                                 "sh"};
    all.insert(all.end(), argv.begin(), argv.end());
    return all;
  }

  // A copy of the running kernel's BTF, as BTFHub would provide it.
  std::filesystem::path btf_copy() {
    const auto copy = new_file("vmlinux.btf");
    std::filesystem::copy_file("/sys/kernel/btf/vmlinux", copy);
    return copy;
  }

  ProcessResult check(const std::vector<std::string>& args) { return run_sampler(with_check(args)); }

  static std::vector<std::string> with_check(std::vector<std::string> args) {
    args.insert(args.begin(), "--check");
    return args;
  }

  static void expect_exit(const ProcessResult& r, int code) {
    EXPECT_TRUE(r.status.exited && r.status.code == code)
        << "expected exit " << code << ", " << r.status.describe() << "\nstdout:\n"
        << r.out << "stderr:\n"
        << r.err;
  }
};

// The line of the report for `item`, or "" when there is none.
std::string line_of(const std::string& report, const std::string& item) {
  for (const auto& line : split_lines(report)) {
    if (line.starts_with(item + "  ")) return line;
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(CheckTest, ReadyHereAndAttachesAndWritesNothing) {
  const auto cache = dir() / "no-cache-yet";
  const auto r = check({"--btf-cache", cache.string()});
  expect_exit(r, 0);
  for (const char* item :
       {"kernel", "kernel BTF", "BPF ring buffer (5.8+)", "sched_switch's prev_state (5.18+)",
        "uprobe_multi links (6.6+)", "capabilities", "syscall tracepoints", "BTF cache", "haconiwa"}) {
    EXPECT_FALSE(line_of(r.out, item).empty()) << "no line for " << item << ":\n" << r.out;
  }
  EXPECT_TRUE(contains(line_of(r.out, "haconiwa"), "1 site of haconiwa:bootstrap_phase_pass")) << r.out;
  EXPECT_TRUE(contains(line_of(r.out, "BTF cache"), "not there yet: the first run")) << r.out;
  EXPECT_TRUE(split_lines(r.out).back().starts_with("ready to trace")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(cache)) << "--check created the cache directory";
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CheckTest, WithoutKernelBtfItIsMissingAndABtfFileMakesItReady) {
  const auto btf = btf_copy();
  auto r = run_process(without_kernel_btf(sampler_argv(with_check({}))), dir(), 60s);
  expect_exit(r, 1);
  EXPECT_TRUE(contains(line_of(r.out, "kernel BTF"), "MISSING")) << r.out;
  EXPECT_TRUE(contains(line_of(r.out, "kernel BTF"), "--btf")) << "the line says what to do:\n" << r.out;
  EXPECT_EQ(split_lines(r.out).back(), "not ready: kernel BTF") << r.out;

  r = run_process(without_kernel_btf(sampler_argv(with_check({"--btf", btf.string()}))), dir(), 60s);
  expect_exit(r, 0);
  EXPECT_TRUE(contains(line_of(r.out, "kernel BTF"), btf.string() + " (--btf)")) << r.out;
}

TEST_F(CheckTest, AsNobodyTheCapabilitiesAreMissing) {
  const auto sampler = sampler_for_other_users();
  const auto setpriv = find_in_path("setpriv");
  ASSERT_TRUE(setpriv) << "setpriv not found in PATH";
  const auto r = run_process({setpriv->string(), "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                              sampler.string(), "--check", "--haconiwa", launcher().string(), "--btf-cache", "off"},
                             dir(), 60s);
  expect_exit(r, 1);
  EXPECT_TRUE(contains(line_of(r.out, "capabilities"), "MISSING   held: none; needs CAP_BPF and CAP_PERFMON")) << r.out;
  // What could not be probed without them is judged by the kernel's version, not called missing.
  EXPECT_TRUE(contains(line_of(r.out, "BPF ring buffer (5.8+)"), "yes, by version")) << r.out;
  EXPECT_EQ(split_lines(r.out).back(), "not ready: capabilities") << r.out;
}

TEST_F(CheckTest, ABinaryWithoutTheProbeOrNoneAtAllIsMissing) {
  auto r = run_process({sampler().string(), "--check", "--haconiwa", "/bin/true"}, dir(), 60s);
  expect_exit(r, 1);
  EXPECT_TRUE(contains(line_of(r.out, "haconiwa"), "no USDT probe haconiwa:bootstrap_phase_pass")) << r.out;
  EXPECT_EQ(split_lines(r.out).back(), "not ready: haconiwa") << r.out;

  r = run_process({sampler().string(), "--check", "--haconiwa", "no-such-haconiwa-here"}, dir(), 60s);
  expect_exit(r, 1);
  EXPECT_TRUE(contains(line_of(r.out, "haconiwa"), "'no-such-haconiwa-here' not found in PATH")) << r.out;
}

TEST_F(CheckTest, TheSyscallTracepointsLineFollowsTracefs) {
  auto r = run_process(with_tracefs(Tracefs::Mounted, sampler_argv(with_check({}))), dir(), 60s);
  expect_exit(r, 0);
  const auto mounted = line_of(r.out, "syscall tracepoints");
  EXPECT_TRUE(contains(mounted, "sys_enter_execve (id ")) << r.out;
  EXPECT_TRUE(contains(mounted, ") in /sys/kernel/tracing")) << r.out;

  r = run_process(with_tracefs(Tracefs::Unmounted, sampler_argv(with_check({}))), dir(), 60s);
  expect_exit(r, 0);
  EXPECT_TRUE(contains(line_of(r.out, "syscall tracepoints"),
                       "tracefs not mounted: the ids are read from a private "
                       "mount"))
      << r.out;
}

TEST_F(CheckTest, AFileThatIsNoBtfIsMissing) {
  const auto not_btf = new_file("not.btf");
  write_file(not_btf, "{\"schema\": 3}\n");
  const auto r = check({"--btf", not_btf.string()});
  expect_exit(r, 1);
  EXPECT_TRUE(contains(line_of(r.out, "kernel BTF"), "not BTF")) << r.out;
}

// Raw BTF (linux/btf.h) of the given types and strings: a header, then both.
std::string raw_btf(const std::vector<std::uint32_t>& types, const std::string& strings) {
  const auto types_len = static_cast<std::uint32_t>(types.size() * sizeof(std::uint32_t));
  const std::vector<std::uint32_t> header{0x0001eB9F,  // magic (0xeB9F), version 1, flags 0
                                          24,          // hdr_len
                                          0,           // type_off
                                          types_len,   // type_len
                                          types_len,   // str_off
                                          static_cast<std::uint32_t>(strings.size())};
  std::string bytes;
  for (const auto& words : {header, types}) {
    bytes.append(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::uint32_t));
  }
  return bytes + strings;
}

constexpr std::uint32_t kKindInt = 1;
constexpr std::uint32_t kKindStruct = 4;

// Files that are no kernel's BTF, some starting as one does: --check parses
// --btf as the run does and says what is wrong, naming the file; the run
// refuses it before loading anything, in the same words.
TEST_F(CheckTest, EveryFileThatIsNoKernelsBtfIsMissingAndRefused) {
  const auto vmlinux = read_file("/sys/kernel/btf/vmlinux");
  ASSERT_GT(vmlinux.size(), 4096U);
  struct Bad {
    std::string name;
    std::string contents;
    std::string problem;
  };
  const std::vector<Bad> bad_files{
      {"truncated.btf", vmlinux.substr(0, vmlinux.size() / 2), "not valid BTF"},
      {"garbage.btf", vmlinux.substr(0, 4) + std::string(4096, '\x5A'), "not valid BTF"},
      {"four-bytes.btf", vmlinux.substr(0, 4), "not valid BTF"},
      // An int named "int": valid BTF, of no kernel.
      {"an-int.btf", raw_btf({1, kKindInt << 24, 4, 32}, std::string("\0int\0", 5)),
       "BTF without struct task_struct: not the types of a kernel"},
  };
  std::vector<std::pair<std::string, std::string>> files;  // path, problem
  for (const auto& bad : bad_files) {
    const auto path = new_file(bad.name);
    write_file(path, bad.contents);
    files.emplace_back(path.string(), bad.problem);
  }
  files.emplace_back("/bin/true", "an ELF file without a .BTF section");
  // Sparse: cheap to make, and never read.
  const auto huge = new_file("huge.btf");
  write_file(huge, vmlinux.substr(0, 4));
  std::filesystem::resize_file(huge, (std::uintmax_t{64} << 20) + 1);
  files.emplace_back(huge.string(), "larger than 64 MiB");

  for (const auto& [path, problem] : files) {
    const auto said = "--btf " + path + ": " + problem;
    auto r = check({"--btf", path});
    expect_exit(r, 1);
    const auto line = line_of(r.out, "kernel BTF");
    EXPECT_TRUE(contains(line, "MISSING") && contains(line, said)) << said << ":\n" << r.out;
    r = run_sampler({"--btf", path, "--run", "true"});
    expect_exit(r, 2);
    EXPECT_TRUE(contains(r.err, said)) << said << ":\n" << r.err;
  }
}

// BTF that parses, with a task_struct, but not the one the programs read:
// the load fails, and says which file's types it failed with.
TEST_F(CheckTest, ALoadThatFailsWithTheBtfFileNamesIt) {
  const auto btf = new_file("empty-task-struct.btf");
  write_file(btf, raw_btf({1, kKindStruct << 24, 0}, std::string("\0task_struct\0", 13)));
  const auto r = run_sampler({"--btf", btf.string(), "--run", "true"});
  expect_exit(r, 1);
  EXPECT_TRUE(contains(r.err, "--btf " + btf.string() + ": the BPF programs do not load with its kernel types"))
      << r.err;
}

// Where the kernel has no BTF of its own, a file of it does: the boots are
// traced whole, with their scheduler states.
TEST_F(CheckTest, ABtfFileTracesBootsWhereTheKernelHasNone) {
  const auto btf = btf_copy();
  const auto r = run_process(without_kernel_btf(sampler_argv({"--btf", btf.string(), "-v", "--format", "json", "--run",
                                                              launcher_command({"-n", "2"}), app().string()})),
                             dir(), 90s);
  expect_exit(r, 0);
  ASSERT_FALSE(HasFailure());
  const auto summary = nlohmann::json::parse(r.out);
  expect_boot_counts(summary, 2, 2, 2, 0);
  EXPECT_GT(summary["metrics"]["listen"]["noise_free"].value("count", 0), 0) << "no scheduler states";
  EXPECT_TRUE(contains(r.err, "kernel types from " + btf.string() + " (--btf)")) << r.err;
}

// The BTF file is an input: no output may replace it.
TEST_F(CheckTest, AnOutputOnTheBtfFileIsRefused) {
  const auto btf = btf_copy();
  const auto before = std::filesystem::file_size(btf);
  const auto r = run_sampler({"--btf", btf.string(), "-o", btf.string(), "--run", "true"});
  expect_exit(r, 2);
  EXPECT_TRUE(contains(r.err, "-o " + btf.string() + " and --btf " + btf.string() + " are the same file")) << r.err;
  EXPECT_EQ(std::filesystem::file_size(btf), before);
}

}  // namespace
}  // namespace hacoboot::it
