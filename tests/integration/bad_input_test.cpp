// Bad input the tool must refuse (or, for a relative COMMAND, warn about),
// one table row per case: what errors_test.cpp does not cover. Every row
// runs `hacoboot-sampler --haconiwa <launcher copy> ARGS... --run true`, so
// everything but the problem under test is valid and a wrongly accepted row
// ends quickly instead of tracing until a timeout.
#include <elf.h>

#include <fstream>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

constexpr const char* kPrecious = "precious content: must not be truncated\n";

// One row: {name, args, expected exit, stderr must contain}, and optional
// extra checks added with the chained setters.
struct BadInputCase {
  BadInputCase(std::string name_, std::vector<std::string> args_, int exit_code_, std::string expected_in_stderr_)
      : name(std::move(name_)),
        args(std::move(args_)),
        exit_code(exit_code_),
        expected_in_stderr(std::move(expected_in_stderr_)) {}
  // This file (holding kPrecious) must not be written or truncated.
  BadInputCase keeps(std::string file) && {
    untouched_file = std::move(file);
    return std::move(*this);
  }
  // This file must not be created.
  BadInputCase creates_no(std::string file) && {
    must_not_exist = std::move(file);
    return std::move(*this);
  }
  // The run goes on: stdout carries the summary.
  BadInputCase prints(std::string text) && {
    expected_in_stdout = std::move(text);
    return std::move(*this);
  }
  // Run through setpriv as nobody:nogroup, without capabilities.
  BadInputCase as_nobody() && {
    nobody = true;
    return std::move(*this);
  }
  // Run in a private mount namespace where /sys/kernel/btf is an empty
  // tmpfs: what a kernel built without CONFIG_DEBUG_INFO_BTF looks like.
  BadInputCase without_kernel_btf() && {
    hide_kernel_btf = true;
    return std::move(*this);
  }

  std::string name;
  std::vector<std::string> args;  // {dir} is replaced by the test's directory
  int exit_code;
  std::string expected_in_stderr;  // {dir} expanded too
  std::string untouched_file;
  std::string must_not_exist;
  std::string expected_in_stdout;
  bool nobody = false;
  bool hide_kernel_btf = false;
};

void PrintTo(const BadInputCase& c, std::ostream* os) {
  *os << c.name;
}

std::string expand(std::string text, const std::filesystem::path& dir) {
  const std::string key = "{dir}";
  for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + dir.string().size())) {
    text.replace(pos, key.size(), dir.string());
  }
  return text;
}

void write_bytes(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  ASSERT_TRUE(out.good()) << "writing " << path;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_bytes(path, text.data(), text.size());
}

// The ELF identification every header below starts with.
template <typename Header>
void fill_ident(Header& h, unsigned char elf_class) {
  h.e_ident[EI_MAG0] = ELFMAG0;
  h.e_ident[EI_MAG1] = ELFMAG1;
  h.e_ident[EI_MAG2] = ELFMAG2;
  h.e_ident[EI_MAG3] = ELFMAG3;
  h.e_ident[EI_CLASS] = elf_class;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_ident[EI_OSABI] = ELFOSABI_SYSV;
}

// gcc -m32 has no 32-bit libc on the build machine: a bare ELF32 executable
// header (i386, no sections) is all the tool may look at before refusing.
void write_elf32(const std::filesystem::path& path) {
  Elf32_Ehdr h{};
  fill_ident(h, ELFCLASS32);
  h.e_type = ET_EXEC;
  h.e_machine = EM_386;
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf32_Ehdr);
  h.e_phentsize = sizeof(Elf32_Phdr);
  h.e_shentsize = sizeof(Elf32_Shdr);
  write_bytes(path, &h, sizeof h);
}

// A 64-bit executable header for the architecture this machine is not.
void write_foreign_elf64(const std::filesystem::path& path) {
  Elf64_Ehdr h{};
  fill_ident(h, ELFCLASS64);
  h.e_type = ET_EXEC;
#if defined(__aarch64__)
  h.e_machine = EM_X86_64;
#else
  h.e_machine = EM_AARCH64;
#endif
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  h.e_phentsize = sizeof(Elf64_Phdr);
  h.e_shentsize = sizeof(Elf64_Shdr);
  write_bytes(path, &h, sizeof h);
}

class BadInputMatrixTest : public IntegrationTest, public ::testing::WithParamInterface<BadInputCase> {
 protected:
  // Every file a row may name; cheap enough to make for each row.
  void make_inputs() {
    write_elf32(dir() / "elf32");
    write_foreign_elf64(dir() / "foreign-elf64");
    std::filesystem::permissions(dir() / "elf32", std::filesystem::perms::owner_all);
    std::filesystem::permissions(dir() / "foreign-elf64", std::filesystem::perms::owner_all);
    write_text(dir() / "names.txt", "123 APP_READY\n");
    write_text(dir() / "bad-names.txt", "# phases of our app\n123 APP_READY\n124 TWO WORDS\n");
    write_text(dir() / "bad-number-names.txt", "123 APP_READY\n\n500 TOO_BIG\n");
    write_text(dir() / "not-json.json", "schema: 1\nthis is YAML-ish, not JSON\n");
    write_text(dir() / "schema99.json",
               R"({"schema": 99, "metrics": {"execve": {"count": 0}, "listen": {"count": 0}}, "phases": []})");
    for (const char* name : {"precious-out", "precious-events", "precious-trace"}) {
      write_text(dir() / name, kPrecious);
    }
    std::filesystem::create_symlink(dir() / "precious-out", dir() / "link-out");
    std::filesystem::create_symlink(dir() / "precious-events", dir() / "link-events");
    std::filesystem::create_symlink(dir() / "precious-trace", dir() / "link-trace");
    std::filesystem::create_symlink(dir() / "dangling-target", dir() / "link-dangling");
  }
};

TEST_P(BadInputMatrixTest, Row) {
  const auto& row = GetParam();
  ASSERT_NO_FATAL_FAILURE(make_inputs());

  std::vector<std::string> argv;
  if (row.nobody) {
    const auto setpriv = find_in_path("setpriv");
    if (!setpriv) GTEST_SKIP() << "setpriv not found in PATH";
    argv = {setpriv->string(), "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  }
  if (row.hide_kernel_btf) {
    const auto unshare = find_in_path("unshare");
    if (!unshare) GTEST_SKIP() << "unshare not found in PATH";
    argv = {unshare->string(),
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            "mount -t tmpfs hidden-btf /sys/kernel/btf && exec \"$@\"",
            "sh"};
  }
  argv.push_back((row.nobody ? sampler_for_other_users() : sampler()).string());
  bool has_haconiwa = false;
  std::vector<std::string> args;
  for (const auto& arg : row.args) {
    args.push_back(expand(arg, dir()));
    has_haconiwa = has_haconiwa || arg == "--haconiwa";
  }
  if (!has_haconiwa) argv.insert(argv.end(), {"--haconiwa", launcher().string()});
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--run", "true"});

  const auto r = run_process(argv, dir(), 60s);
  // The whole story once, with the exit status; the checks below are short.
  EXPECT_TRUE(r.status.exited && r.status.code == row.exit_code)
      << "expected exit " << row.exit_code << "\ncommand: " << shell_command(argv) << "\n"
      << r.status.describe() << "\n--- stderr ---\n"
      << r.err << "--- stdout ---\n"
      << r.out;
  const auto wanted = expand(row.expected_in_stderr, dir());
  EXPECT_NE(r.err.find(wanted), std::string::npos) << "stderr should contain '" << wanted << "'; it is: " << r.err;
  if (row.exit_code != 0) {
    EXPECT_EQ(split_lines(r.err).size(), 1U) << "an error is one line on stderr";
    EXPECT_EQ(r.err.rfind("hacoboot-sampler: error: ", 0), 0U) << "stderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << "nothing on stdout on an error";
  }
  if (!row.expected_in_stdout.empty()) {
    EXPECT_NE(r.out.find(row.expected_in_stdout), std::string::npos) << "stdout: " << r.out;
  }
  if (!row.untouched_file.empty()) {
    EXPECT_EQ(read_file(expand(row.untouched_file, dir())), kPrecious)
        << "the symlink's target " << expand(row.untouched_file, dir()) << " was written or truncated";
  }
  if (!row.must_not_exist.empty()) {
    EXPECT_FALSE(std::filesystem::exists(expand(row.must_not_exist, dir())))
        << expand(row.must_not_exist, dir()) << " was created";
  }
}

std::vector<BadInputCase> rows() {
  using C = BadInputCase;
  return {
      // --haconiwa: ELF files the tool cannot trace.
      C("Haconiwa32BitElf", {"--haconiwa", "{dir}/elf32"}, 2, "32-bit"),
      C("HaconiwaForeignArchitecture", {"--haconiwa", "{dir}/foreign-elf64"}, 2, "another architecture"),
      // --phase-names
      C("EmptyPhaseNamesValue", {"--phase-names", ""}, 2, "--phase-names"),
      // "--phase-names=" is an empty value too: it must not swallow the next
      // argument as the file name.
      C("EmptyPhaseNamesValueWithEquals", {"--phase-names=", "{dir}/names.txt"}, 2, "--phase-names"),
      C("PhaseNamesLineWithThreeFields", {"--phase-names", "{dir}/bad-names.txt"}, 2,
        "{dir}/bad-names.txt:3: expected NUMBER NAME"),
      C("PhaseNamesNumberOutOfRange", {"--phase-names", "{dir}/bad-number-names.txt"}, 2,
        "{dir}/bad-number-names.txt:3: '500' is not a phase number"),
      // --baseline and the gate
      C("BaselineNotJson", {"--baseline", "{dir}/not-json.json"}, 2, "{dir}/not-json.json: not JSON"),
      C("BaselineSchema99", {"--baseline", "{dir}/schema99.json"}, 2, "schema 99 is not supported"),
      C("GateUnknownMetric", {"--gate", "execve,NO_SUCH_METRIC"}, 2, "NO_SUCH_METRIC"),
      // --ringbuf-size, --warmup
      C("RingBufferSizeZero", {"--ringbuf-size", "0"}, 2, "--ringbuf-size: '0'"),
      C("RingBufferSizeTwoGiB", {"--ringbuf-size", "2G"}, 2, "--ringbuf-size: '2G'"),
      C("RingBufferSizeNotANumber", {"--ringbuf-size", "abc"}, 2, "--ringbuf-size: 'abc'"),
      C("NegativeWarmup", {"--warmup", "-1"}, 2, "--warmup"),
      // Output files
      C("EventsInMissingDirectory", {"--events", "{dir}/missing/rows.tsv"}, 2, "{dir}/missing/rows.tsv"),
      // "--events=" with the value left empty must not take the next argument
      // as the path (here: writing the rows to consumed.tsv).
      C("EmptyEventsValueWithEquals", {"--events=", "{dir}/consumed.tsv"}, 2, "--events")
          .creates_no("{dir}/consumed.tsv"),
      C("OutputIsASymlink", {"-o", "{dir}/link-out"}, 2, "symbolic link").keeps("{dir}/precious-out"),
      C("EventsIsASymlink", {"--events", "{dir}/link-events"}, 2, "symbolic link").keeps("{dir}/precious-events"),
      C("TraceOutIsASymlink", {"--trace-out", "{dir}/link-trace"}, 2, "symbolic link").keeps("{dir}/precious-trace"),
      C("OutputIsADanglingSymlink", {"-o", "{dir}/link-dangling"}, 2, "symbolic link")
          .creates_no("{dir}/dangling-target"),
      C("OutputToDevFull", {"-o", "/dev/full"}, 1, "writing /dev/full failed"),
      // Privileges: nobody has neither CAP_BPF nor CAP_SYS_ADMIN.
      C("NotRoot", {}, 1, "root or CAP_BPF").as_nobody(),
      // --run-as: the user is looked up before anything is loaded.
      C("RunAsUnknownUser", {"--run-as", "no-such-user-here"}, 2, "--run-as: no user 'no-such-user-here'"),
      // The kernel
      C("KernelWithoutBtf", {}, 1, "kernel BTF not found").without_kernel_btf(),
      // Not an error: a relative COMMAND is only warned about, and the run goes on.
      C("RelativeCommandWarnsButRuns", {"hacoboot-demo-app"}, 0,
        "warning: COMMAND 'hacoboot-demo-app' is not an absolute path")
          .prints("Boots: 0 started"),
  };
}

INSTANTIATE_TEST_SUITE_P(BadInput2, BadInputMatrixTest, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<BadInputCase>& test) { return test.param.name; });

}  // namespace
}  // namespace hacoboot::it
