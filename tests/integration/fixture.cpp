#include "fixture.hpp"

#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>
#include <thread>

#include "support/build_paths.hpp"

namespace hacoboot::it {

bool bpf_required() {
  const char* value = std::getenv("HACOBOOT_REQUIRE_BPF");
  return value != nullptr && std::string_view(value) == "1";
}

namespace {

std::string status_and_stderr(const ProcessResult& r) {
  return r.status.describe() + "\n--- stderr ---\n" + r.err + "--- stdout ---\n" + r.out;
}

void expect_in_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& what) {
  EXPECT_TRUE(lo <= value && value <= hi)
      << what << " = " << value << " ns is outside the ground truth's bracket [" << lo << ", " << hi << "] ns";
}

// The one row of a boot with this kind (and phase); null if not exactly one.
const BootRow* single_row(const std::vector<BootRow>& rows, const std::string& kind,
                          std::optional<std::int64_t> phase = std::nullopt) {
  const BootRow* found = nullptr;
  for (const auto& row : rows) {
    if (row.kind != kind || (phase && row.phase != phase)) continue;
    if (found != nullptr) {
      ADD_FAILURE() << "more than one " << kind << " row";
      return nullptr;
    }
    found = &row;
  }
  if (found == nullptr) ADD_FAILURE() << "no " << kind << (phase ? " " + std::to_string(*phase) : "") << " row";
  return found;
}

// Copies an executable into `directory`, runnable by every user.
std::filesystem::path copy_program(const std::filesystem::path& program, const std::filesystem::path& directory) {
  auto copy = directory / program.filename();
  std::filesystem::copy_file(program, copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                         std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                         std::filesystem::perms::others_exec);
  return copy;
}

}  // namespace

void IntegrationTest::SetUp() {
  if (::geteuid() != 0) {
    if (bpf_required()) FAIL() << "needs root for BPF (HACOBOOT_REQUIRE_BPF=1: not skipping)";
    GTEST_SKIP() << "needs root for BPF";
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "hacoboot-it-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
  dir_ = pattern;
  launcher_ = copy_program(test::launcher(), dir_);
  app_ = copy_program(test::demo_app(), dir_);
}

void IntegrationTest::TearDown() {
  if (dir_.empty()) return;
  if (HasFailure()) {
    std::cerr << "[   KEPT   ] files of the failed test in " << dir_.string() << '\n';
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::filesystem::path IntegrationTest::sampler() {
  return test::sampler();
}

void IntegrationTest::open_to_other_users() const {
  std::filesystem::permissions(dir_, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add);
}

std::filesystem::path IntegrationTest::sampler_for_other_users() const {
  open_to_other_users();
  return copy_program(sampler(), dir_);
}

std::filesystem::path IntegrationTest::new_file(const std::string& stem) {
  return dir_ / (std::to_string(++files_) + "-" + stem);
}

void IntegrationTest::skip_unless_device_waits() const {
  struct statfs fs {};
  ASSERT_EQ(statfs(dir().c_str(), &fs), 0) << dir();
  constexpr std::array<decltype(fs.f_type), 3> kNoDeviceWait{TMPFS_MAGIC, RAMFS_MAGIC, OVERLAYFS_SUPER_MAGIC};
  if (std::find(kNoDeviceWait.begin(), kNoDeviceWait.end(), fs.f_type) != kNoDeviceWait.end()) {
    GTEST_SKIP() << dir() << " is on tmpfs, ramfs or overlayfs (f_type 0x" << std::hex << fs.f_type
                 << "), whose fsync does not wait for a device";
  }
}

std::string IntegrationTest::launcher_command(const std::vector<std::string>& launcher_args,
                                              const std::vector<std::string>& app_args) const {
  std::vector<std::string> argv{launcher_.string()};
  argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
  argv.push_back("--");
  argv.push_back(app().string());
  argv.insert(argv.end(), app_args.begin(), app_args.end());
  return shell_command(argv);
}

std::vector<std::string> IntegrationTest::sampler_argv(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{sampler().string(), "--haconiwa", launcher_.string()};
  // The tests' own BTF cache: the host's is not theirs to fill.
  if (std::find(args.begin(), args.end(), "--btf-cache") == args.end()) {
    argv.insert(argv.end(), {"--btf-cache", test::btf_cache().string()});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

ProcessResult IntegrationTest::run_sampler(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  return run_process(sampler_argv(args), dir_, timeout);
}

TracedBoots IntegrationTest::trace_boots(const std::vector<std::string>& launcher_args,
                                         const std::vector<std::string>& app_args,
                                         const std::vector<std::string>& extra_sampler_args,
                                         const std::string& alongside) {
  TracedBoots traced;
  const auto truth_path = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  std::vector<std::string> with_truth{"--truth", truth_path.string()};
  with_truth.insert(with_truth.end(), launcher_args.begin(), launcher_args.end());

  auto run = launcher_command(with_truth, app_args);
  // Both must succeed: the launcher's status, then the other's.
  if (!alongside.empty()) run = "{ " + alongside + "; } & " + run + "; status=$?; wait $! && exit $status";
  std::vector<std::string> args{"--run", run, "--format", "json", "--events", rows_path.string()};
  args.insert(args.end(), extra_sampler_args.begin(), extra_sampler_args.end());
  args.push_back(app().string());

  traced.result = run_sampler(args);
  EXPECT_TRUE(traced.result.status.exited && traced.result.status.code == 0) << status_and_stderr(traced.result);
  try {
    traced.summary = nlohmann::json::parse(traced.result.out);
    traced.rows = parse_boot_rows(read_file(rows_path));
    traced.truth = parse_truth(read_file(truth_path));
    traced.launches = parse_truth_launches(read_file(truth_path));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unreadable output: " << e.what() << '\n' << status_and_stderr(traced.result);
  }
  return traced;
}

std::vector<std::string> with_tracefs(Tracefs state, const std::vector<std::string>& command) {
  std::vector<std::string> argv{test::tracefs_state().string(), state == Tracefs::Mounted ? "mounted" : "unmounted"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  const auto open = line.find('(');
  const auto close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 > line.size()) return std::nullopt;
  ProcStat stat{.comm = line.substr(open + 1, close - open - 1)};
  std::istringstream rest(line.substr(close + 2));
  rest >> stat.state >> stat.ppid >> stat.pgrp;
  return stat;
}

std::string wait_for_file_command(const std::filesystem::path& file) {
  return "while [ ! -e " + shell_quote(file.string()) + " ] && kill -0 $PPID 2>/dev/null; do sleep 0.05; done";
}

std::string wait_for_truth_command(const std::filesystem::path& truth, const std::string& key, int count) {
  // grep -c prints nothing while the file does not exist yet.
  const auto lines =
      "$(grep -c -F -e " + shell_quote("\t" + key + "\t") + " " + shell_quote(truth.string()) + " 2>/dev/null)";
  return "while n=" + lines + "; [ \"${n:-0}\" -lt " + std::to_string(count) +
         " ] && kill -0 $PPID 2>/dev/null; do sleep 0.05; done";
}

std::set<std::uint32_t> expect_boots_match_truth(const TracedBoots& traced, std::size_t expected_boots) {
  std::set<std::uint32_t> hpids;
  std::vector<Launch> launches = traced.launches;
  if (launches.empty()) {
    for (const auto& [hpid, facts] : traced.truth) launches.push_back({hpid, facts});
  }
  std::set<std::size_t> matched;
  const auto boots = rows_by_boot(traced.rows);
  EXPECT_EQ(boots.size(), expected_boots) << "boots in the --events rows";
  for (const auto& [sequence, rows] : boots) {
    const std::uint32_t hpid = rows.front().hpid;
    SCOPED_TRACE("boot " + std::to_string(sequence) + ", hpid " + std::to_string(hpid));
    hpids.insert(hpid);
    for (const auto& row : rows) {
      EXPECT_EQ(row.hpid, hpid) << "rows of one boot name different hpids";
      EXPECT_EQ(row.container_pid, rows.front().container_pid) << "rows of one boot name different containers";
    }

    // The launch of this hpid whose start bracket holds the boot's START_SV;
    // without one, its first launch not yet matched (and the check below fails).
    const auto* start_row = single_row(rows, "phase", 1);
    std::optional<std::size_t> launch;
    for (std::size_t i = 0; i < launches.size(); ++i) {
      const auto& facts = launches[i].facts;
      if (launches[i].hpid != hpid || matched.contains(i)) continue;
      if (!launch) launch = i;
      if (start_row != nullptr && facts.contains("start_lo") && facts.contains("start_hi") &&
          facts.at("start_lo") <= static_cast<std::int64_t>(start_row->t_ns) &&
          static_cast<std::int64_t>(start_row->t_ns) <= facts.at("start_hi")) {
        launch = i;
        break;
      }
    }
    if (!launch) {
      ADD_FAILURE() << "hpid " << hpid << " is not a supervisor of the launcher (not in the truth file), or its launch "
                    << "is already another boot's";
      continue;
    }
    matched.insert(*launch);
    const auto& fact = launches[*launch].facts;
    bool complete = true;
    for (const char* key : {"start_lo", "start_hi", "container_pid", "exec_lo", "exec_hi", "listen_lo", "listen_hi"}) {
      if (fact.count(key) == 0) {
        ADD_FAILURE() << "truth file lacks " << key;
        complete = false;
      }
    }
    if (!complete) continue;

    EXPECT_EQ(static_cast<std::int64_t>(rows.front().container_pid), fact.at("container_pid"));
    if (start_row != nullptr) {
      expect_in_range(static_cast<std::int64_t>(start_row->t_ns), fact.at("start_lo"), fact.at("start_hi"),
                      "t_ns of phase 1 (START_SV)");
      EXPECT_EQ(start_row->since_start_ns, std::optional<std::uint64_t>(0));
    }
    if (const auto* execve = single_row(rows, "execve")) {
      if (!execve->since_start_ns)
        ADD_FAILURE() << "execve row without since_start_ns";
      else
        expect_in_range(static_cast<std::int64_t>(*execve->since_start_ns), fact.at("exec_lo") - fact.at("start_hi"),
                        fact.at("exec_hi") - fact.at("start_lo"), "execve since_start_ns");
    }
    if (const auto* listen = single_row(rows, "listen")) {
      if (!listen->since_start_ns)
        ADD_FAILURE() << "listen row without since_start_ns";
      else
        expect_in_range(static_cast<std::int64_t>(*listen->since_start_ns), fact.at("listen_lo") - fact.at("start_hi"),
                        fact.at("listen_hi") - fact.at("start_lo"), "listen since_start_ns");
    }
  }
  return hpids;
}

BpfIds bpf_ids_held_by(pid_t pid) {
  BpfIds ids;
  std::error_code ec;
  const auto fdinfo = std::filesystem::path("/proc") / std::to_string(pid) / "fdinfo";
  for (const auto& entry : std::filesystem::directory_iterator(fdinfo, ec)) {
    for (const auto& line : split_lines(read_file(entry.path()))) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const auto key = line.substr(0, colon);
      if (key != "prog_id" && key != "link_id" && key != "map_id") continue;
      const auto value = static_cast<std::uint32_t>(std::stoul(line.substr(colon + 1)));
      (key == "prog_id" ? ids.programs : key == "link_id" ? ids.links : ids.maps).insert(value);
    }
  }
  return ids;
}

nlohmann::json bpftool_list(const std::string& object, const std::filesystem::path& output_dir) {
  const auto bpftool = find_in_path("bpftool");
  if (!bpftool) {
    ADD_FAILURE() << "bpftool not found in PATH";
    return nlohmann::json::array();
  }
  // An object freed while bpftool walks the ids (another tracer exiting)
  // makes it report an error entry and exit 255: list again.
  ProcessResult r;
  for (int attempt = 0; attempt < 10; ++attempt) {
    r = run_process({bpftool->string(), "-j", object, "show"}, output_dir, 60s);
    if (r.status.exited && r.status.code == 0) break;
    std::this_thread::sleep_for(50ms);
  }
  if (!r.status.exited || r.status.code != 0) {
    ADD_FAILURE() << "bpftool " << object << " show: " << status_and_stderr(r);
    return nlohmann::json::array();
  }
  const auto text = r.out.find_first_not_of(" \n") == std::string::npos ? std::string("[]") : r.out;
  return nlohmann::json::parse(text);
}

std::vector<std::string> bpf_objects_still_present(const BpfIds& ids, const std::filesystem::path& output_dir) {
  std::vector<std::string> present;
  for (const auto& prog : bpftool_list("prog", output_dir)) {
    if (ids.programs.count(prog.value("id", 0U)) > 0) present.push_back("prog " + prog.dump());
  }
  for (const auto& link : bpftool_list("link", output_dir)) {
    if (ids.links.count(link.value("id", 0U)) > 0 || ids.programs.count(link.value("prog_id", 0U)) > 0) {
      present.push_back("link " + link.dump());
    }
  }
  return present;
}

}  // namespace hacoboot::it
