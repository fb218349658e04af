#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden.hpp"
#include "report/boot_rows.hpp"

namespace hacoboot {
namespace {

const std::string kHeader =
    "boot\thpid\tcontainer_pid\tcgroup_id\tcgroup_path\tkind\tphase\tname\tt_ns\tsince_start_ns\tdelta_ns\tend\n";

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

TEST(BootRowWriter, HeaderIsWrittenAtOnce) {
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  EXPECT_EQ(out.str(), kHeader);
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
  EXPECT_EQ(out.str(), expected) << test::line_diff(expected, out.str());
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
  EXPECT_EQ(out.str(), expected) << test::line_diff(expected, out.str());
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
  EXPECT_EQ(out.str(), expected) << test::line_diff(expected, out.str());
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
  EXPECT_EQ(tsv.str(), expected) << test::line_diff(expected, tsv.str());

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
  EXPECT_EQ(out.str(), expected) << test::line_diff(expected, out.str());
}

// A cgroup's name may hold a TAB, a CR or a backslash (and a text field may
// hold a newline): the separators are escaped so that every row keeps the
// header's columns.
TEST(BootRowWriter, TabsNewlinesAndBackslashesInACgroupPathAreEscaped) {
  BootRecord b;
  b.sequence = 1;
  b.hpid = 10;
  b.cgroup_id = 5;
  b.cgroup_path = "/a\tb/c\nd\re\\f\\t";
  b.start_ns = 1'000;
  b.phases = {{1, 1'000}};
  std::ostringstream out;
  BootRowWriter writer(out, BootRowWriter::Format::Tsv, PhaseNames{});
  writer.write(b);
  const std::string expected =
      kHeader + "1\t10\t0\t5\t/a\\tb/c\\nd\\re\\\\f\\\\t\tphase\t1\tSTART_SV\t1000\t0\t\texited\n";
  EXPECT_EQ(out.str(), expected) << test::line_diff(expected, out.str());
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
                                     {"end", "exited"}}));
  EXPECT_EQ(rows[4].at("kind"), "execve");
  EXPECT_TRUE(rows[4].at("phase").is_null());
  EXPECT_EQ(rows[4].at("since_start_ns"), 3000);
  EXPECT_EQ(rows[4].at("delta_ns"), 2500);
  EXPECT_EQ(rows[6].at("kind"), "listen");
  EXPECT_EQ(rows[6].at("t_ns"), 9000);
}

}  // namespace
}  // namespace hacoboot
