#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden.hpp"
#include "model/kernel_profile.hpp"
#include "model/syscalls.hpp"
#include "report/boot_rows.hpp"

namespace hacoboot {
namespace {

const std::string kHeader =
    "boot\thpid\tcontainer_pid\tcgroup_id\tcgroup_path\tkind\tphase\tname\tt_ns\tsince_start_ns\tdelta_ns\tend\n";
const std::string kSchedHeader =
    "\tlane\ttid\tbegin_ns\tcpu_ns\trun_queue_ns\tsleep_ns\tio_ns\ton_listen_path_ns\ton_execve_path_ns\tnoise_free_ns";

// The first twelve columns of each line (those before the scheduler's): the
// tests of the original columns read these.
std::string original_columns(const std::string& tsv) {
  std::istringstream lines(tsv);
  std::string line;
  std::string kept;
  while (std::getline(lines, line)) {
    std::size_t end = 0;
    for (int column = 0; column < 12 && end != std::string::npos; ++column) end = line.find('\t', end + 1);
    kept += line.substr(0, end) + '\n';
  }
  return kept;
}

// Boot 2 of supervisor 200: phase 0 (CLI) before the start, started by
// phase 1 at t=1000; its execve comes before the supervisor's phase 3.
BootRecord sample_boot() {
  BootRecord b;
  b.sequence = 2;
  b.hpid = 200;
  b.container_pid = 201;
  b.cgroup_id = 77;
  b.start_phase = 1;
  b.start_ns = 1'000;
  b.phases = {{0, 500}, {1, 1'000}, {2, 1'300}, {11, 1'500}, {3, 4'100}};
  b.execve_ns = 4'000;
  b.listen_ns = 9'000;
  return b;
}

// What analyse_boot makes of sample_boot() with the scheduler's readings:
// the supervisor (tid 200) forks the container (tid 201) at START_FORK, the
// container's steps are the path to execve and to listen, the supervisor's
// END_SETUP (sleeping until the container is done) is off both paths.
PathPiece piece(std::uint32_t tid, Step step, std::uint64_t begin, std::uint64_t end, SchedTotals states) {
  return {tid, step, begin, end, states};
}

BootAnalysis sample_analysis() {
  const Step fork{Step::Kind::Phase, 2};
  const Step container_start{Step::Kind::Phase, 11};
  const Step end_setup{Step::Kind::Phase, 3};
  const Step execve{Step::Kind::Execve};
  const Step listen{Step::Kind::Listen};
  BootAnalysis a;
  a.steps = {
      {Lane::Supervisor, fork, 200, 1'000, 1'300, 300, SchedTotals{200, 100, 0, 0}, 300, 300},
      {Lane::Container, container_start, 201, 1'300, 1'500, 500, SchedTotals{150, 50, 0, 0}, 200, 200},
      {Lane::Container, execve, 201, 1'500, 4'000, 3'000, SchedTotals{2'000, 0, 0, 500}, 2'500, 2'500},
      {Lane::Supervisor, end_setup, 200, 1'300, 4'100, 3'100, SchedTotals{100, 0, 2'700, 0}, 0, 0},
      {Lane::Container, listen, 201, 4'000, 9'000, 8'000, SchedTotals{4'000, 1'000, 0, 0}, 5'000, 0},
  };
  a.to_execve = CriticalPath{{piece(200, fork, 1'000, 1'300, {200, 100, 0, 0}),
                              piece(201, container_start, 1'300, 1'500, {150, 50, 0, 0}),
                              piece(201, execve, 1'500, 4'000, {2'000, 0, 0, 500})}};
  a.to_listen = a.to_execve;
  a.to_listen->pieces.push_back(piece(201, listen, 4'000, 9'000, {4'000, 1'000, 0, 0}));
  return a;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> rows;
  for (const auto& line : lines_of(text)) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST(BootRowWriter, HeaderIsWrittenAtOnce) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  const auto header = kHeader.substr(0, kHeader.size() - 1) + kSchedHeader + "\n";
  EXPECT_EQ(out.str(), header) << "the scheduler's columns come after the original twelve";
}

// delta_ns is a step's own cost: the time since the previous step of the same
// process (supervisor: phases 0-10 and 31+; container: 11-30, execve,
// listen), the container's first step counting from START_FORK.
TEST(BootRowWriter, OneRowPerMilestoneInTimeOrder) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  writer.write(sample_boot());
  const std::string expected = kHeader +
                               "2\t200\t201\t77\t\tphase\t0\tCLI_START\t500\t\t\texited\n"
                               "2\t200\t201\t77\t\tphase\t1\tSTART_SV\t1000\t0\t500\texited\n"
                               "2\t200\t201\t77\t\tphase\t2\tSTART_FORK\t1300\t300\t300\texited\n"
                               "2\t200\t201\t77\t\tphase\t11\tCONTAINER_START\t1500\t500\t200\texited\n"
                               "2\t200\t201\t77\t\texecve\t\texecve\t4000\t3000\t2500\texited\n"
                               "2\t200\t201\t77\t\tphase\t3\tEND_SETUP\t4100\t3100\t2800\texited\n"
                               "2\t200\t201\t77\t\tlisten\t\tlisten\t9000\t8000\t5000\texited\n";
  EXPECT_EQ(original_columns(out.str()), expected) << test::line_diff(expected, original_columns(out.str()));
}

TEST(BootRowWriter, DeltaFollowsEachProcess) {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 10;
  b.container_pid = 11;
  b.start_ns = 1'000;
  b.phases = {{1, 1'000}, {2, 2'000}, {11, 2'500}, {3, 2'600}, {12, 2'700}, {123, 2'750}};
  b.execve_ns = 3'000;
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  writer.write(b);
  const std::string expected = kHeader +
                               "1\t10\t11\t0\t\tphase\t1\tSTART_SV\t1000\t0\t\texited\n"
                               "1\t10\t11\t0\t\tphase\t2\tSTART_FORK\t2000\t1000\t1000\texited\n"
                               "1\t10\t11\t0\t\tphase\t11\tCONTAINER_START\t2500\t1500\t500\texited\n"
                               "1\t10\t11\t0\t\tphase\t3\tEND_SETUP\t2600\t1600\t600\texited\n"
                               "1\t10\t11\t0\t\tphase\t12\tCONTAINER_NAMESPACE_GENERATED\t2700\t1700\t200\texited\n"
                               "1\t10\t11\t0\t\tphase\t123\tUSR1\t2750\t1750\t50\texited\n"
                               "1\t10\t11\t0\t\texecve\t\texecve\t3000\t2000\t300\texited\n";
  EXPECT_EQ(original_columns(out.str()), expected) << test::line_diff(expected, original_columns(out.str()));
}

TEST(BootRowWriter, UnstartedBootHasNoSinceStart) {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 300;
  b.phases = {{12, 100}};
  b.execve_ns = 400;
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  writer.write(b);
  const std::string expected = kHeader +
                               "1\t300\t0\t0\t\tphase\t12\tCONTAINER_NAMESPACE_GENERATED\t100\t\t\texited\n"
                               "1\t300\t0\t0\t\texecve\t\texecve\t400\t\t300\texited\n";
  EXPECT_EQ(original_columns(out.str()), expected) << test::line_diff(expected, original_columns(out.str()));
}

// Every row of a boot says how it ended: a user can set aside the boots that
// were cut short (tracing stopped, evicted, vanished) from those that exited.
TEST(BootRowWriter, EveryRowSaysHowTheBootEnded) {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 10;
  b.start_ns = 1'000;
  b.phases = {{1, 1'000}};
  b.execve_ns = 2'000;
  b.end = BootEnd::TracingStopped;
  std::ostringstream tsv;
  BootRowWriter(tsv, BootRowWriter::Format::Tsv, PhaseNames{}).write(b);
  const std::string expected = kHeader +
                               "1\t10\t0\t0\t\tphase\t1\tSTART_SV\t1000\t0\t\ttracing_stopped\n"
                               "1\t10\t0\t0\t\texecve\t\texecve\t2000\t1000\t1000\ttracing_stopped\n";
  EXPECT_EQ(original_columns(tsv.str()), expected) << test::line_diff(expected, original_columns(tsv.str()));

  b.end = BootEnd::Vanished;
  std::ostringstream jsonl;
  BootRowWriter(jsonl, BootRowWriter::Format::Jsonl, PhaseNames{}).write(b);
  std::istringstream lines(jsonl.str());
  std::string line;
  while (std::getline(lines, line)) EXPECT_EQ(nlohmann::json::parse(line).at("end"), "vanished") << line;
}

TEST(BootRowWriter, BootsFollowEachOtherUnderOneHeader) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  BootRecord first = sample_boot();
  first.sequence = 1;
  BootRecord empty;  // no milestone at all: no row
  empty.sequence = 2;
  writer.write(first);
  writer.write(empty);
  writer.write(sample_boot());
  std::istringstream lines(out.str());
  std::string line;
  std::size_t rows = 0, headers = 0;
  while (std::getline(lines, line)) {
    ++rows;
    if (line.rfind("boot\t", 0) == 0) ++headers;
  }
  EXPECT_EQ(headers, 1u);
  EXPECT_EQ(rows, 1u + 7u + 7u);
}

TEST(BootRowWriter, CgroupPathAndUserPhaseNames) {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 10;
  b.container_pid = 11;
  b.cgroup_id = 5;
  b.cgroup_path = "/haconiwa/app";
  b.start_ns = 1'000;
  b.phases = {{1, 1'000}, {123, 1'200}};
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames::parse("123 APP_READY\n", "names.txt"));
  writer.write(b);
  const std::string expected = kHeader +
                               "1\t10\t11\t5\t/haconiwa/app\tphase\t1\tSTART_SV\t1000\t0\t\texited\n"
                               "1\t10\t11\t5\t/haconiwa/app\tphase\t123\tAPP_READY\t1200\t200\t200\texited\n";
  EXPECT_EQ(original_columns(out.str()), expected) << test::line_diff(expected, original_columns(out.str()));
}

// A cgroup's name may hold a TAB, a CR or a backslash (and a text field may
// hold a newline): the separators are escaped so that every row keeps the
// header's columns.
// Any other control character or byte of invalid UTF-8 as \xNN: none
// reaches a terminal raw (a cgroup named with an escape sequence).
TEST(BootRowWriter, TabsNewlinesBackslashesAndControlsInACgroupPathAreEscaped) {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 10;
  b.cgroup_id = 5;
  b.cgroup_path = "/a\tb/c\nd\re\\f\\t\x1b[2J\xff";
  b.start_ns = 1'000;
  b.phases = {{1, 1'000}};
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  writer.write(b);
  const std::string expected =
      kHeader + "1\t10\t0\t5\t/a\\tb/c\\nd\\re\\\\f\\\\t\\x1B[2J\\xFF\tphase\t1\tSTART_SV\t1000\t0\t\texited\n";
  EXPECT_EQ(original_columns(out.str()), expected) << test::line_diff(expected, original_columns(out.str()));
}

TEST(BootRowWriter, JsonLinesKeepACgroupPathThatIsNotUtf8) {
  BootRecord b;
  b.sequence = 1;
  b.cgroup_path = "/a\tb\n\xff";
  b.start_ns = 1'000;
  b.phases = {{1, 1'000}};
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Jsonl, PhaseNames{});
  ASSERT_NO_THROW(writer.write(b));
  const auto row = nlohmann::json::parse(out.str());
  EXPECT_EQ(row.at("cgroup_path"), "/a\tb\n\xef\xbf\xbd") << "the byte that is not UTF-8 becomes U+FFFD";
}

TEST(BootRowWriter, JsonLinesCarryTheSameFieldsWithoutHeader) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Jsonl, PhaseNames{});
  EXPECT_EQ(out.str(), "") << "no header line in JSON lines";
  writer.write(sample_boot());

  std::istringstream lines(out.str());
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(lines, line)) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 7u) << out.str();

  EXPECT_EQ(rows[0], (nlohmann::json{{"boot", 2},
                                     {"hpid", 200},
                                     {"container_pid", 201},
                                     {"cgroup_id", 77},
                                     {"cgroup_path", ""},
                                     {"kind", "phase"},
                                     {"phase", 0},
                                     {"name", "CLI_START"},
                                     {"t_ns", 500},
                                     {"since_start_ns", nullptr},
                                     {"delta_ns", nullptr},
                                     {"end", "exited"},
                                     {"lane", nullptr},
                                     {"tid", nullptr},
                                     {"begin_ns", nullptr},
                                     {"cpu_ns", nullptr},
                                     {"run_queue_ns", nullptr},
                                     {"sleep_ns", nullptr},
                                     {"io_ns", nullptr},
                                     {"on_listen_path_ns", nullptr},
                                     {"on_execve_path_ns", nullptr},
                                     {"noise_free_ns", nullptr},
                                     {"syscalls", nullptr},
                                     {"critical_path", nullptr}}))
      << "a step before the start has no lane, states nor path";
  EXPECT_EQ(rows[4].at("kind"), "execve");
  EXPECT_TRUE(rows[4].at("phase").is_null());
  EXPECT_EQ(rows[4].at("since_start_ns"), 3000);
  EXPECT_EQ(rows[4].at("delta_ns"), 2500);
  EXPECT_EQ(rows[6].at("kind"), "listen");
  EXPECT_EQ(rows[6].at("t_ns"), 9000);
}

// Each step after the start says which process passed it, what the
// scheduler says of its own time (the four states add up to it), and how
// much of it lay on the paths; execve and listen carry the boot's
// noise-free figure beside their time since start: the path without its
// run-queue time (execve: 3000 - 150, listen: 8000 - 1150).
TEST(BootRowWriter, RowsCarryLaneStatesPathTimeAndNoiseFreeFigures) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  writer.write(sample_boot(), sample_analysis());
  const std::string expected = kHeader.substr(0, kHeader.size() - 1) + kSchedHeader + "\n" +
                               "2\t200\t201\t77\t\tphase\t0\tCLI_START\t500\t\t\texited\t\t\t\t\t\t\t\t\t\t\n"
                               "2\t200\t201\t77\t\tphase\t1\tSTART_SV\t1000\t0\t500\texited\t\t\t\t\t\t\t\t\t\t\n"
                               "2\t200\t201\t77\t\tphase\t2\tSTART_"
                               "FORK\t1300\t300\t300\texited\tsupervisor\t200\t1000\t200\t100\t0\t0\t300\t300\t\n"
                               "2\t200\t201\t77\t\tphase\t11\tCONTAINER_"
                               "START\t1500\t500\t200\texited\tcontainer\t201\t1300\t150\t50\t0\t0\t200\t200\t\n"
                               "2\t200\t201\t77\t\texecve\t\texecve\t4000\t3000\t2500\texited\tcontainer\t201\t1500\t20"
                               "00\t0\t0\t500\t2500\t2500\t2850\n"
                               "2\t200\t201\t77\t\tphase\t3\tEND_"
                               "SETUP\t4100\t3100\t2800\texited\tsupervisor\t200\t1300\t100\t0\t2700\t0\t0\t0\t\n"
                               "2\t200\t201\t77\t\tlisten\t\tlisten\t9000\t8000\t5000\texited\tcontainer\t201\t4000\t40"
                               "00\t1000\t0\t0\t5000\t0\t6850\n";
  EXPECT_EQ(out.str(), expected) << test::line_diff(expected, out.str());
}

// A step whose time the kernel side did not account (an old capture, or a
// path that follows the fork alone) keeps its lane and path time but has
// empty states and no noise-free figure: never a made-up zero.
TEST(BootRowWriter, UnaccountedStatesAreEmptyNotZero) {
  auto analysis = sample_analysis();
  for (auto& step : analysis.steps) step.states.reset();
  for (auto* path : {&analysis.to_execve, &analysis.to_listen}) {
    for (auto& p : (*path)->pieces) p.states.reset();
  }
  analysis.forks_only = true;
  std::ostringstream tsv;
  BootRowWriter(tsv, BootRowWriter::Format::Tsv, PhaseNames{}).write(sample_boot(), analysis);
  const auto lines = lines_of(tsv.str());
  ASSERT_EQ(lines.size(), 8u) << tsv.str();
  EXPECT_EQ(lines[7],
            "2\t200\t201\t77\t\tlisten\t\tlisten\t9000\t8000\t5000\texited\tcontainer\t201\t4000\t\t\t\t\t5000\t0\t");

  std::ostringstream jsonl;
  BootRowWriter(jsonl, BootRowWriter::Format::Jsonl, PhaseNames{}).write(sample_boot(), analysis);
  const auto listen = json_lines(jsonl.str()).at(6);
  for (const char* key : {"cpu_ns", "run_queue_ns", "sleep_ns", "io_ns", "noise_free_ns"}) {
    EXPECT_TRUE(listen.at(key).is_null()) << key << ": " << listen.dump();
  }
  EXPECT_TRUE(listen.at("critical_path").at(0).at("cpu_ns").is_null()) << listen.dump();
}

// JSON lines: each step's syscalls in this boot, as the JSON summary has
// them per boot (the most time first, then its user time).
TEST(BootRowWriter, JsonLinesCarryEachStepsSyscalls) {
  auto analysis = sample_analysis();
  analysis.steps[2].syscalls =
      StepSyscalls{.calls = {{.nr = 74, .count = 2, .max_ns = 400, .states = {.cpu = 100, .io = 500}},
                             {.nr = 1023, .count = 1, .max_ns = 50, .states = {.cpu = 50}}},
                   .user = {.cpu = 1'850}};
  std::ostringstream out;
  BootRowWriter(out, BootRowWriter::Format::Jsonl, PhaseNames{}).write(sample_boot(), analysis);
  const auto rows = json_lines(out.str());
  ASSERT_EQ(rows.size(), 7u) << out.str();
  const auto& execve = rows[4];
  ASSERT_EQ(execve.at("kind"), "execve");
  const auto& syscalls = execve.at("syscalls");
  EXPECT_EQ(syscalls.at("user").at("time_ns"), 1'850);
  ASSERT_EQ(syscalls.at("calls").size(), 2u) << syscalls.dump();
  EXPECT_EQ(syscalls.at("calls").at(0), (nlohmann::json{{"name", "fsync"},
                                                        {"nr", 74},
                                                        {"calls", 2},
                                                        {"time_ns", 600},
                                                        {"max_ns", 400},
                                                        {"cpu_ns", 100},
                                                        {"run_queue_ns", 0},
                                                        {"sleep_ns", 0},
                                                        {"io_ns", 500}}));
  EXPECT_EQ(syscalls.at("calls").at(1).at("name"), "syscall_1023");
  EXPECT_TRUE(rows[6].at("syscalls").is_null()) << "a step without figures";
}

// JSON lines with --kernel-profile: a step's syscalls carry its CPU samples
// in this boot as the JSON summary's kernel_cpu.
TEST(BootRowWriter, JsonLinesCarryEachStepsKernelCpuSamples) {
  auto analysis = sample_analysis();
  analysis.steps[2].syscalls = StepSyscalls{
      .calls = {{.nr = 165, .count = 1, .max_ns = 900, .states = {.cpu = 900}}},
      .user = {.cpu = 100},
      .kernel_cpu = StepKernelCpu{.hz = 999,
                                  .partly_sampled = true,
                                  .points = {{.nr = 165, .frames = {"shmem_fill_super+0x1c4"}, .samples = 3},
                                             {.nr = kUserTime, .user_mode = true, .samples = 1}}}};
  std::ostringstream out;
  BootRowWriter(out, BootRowWriter::Format::Jsonl, PhaseNames{}).write(sample_boot(), analysis);
  const auto rows = json_lines(out.str());
  ASSERT_EQ(rows.size(), 7u) << out.str();
  const auto& cpu = rows[4].at("syscalls").at("kernel_cpu");
  EXPECT_EQ(cpu.at("hz"), 999);
  EXPECT_EQ(cpu.at("samples"), 4);
  EXPECT_EQ(cpu.at("partly_sampled"), true);
  ASSERT_EQ(cpu.at("stacks").size(), 2u) << cpu.dump();
  EXPECT_EQ(cpu.at("stacks").at(0), (nlohmann::json{{"name", "mount"},
                                                    {"nr", 165},
                                                    {"user_mode", false},
                                                    {"samples", 3},
                                                    {"frames", {"shmem_fill_super+0x1c4"}}}));
  EXPECT_EQ(cpu.at("stacks").at(1).at("name"), "user");
  EXPECT_TRUE(rows[0].at("syscalls").is_null()) << "a step without figures has no samples either";
}

// JSON lines: the same columns, and on the execve and listen rows the
// boot's critical path to them, piece by piece (the process, the step the
// piece lies in, its span and states) from the start to the milestone.
TEST(BootRowWriter, JsonLinesCarryTheCriticalPathOnExecveAndListenRows) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Jsonl, PhaseNames{});
  writer.write(sample_boot(), sample_analysis());
  const auto rows = json_lines(out.str());
  ASSERT_EQ(rows.size(), 7u) << out.str();
  for (const auto& row : rows) {
    EXPECT_EQ(row.size(), 24u) << "22 columns, syscalls and critical_path: " << row.dump();
  }

  const auto& execve = rows[4];
  EXPECT_EQ(execve.at("lane"), "container");
  EXPECT_EQ(execve.at("noise_free_ns"), 2850);
  ASSERT_EQ(execve.at("critical_path").size(), 3u) << execve.dump();
  EXPECT_EQ(execve.at("critical_path")[0], (nlohmann::json{{"lane", "supervisor"},
                                                           {"tid", 200},
                                                           {"kind", "phase"},
                                                           {"phase", 2},
                                                           {"name", "START_FORK"},
                                                           {"begin_ns", 1000},
                                                           {"end_ns", 1300},
                                                           {"cpu_ns", 200},
                                                           {"run_queue_ns", 100},
                                                           {"sleep_ns", 0},
                                                           {"io_ns", 0}}));

  const auto& listen = rows[6];
  EXPECT_EQ(listen.at("since_start_ns"), 8000);
  EXPECT_EQ(listen.at("noise_free_ns"), 6850);
  const auto& path = listen.at("critical_path");
  ASSERT_EQ(path.size(), 4u) << listen.dump();
  EXPECT_EQ(path[0].at("begin_ns"), 1000) << "the path starts at the boot's start";
  EXPECT_EQ(path[3].at("end_ns"), 9000) << "and ends at listen";
  EXPECT_EQ(path[3].at("kind"), "listen");
  EXPECT_TRUE(path[3].at("phase").is_null());
  std::uint64_t covered = 0;
  for (const auto& p : path) covered += p.at("end_ns").get<std::uint64_t>() - p.at("begin_ns").get<std::uint64_t>();
  EXPECT_EQ(covered, 8000u) << "the pieces cover the time to listen";

  for (const std::size_t i : {0, 1, 2, 3, 5}) {
    EXPECT_TRUE(rows[i].at("critical_path").is_null()) << rows[i].dump();
    EXPECT_TRUE(rows[i].at("noise_free_ns").is_null()) << rows[i].dump();
  }
  EXPECT_EQ(rows[5].at("on_listen_path_ns"), 0) << "END_SETUP waited off the path";
  EXPECT_EQ(rows[5].at("sleep_ns"), 2700);
}

// A path piece after the last step of its thread (a descendant that the
// path crossed) has no step: kind, phase and name are null, its lane is
// that of the thread's other rows, or "other" for a thread with none.
TEST(BootRowWriter, PathPiecesAfterAThreadsLastStepHaveNoStep) {
  auto analysis = sample_analysis();
  analysis.to_listen->pieces.back().end_ns = 8'000;
  analysis.to_listen->pieces.push_back({300, std::nullopt, 8'000, 9'000, SchedTotals{900, 100, 0, 0}});
  std::ostringstream out;
  BootRowWriter(out, BootRowWriter::Format::Jsonl, PhaseNames{}).write(sample_boot(), analysis);
  const auto last = json_lines(out.str()).at(6).at("critical_path").back();
  EXPECT_EQ(last.at("lane"), "other");
  EXPECT_EQ(last.at("tid"), 300);
  EXPECT_TRUE(last.at("kind").is_null());
  EXPECT_TRUE(last.at("phase").is_null());
  EXPECT_TRUE(last.at("name").is_null());
  EXPECT_EQ(last.at("cpu_ns"), 900);
}

}  // namespace
}  // namespace hacoboot
