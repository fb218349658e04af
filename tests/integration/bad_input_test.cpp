// Bad input the tool must refuse (or, for a relative COMMAND, warn about),
// one table row per case: what errors_test.cpp does not cover. Every row
// runs `hacoboot-sampler --haconiwa <launcher copy> ARGS... --run true`, so
// everything but the problem under test is valid and a wrongly accepted row
// ends quickly instead of tracing until a timeout.
#include <arpa/inet.h>
#include <elf.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <regex>

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
  // This file (or device node, FIFO...) must stay byte for byte as it was,
  // the same inode: not written, truncated or replaced.
  BadInputCase keeps(std::string file) && {
    untouched_files.push_back(std::move(file));
    return std::move(*this);
  }
  // This file must not be created.
  BadInputCase creates_no(std::string file) && {
    must_not_exist.push_back(std::move(file));
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
    private_mounts = "mount -t tmpfs hidden-btf /sys/kernel/btf";
    return std::move(*this);
  }
  // Run in a private mount namespace where the directory {dir}/read-only is
  // mounted read-only (a read-only file system, which root cannot write either).
  BadInputCase with_read_only_directory() && {
    private_mounts = "mount --bind {dir}/read-only {dir}/read-only && mount -o remount,bind,ro {dir}/read-only";
    return std::move(*this);
  }
  // {dir}/full is a small tmpfs of the test's own, holding a copy of
  // kPrecious as keep.json, and full.
  BadInputCase on_full_filesystem() && {
    full_filesystem = true;
    return std::move(*this);
  }
  // {port} in args is a TCP port of 127.0.0.1 that another socket listens on.
  BadInputCase with_busy_port() && {
    busy_port = true;
    return std::move(*this);
  }

  // Run with the test's directory as the current directory.
  BadInputCase in_its_dir() && {
    cwd_is_dir = true;
    return std::move(*this);
  }

  std::string name;
  std::vector<std::string> args;  // {dir} is replaced by the test's directory
  int exit_code;
  std::string expected_in_stderr;  // {dir} expanded too
  std::vector<std::string> untouched_files;
  std::vector<std::string> must_not_exist;
  std::string expected_in_stdout;
  bool nobody = false;
  std::string private_mounts;  // shell commands run in a private mount namespace first
  bool busy_port = false;
  bool full_filesystem = false;
  bool cwd_is_dir = false;
};

void PrintTo(const BadInputCase& c, std::ostream* os) {
  *os << c.name;
}

std::string replace_all(std::string text, const std::string& key, const std::string& value) {
  for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + value.size())) {
    text.replace(pos, key.size(), value);
  }
  return text;
}

std::string expand(const std::string& text, const std::filesystem::path& dir) {
  return replace_all(text, "{dir}", dir.string());
}

// What a row must leave as it was: the file's type, inode and bytes.
struct FileSnapshot {
  struct stat st {};
  std::string contents;
};

FileSnapshot snapshot(const std::filesystem::path& path) {
  FileSnapshot s;
  EXPECT_EQ(::lstat(path.c_str(), &s.st), 0) << path;
  if (S_ISREG(s.st.st_mode)) s.contents = read_file(path);
  return s;
}

void expect_unchanged(const std::filesystem::path& path, const FileSnapshot& before) {
  const auto after = snapshot(path);
  EXPECT_EQ(after.st.st_mode & S_IFMT, before.st.st_mode & S_IFMT) << path << " was replaced";
  EXPECT_EQ(after.st.st_ino, before.st.st_ino) << path << " was replaced";
  EXPECT_EQ(after.contents, before.contents) << path << " was written or truncated";
}

// A TCP socket listening on 127.0.0.1, on a port the kernel chose.
class BusyPort {
 public:
  BusyPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    const auto* generic = reinterpret_cast<sockaddr*>(&address);
    EXPECT_EQ(::bind(fd_, generic, size), 0) << std::strerror(errno);
    EXPECT_EQ(::listen(fd_, 1), 0) << std::strerror(errno);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size), 0);
    port_ = ntohs(address.sin_port);
  }
  BusyPort(const BusyPort&) = delete;
  BusyPort& operator=(const BusyPort&) = delete;
  BusyPort(BusyPort&&) = delete;
  BusyPort& operator=(BusyPort&&) = delete;
  ~BusyPort() { ::close(fd_); }
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

void write_bytes(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  ASSERT_TRUE(out.good()) << "writing " << path;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_bytes(path, text.data(), text.size());
}

// A small tmpfs, filled up, unmounted at the end of the scope.
class FullFilesystem {
 public:
  explicit FullFilesystem(std::filesystem::path path) : path_(std::move(path)) {
    std::filesystem::create_directory(path_);
    mounted_ = ::mount("hacoboot-test", path_.c_str(), "tmpfs", 0, "size=64k") == 0;
    if (!mounted_) {
      ADD_FAILURE() << "mount tmpfs on " << path_ << ": " << std::strerror(errno);
      return;  // never fill the disk under it
    }
    write_text(path_ / "keep.json", kPrecious);
    std::ofstream filler(path_ / "filler");
    const std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) && filler.flush()) {
    }
  }
  FullFilesystem(const FullFilesystem&) = delete;
  FullFilesystem& operator=(const FullFilesystem&) = delete;
  FullFilesystem(FullFilesystem&&) = delete;
  FullFilesystem& operator=(FullFilesystem&&) = delete;
  ~FullFilesystem() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
};

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
  // Baselines the gate cannot judge this run against (no COMMAND, --from 1).
  void make_baselines() {
    const auto summary = [](const std::string& version, std::int64_t start, const std::string& command,
                            std::uint64_t boots, bool listen) {
      const std::string figure =
          R"({"count": 1, "avg_ns": 5, "p50_ns": 5, "p90_ns": 5, "p99_ns": 5, "max_ns": 5, "samples": [[5, 1]]})";
      return R"({"schema": 3, "tool": {"name": "hacoboot-sampler", "version": ")" + version +
             R"("}, "start_phase": {"phase": )" + std::to_string(start) + R"(, "name": "X"}, "command": )" + command +
             R"(, "boots": {"started": )" + std::to_string(boots) + R"(}, "metrics": {"execve": )" + figure +
             R"(, "listen": )" + (listen ? figure : std::string(R"({"count": 0})")) + R"(}, "phases": []})";
    };
    write_text(dir() / "no-boots.json", summary("0.1.0", 1, "null", 0, true));
    write_text(dir() / "no-listen.json", summary("0.1.0", 1, "null", 1, false));
    write_text(dir() / "from-13.json", summary("0.1.0", 13, "null", 1, true));
    write_text(dir() / "other-command.json", summary("0.1.0", 1, R"("/bin/app")", 1, true));
    write_text(dir() / "newer-tool.json", summary("999.0.0", 1, "null", 1, true));
    write_text(dir() / "bad-samples.json",
               std::regex_replace(summary("0.1.0", 1, "null", 1, true), std::regex(R"(\[\[5, 1\]\])"), "[[5, 2]]"));
  }

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
    // Inputs the tool reads
    write_text(dir() / "huge.json", "");
    std::filesystem::resize_file(dir() / "huge.json", (std::size_t{16} << 20) + 1);  // sparse: cheap
    write_text(dir() / "escape-names.txt", "123 APP\x1B[31mRED\n");
    write_text(dir() / "binary-names.txt", "123 \xFF\xFE\n");
    write_text(dir() / "twice-names.txt", "123 APP_READY\n124 DB_READY\n123 APP_LIVE\n");
    write_text(dir() / "shadow-names.txt", "123 START_SV\n");
    write_text(dir() / "wrong-type.json", R"({"schema": 1, "metrics": {"execve": [], "listen": {}}, "phases": []})");
    make_baselines();
    write_text(dir() / "haconiwa-here", "#!/bin/sh\n");
    ASSERT_NO_FATAL_FAILURE(make_output_files());
  }

  // What an output may find at its path. Never the real /dev/full: a node of
  // its own, in the test's directory.
  void make_output_files() {
    namespace fs = std::filesystem;
    for (const char* name : {"keep.json", "keep.tsv", "keep.svg", "keep-trace.json"})
      write_text(dir() / name, kPrecious);
    fs::create_hard_link(dir() / "keep.json", dir() / "hard-link-to-keep.json");
    // A baseline the gate could judge this run against: only its path is wrong.
    const std::string figure = R"({"count": 1, "avg_ns": 5, "p50_ns": 5, "p90_ns": 5, "p99_ns": 5, "max_ns": 5})";
    write_text(dir() / "base.json", R"({"schema": 1, "boots": {"started": 1}, "metrics": {"execve": )" + figure +
                                        R"(, "listen": )" + figure + R"(}, "phases": []})");
    ASSERT_EQ(::mknod((dir() / "full-device").c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << std::strerror(errno);
    ASSERT_EQ(::mkfifo((dir() / "fifo").c_str(), 0666), 0) << std::strerror(errno);
    ASSERT_NO_THROW(make_socket_file(dir() / "socket"));
    fs::create_directory(dir() / "a-directory");
    fs::create_directory(dir() / "read-only");
    // Files nobody could write if the tool let it: the directory is theirs,
    // and {dir} lets them through.
    const auto nobody = dir() / "nobody";
    fs::create_directory(nobody);
    for (const char* name : {"keep.json", "keep.tsv"}) write_text(nobody / name, kPrecious);
    const passwd* user = ::getpwnam("nobody");
    ASSERT_NE(user, nullptr);
    for (const auto& path : {nobody, nobody / "keep.json", nobody / "keep.tsv"}) {
      ASSERT_EQ(::chown(path.c_str(), user->pw_uid, user->pw_gid), 0) << path;
    }
    fs::permissions(dir(), fs::perms::others_exec, fs::perm_options::add);
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
  if (!row.private_mounts.empty()) {
    const auto unshare = find_in_path("unshare");
    if (!unshare) GTEST_SKIP() << "unshare not found in PATH";
    argv = {unshare->string(),
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            expand(row.private_mounts, dir()) + " && exec \"$@\"",
            "sh"};
  }
  if (row.cwd_is_dir) {
    const auto env = find_in_path("env");
    if (!env) GTEST_SKIP() << "env not found in PATH";
    argv = {env->string(), "--chdir=" + dir().string()};
  }
  argv.push_back((row.nobody ? sampler_for_other_users() : sampler()).string());
  std::optional<BusyPort> busy;
  if (row.busy_port) busy.emplace();
  std::optional<FullFilesystem> full;
  if (row.full_filesystem) full.emplace(dir() / "full");
  bool has_haconiwa = false;
  std::vector<std::string> args;
  for (const auto& arg : row.args) {
    args.push_back(busy ? replace_all(expand(arg, dir()), "{port}", std::to_string(busy->port())) : expand(arg, dir()));
    has_haconiwa = has_haconiwa || arg == "--haconiwa";
  }
  std::vector<FileSnapshot> before;
  for (const auto& file : row.untouched_files) before.push_back(snapshot(expand(file, dir())));
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
  EXPECT_TRUE(
      std::none_of(r.err.begin(), r.err.end(), [](unsigned char c) { return (c < 0x20 && c != '\n') || c == 0x7F; }))
      << "raw control bytes on stderr: " << r.err;
  if (row.exit_code != 0) {
    EXPECT_EQ(split_lines(r.err).size(), 1U) << "an error is one line on stderr";
    EXPECT_EQ(r.err.rfind("hacoboot-sampler: error: ", 0), 0U) << "stderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << "nothing on stdout on an error";
  }
  if (!row.expected_in_stdout.empty()) {
    EXPECT_NE(r.out.find(row.expected_in_stdout), std::string::npos) << "stdout: " << r.out;
  }
  for (std::size_t i = 0; i < row.untouched_files.size(); ++i) {
    expect_unchanged(expand(row.untouched_files[i], dir()), before[i]);
  }
  for (const auto& file : row.must_not_exist) {
    EXPECT_FALSE(std::filesystem::exists(expand(file, dir()))) << expand(file, dir()) << " was created";
  }
  // No temporary file of a replacement was left behind.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir())) {
    EXPECT_NE(entry.path().filename().string().front(), '.') << entry.path() << " left behind";
  }
}

std::vector<BadInputCase> rows() {
  using C = BadInputCase;
  // A row of "Inputs the tool reads": also names an existing -o file.
  const auto input = [](std::string name, std::vector<std::string> args, std::string expected_in_stderr) {
    args.insert(args.end(), {"-o", "{dir}/precious-out"});
    return C(std::move(name), std::move(args), 2, std::move(expected_in_stderr)).keeps("{dir}/precious-out");
  };
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
      // Baselines that cannot be judged: refused before tracing, never a silent pass.
      C("BaselineOfNoBoots", {"--baseline", "{dir}/no-boots.json"}, 2,
        "--baseline {dir}/no-boots.json: the baseline run saw no boot"),
      C("BaselineWithoutAGatedMetric", {"--baseline", "{dir}/no-listen.json"}, 2,
        "no boot of the baseline run reached listen: it cannot gate it"),
      C("BaselineOfAnotherStartPhase", {"--baseline", "{dir}/from-13.json"}, 2,
        "the baseline's clock starts at phase 13, this run's at phase 1 (--from)"),
      C("BaselineOfAnotherCommand", {"--baseline", "{dir}/other-command.json"}, 2,
        "the baseline timed COMMAND '/bin/app', this run any first execve"),
      C("BaselineOfANewerTool", {"--baseline", "{dir}/newer-tool.json"}, 2,
        "written by hacoboot-sampler 999.0.0, newer than this one"),
      C("BaselineWithSamplesNotItsCount", {"--baseline", "{dir}/bad-samples.json"}, 2,
        R"("metrics.execve.samples" hold more boots than its count, 1)"),
      C("GateOnUnknownFigure", {"--gate-on", "cpu"}, 2, "--gate-on: unknown figure 'cpu' (noise-free, wall)"),
      // --ringbuf-size, --warmup
      C("RingBufferSizeZero", {"--ringbuf-size", "0"}, 2, "--ringbuf-size: '0'"),
      C("RingBufferSizeTwoGiB", {"--ringbuf-size", "2G"}, 2, "--ringbuf-size: '2G'"),
      C("RingBufferSizeNotANumber", {"--ringbuf-size", "abc"}, 2, "--ringbuf-size: 'abc'"),
      C("NegativeWarmup", {"--warmup", "-1"}, 2, "--warmup"),
      // Files the tool writes
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
      // A character device is written in place (here one that is always full).
      C("OutputToAFullDevice", {"-o", "{dir}/full-device"}, 1, "writing {dir}/full-device failed")
          .keeps("{dir}/full-device"),
      // --textfile replaces its file by renaming: only a regular file may be there.
      C("TextfileIsACharacterDevice", {"--textfile", "{dir}/full-device"}, 2,
        "--textfile: cannot write {dir}/full-device: it is a character device")
          .keeps("{dir}/full-device"),
      C("TextfileIsAFifo", {"--textfile", "{dir}/fifo"}, 2, "it is a FIFO").keeps("{dir}/fifo"),
      C("TextfileIsASocket", {"--textfile", "{dir}/socket"}, 2, "it is a socket").keeps("{dir}/socket"),
      C("TextfileIsADirectory", {"--textfile", "{dir}/a-directory"}, 2, "it is a directory").keeps("{dir}/a-directory"),
      C("OutputIsADirectory", {"-o", "{dir}/a-directory"}, 2, "-o: cannot write {dir}/a-directory: it is a directory"),
      C("EventsIsASocket", {"--events", "{dir}/socket"}, 2, "it is a socket").keeps("{dir}/socket"),
      // No open waits for a reader: the probes are live, the ring buffer fills.
      C("EventsIsAFifoNoOneReads", {"--events", "{dir}/fifo"}, 2,
        "cannot write {dir}/fifo: it is a FIFO no process reads")
          .keeps("{dir}/fifo"),
      // A run refused for any reason leaves every output as it was, and creates none.
      C("MissingHaconiwaKeepsOutputs",
        {"--haconiwa", "{dir}/nonexistent", "-o", "{dir}/keep.json", "--events", "{dir}/keep.tsv", "--timeline",
         "{dir}/keep.svg", "--trace-out", "{dir}/new-trace.json"},
        2, "{dir}/nonexistent")
          .keeps("{dir}/keep.json")
          .keeps("{dir}/keep.tsv")
          .keeps("{dir}/keep.svg")
          .creates_no("{dir}/new-trace.json"),
      C("HaconiwaWithoutTheProbeKeepsOutputs",
        {"--haconiwa", "/bin/true", "-o", "{dir}/new.json", "--events", "{dir}/keep.tsv", "--timeline",
         "{dir}/keep.svg", "--trace-out", "{dir}/keep-trace.json"},
        2, "haconiwa:bootstrap_phase_pass")
          .keeps("{dir}/keep.tsv")
          .keeps("{dir}/keep.svg")
          .keeps("{dir}/keep-trace.json")
          .creates_no("{dir}/new.json"),
      C("NotRootKeepsOutputs",
        {"-o", "{dir}/nobody/keep.json", "--events", "{dir}/nobody/keep.tsv", "--timeline", "{dir}/nobody/new.svg"}, 1,
        "root or CAP_BPF")
          .as_nobody()
          .keeps("{dir}/nobody/keep.json")
          .keeps("{dir}/nobody/keep.tsv")
          .creates_no("{dir}/nobody/new.svg"),
      C("BusyServePortKeepsOutputs",
        {"--serve", "127.0.0.1:{port}", "-o", "{dir}/keep.json", "--events", "{dir}/new.tsv", "--timeline",
         "{dir}/keep.svg", "--trace-out", "{dir}/keep-trace.json", "--textfile", "{dir}/new.prom"},
        1, "cannot listen")
          .with_busy_port()
          .keeps("{dir}/keep.json")
          .keeps("{dir}/keep.svg")
          .keeps("{dir}/keep-trace.json")
          .creates_no("{dir}/new.tsv")
          .creates_no("{dir}/new.prom"),
      C("BadBaselineKeepsOutputs", {"--baseline", "{dir}/not-json.json", "-o", "{dir}/keep.json"}, 2, "not JSON")
          .keeps("{dir}/keep.json"),
      // The summary is renamed into place only once complete: a full disk
      // leaves the previous one whole.
      C("SummaryOnAFullDisk", {"-o", "{dir}/full/keep.json", "--format", "json"}, 1,
        "writing {dir}/full/keep.json failed: No space left on device")
          .on_full_filesystem()
          .keeps("{dir}/full/keep.json"),
      // Two outputs naming one file, however spelled.
      C("TimelineAndTraceOutAreOneFile", {"--timeline", "{dir}/x.json", "--trace-out", "{dir}/x.json"}, 2,
        "--timeline {dir}/x.json and --trace-out {dir}/x.json are the same file")
          .creates_no("{dir}/x.json"),
      C("TraceOutAndStacksAreOneFile", {"--trace-out", "{dir}/x.json", "--stacks", "{dir}/x.json"}, 2,
        "--trace-out {dir}/x.json and --stacks {dir}/x.json are the same file")
          .creates_no("{dir}/x.json"),
      C("OutputAndEventsAreOneFileSpelledTwoWays", {"-o", "{dir}/./keep.json", "--events", "{dir}/keep.json"}, 2,
        "-o {dir}/./keep.json and --events {dir}/keep.json are the same file")
          .keeps("{dir}/keep.json"),
      C("OutputAndTextfileAreOneNewFileThroughDotDot",
        {"-o", "{dir}/a-directory/../new.prom", "--textfile", "{dir}/new.prom"}, 2, "are the same file")
          .creates_no("{dir}/new.prom"),
      C("OutputAndEventsAreOneFileThroughAHardLink",
        {"-o", "{dir}/keep.json", "--events", "{dir}/hard-link-to-keep.json"}, 2, "are the same file")
          .keeps("{dir}/keep.json"),
      C("OutputIsTheBaseline", {"-o", "{dir}/base.json", "--baseline", "{dir}/base.json"}, 2,
        "-o {dir}/base.json and --baseline {dir}/base.json are the same file")
          .keeps("{dir}/base.json"),
      C("TraceOutIsTheHaconiwaBinary", {"--trace-out", "{dir}/hacoboot-launcher"}, 2, "are the same file")
          .keeps("{dir}/hacoboot-launcher"),
      // The phase names are read: no output replaces them.
      C("OutputIsThePhaseNames", {"--phase-names", "{dir}/names.txt", "-o", "{dir}/names.txt"}, 2,
        "-o {dir}/names.txt and --phase-names {dir}/names.txt are the same file")
          .keeps("{dir}/names.txt"),
      C("EventsIsThePhaseNames", {"--phase-names", "{dir}/names.txt", "--events", "{dir}/names.txt"}, 2,
        "--events {dir}/names.txt and --phase-names {dir}/names.txt are the same file")
          .keeps("{dir}/names.txt"),
      C("TextfileIsThePhaseNames", {"--phase-names", "{dir}/names.txt", "--textfile", "{dir}/names.txt"}, 2,
        "--textfile {dir}/names.txt and --phase-names {dir}/names.txt are the same file")
          .keeps("{dir}/names.txt"),
      // --textfile is checked up front like the others.
      C("TextfileInMissingDirectory", {"--textfile", "{dir}/missing/m.prom"}, 2,
        "--textfile: cannot write {dir}/missing/m.prom: directory {dir}/missing: No such file or directory"),
      C("TextfileInReadOnlyDirectory", {"--textfile", "{dir}/read-only/m.prom"}, 2, "Read-only file system")
          .with_read_only_directory()
          .creates_no("{dir}/read-only/m.prom"),
      // Privileges: nobody has neither CAP_BPF nor CAP_SYS_ADMIN.
      C("NotRoot", {}, 1, "root or CAP_BPF").as_nobody(),
      // --run-as: the user is looked up before anything is loaded.
      C("RunAsUnknownUser", {"--run-as", "no-such-user-here"}, 2, "--run-as: no user 'no-such-user-here'"),
      // The kernel
      C("KernelWithoutBtf", {}, 1, "kernel BTF not found").without_kernel_btf(),
      // --btf: the kernel types from a file, which must be one.
      C("BtfIsADirectory", {"--btf", "{dir}", "-o", "{dir}/keep.json"}, 2, "--btf {dir}: not a regular file")
          .keeps("{dir}/keep.json"),
      C("BtfIsNotBtf", {"--btf", "{dir}/not-json.json"}, 2, "--btf {dir}/not-json.json: not BTF"),
      C("BtfIsMissing", {"--btf", "{dir}/no-such.btf"}, 2, "--btf {dir}/no-such.btf: No such file or directory"),

      // Not an error: a relative COMMAND is only warned about, and the run goes on.
      C("RelativeCommandWarnsButRuns", {"hacoboot-demo-app"}, 0,
        "warning: COMMAND 'hacoboot-demo-app' is not an absolute path")
          .prints("Boots: 0 started"),

      // Inputs the tool reads: refused before anything is written (the
      // existing -o file each row names stays as it was).
      // 7: only a regular file, of bounded size
      input("PhaseNamesIsADirectory", {"--phase-names", "{dir}"},
            "--phase-names: {dir}: a directory, not a regular file"),
      input("PhaseNamesIsDevZero", {"--phase-names", "/dev/zero"}, "/dev/zero: a character device, not a regular file"),
      input("BaselineIsAFifo", {"--baseline", "{dir}/fifo"}, "--baseline: {dir}/fifo: a FIFO, not a regular file"),
      input("BaselineLargerThan16MiB", {"--baseline", "{dir}/huge.json"}, "{dir}/huge.json: larger than 16 MiB"),
      // 8: names are printable UTF-8, and errors never echo raw bytes
      input("PhaseNameWithAnEscapeSequence", {"--phase-names", "{dir}/escape-names.txt"},
            "escape-names.txt:1: phase name 'APP\\x1B[31mRED' is not printable UTF-8"),
      input("PhaseNameNotUtf8", {"--phase-names", "{dir}/binary-names.txt"}, "phase name '\\xFF\\xFE'"),
      input("RunAsUserWithAnEscapeSequence", {"--run-as", "x\x1B[31m"}, "--run-as: no user 'x\\x1B[31m'"),
      input("ServeAddressWithAnEscapeSequence", {"--serve", "\x1B[2J:80"}, "--serve: '\\x1B[2J:80'"),
      // 9: one phase per name, one name per phase
      input("PhaseNumberNamedTwice", {"--phase-names", "{dir}/twice-names.txt"},
            "twice-names.txt:3: phase 123 is named twice (lines 1 and 3)"),
      input("PhaseNameShadowsABuiltIn", {"--phase-names", "{dir}/shadow-names.txt"},
            "shadow-names.txt:1: 'START_SV' already names phase 1"),
      // 10: an empty value is refused, not taken as unset
      input("EmptyBaselineValue", {"--baseline", ""}, "--baseline: empty value"),
      input("EmptyCountValue", {"-n", ""}, "--count: empty value"),
      input("EmptyCommand", {""}, "COMMAND: empty value"),
      input("EmptyOutputValue", {"--events", ""}, "--events: empty value"),
      C("EmptyHaconiwaValue", {"--haconiwa", ""}, 2, "--haconiwa: empty value"),
      // 11: decimal integers in range
      input("CountInHex", {"-n", "0x10"}, "--count: '0x10' is not a decimal number from 1 to 1000000000"),
      input("CountOverflow", {"-n", "99999999999999999999"}, "--count: '99999999999999999999' is not a decimal"),
      // 12: a finite percentage
      input("MaxRegressionNan", {"--max-regression", "nan"},
            "--max-regression: 'nan' is not a percentage above 0 and at most 1000"),
      input("MaxRegressionNegative", {"--max-regression", "-5"}, "'-5' is not a percentage above 0 and at most 1000"),
      input("MaxRegressionZero", {"--max-regression", "0"}, "'0' is not a percentage above 0 and at most 1000"),
      input("MaxRegressionInf", {"--max-regression", "inf"}, "'inf' is not a percentage above 0 and at most 1000"),
      input("MaxRegressionAbove1000", {"--max-regression", "1000.1"}, "'1000.1' is not a percentage above 0"),
      input("MaxRegressionInHex", {"--max-regression", "0x10"}, "'0x10' is not a percentage above 0"),
      input("EmptyMaxRegressionValue", {"--max-regression", ""}, "--max-regression: empty value"),
      input("AlphaZero", {"--alpha", "0"}, "--alpha: '0' is not a level above 0 and at most 0.5"),
      input("AlphaAboveOneHalf", {"--alpha", "0.6"}, "--alpha: '0.6' is not a level above 0 and at most 0.5"),
      input("AlphaNan", {"--alpha", "nan"}, "--alpha: 'nan' is not a level"),
      input("AlphaInf", {"--alpha", "inf"}, "--alpha: 'inf' is not a level"),
      input("AlphaNegative", {"--alpha", "-0.05"}, "--alpha: '-0.05' is not a level"),
      input("AlphaNotDecimal", {"--alpha", "5e-2"}, "--alpha: '5e-2' is not a level"),
      input("EmptyAlphaValue", {"--alpha", ""}, "--alpha: empty value"),
      input("EmptyGateOnValue", {"--gate-on", ""}, "--gate-on: empty value"),
      // 13: a COMMAND the kernel side could never match
      input("CommandLongerThanTheKernelKeeps", {"/" + std::string(299, 'a')},
            "COMMAND is 300 bytes long: the tool sees at most 255 bytes"),
      // 13: a COMMAND the summary and a baseline could not carry as it is
      input("CommandWithATab", {"/app/my\tinit"},
            "COMMAND '/app/my\\x09init' is not printable UTF-8: control characters and invalid UTF-8 are refused"),
      input("CommandNotUtf8", {"/app/\xFF\xFEinit"}, "COMMAND '/app/\\xFF\\xFEinit' is not printable UTF-8"),
      // 14: what was looked up, and where
      input("HaconiwaBareNameInCurrentDirectory", {"--haconiwa", "haconiwa-here"},
            "to use the file in the current directory, give --haconiwa ./haconiwa-here")
          .in_its_dir(),
      // 15: baseline faults in the tool's words
      input("BaselineFieldOfTheWrongType", {"--baseline", "{dir}/wrong-type.json"},
            R"({dir}/wrong-type.json: not a hacoboot-sampler summary: "metrics.execve" is an array, not an object)"),
  };
}

// The disk fills up while boots are traced: a row is written in part, the
// next write fails, and many calls later (each of which may set errno) the
// run ends. The error names the cause of the lost write, not what errno last
// held.
class FullDiskTest : public IntegrationTest {};

TEST_F(FullDiskTest, EventsOnADiskThatFillsUpSaysWhy) {
  const auto unshare = find_in_path("unshare");
  if (!unshare) GTEST_SKIP() << "unshare not found in PATH";
  const auto disk = dir() / "small";
  std::filesystem::create_directory(disk);
  // A page of room: the header fits, the rows of four boots do not.
  std::vector<std::string> argv{unshare->string(),
                                "--mount",
                                "--propagation",
                                "private",
                                "/bin/sh",
                                "-c",
                                "mount -t tmpfs -o size=12k hacoboot-test \"$0\" && head -c 8192 /dev/zero > "
                                "\"$0\"/filler && exec \"$@\"",
                                disk.string()};
  const auto rows = disk / "rows.tsv";
  const auto tool = sampler_argv(
      {"--events", rows.string(), "-o", "/dev/null", "--run", launcher_command({"-n", "4"}), app().string()});
  argv.insert(argv.end(), tool.begin(), tool.end());
  const auto r = run_process(argv, dir(), 90s);
  EXPECT_TRUE(r.status.exited && r.status.code == 1) << r.status.describe() << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find("writing " + rows.string() + " failed: No space left on device"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(BadInput2, BadInputMatrixTest, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<BadInputCase>& test) { return test.param.name; });

}  // namespace
}  // namespace hacoboot::it
