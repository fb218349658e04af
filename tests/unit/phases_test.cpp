#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "model/phases.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

// Haconiwa's table, as the man page lists it (--phase-names), written out
// apart from the tool's own.
const std::pair<std::int64_t, const char*> kKnownPhases[] = {
    {0, "CLI_START"},
    {1, "START_SV"},
    {2, "START_FORK"},
    {3, "END_SETUP"},
    {4, "START_WAIT"},
    {5, "END_WAIT"},
    {6, "CLEANUP"},
    {11, "CONTAINER_START"},
    {12, "CONTAINER_NAMESPACE_GENERATED"},
    {13, "CONTAINER_FILESYSTEM_SETUP"},
    {14, "CONTAINER_RLIMIT_SETUP"},
    {15, "CONTAINER_CGROUP_SETUP"},
    {16, "CONTAINER_REMOUNTED"},
    {17, "CONTAINER_UID_MAPPING_SETUP"},
    {18, "CONTAINER_CHROOTED"},
    {19, "CONTAINER_CAPABILITY_SETUP"},
    {20, "CONTAINER_SECCOMP_SETUP"},
    {21, "CONTAINER_EXECING"},
    {31, "START_CREATE_NETWORK"},
    {32, "END_CREATE_NETWORK"},
    {123, "USR1"},
    {124, "USR2"},
    {125, "USR3"},
    {126, "USR4"},
    {127, "USR5"},
};

TEST(PhaseName, EveryKnownPhase) {
  for (const auto& [number, name] : kKnownPhases) EXPECT_EQ(phase_name(number), name) << "phase " << number;
}

TEST(PhaseName, UnknownPhaseByNumber) {
  EXPECT_EQ(phase_name(42), "PHASE_42");
  EXPECT_EQ(phase_name(7), "PHASE_7");
  EXPECT_EQ(phase_name(128), "PHASE_128");
  EXPECT_EQ(phase_name(-1), "PHASE_-1");
}

TEST(ParsePhase, ByNumber) {
  EXPECT_EQ(parse_phase("0"), 0);
  EXPECT_EQ(parse_phase("1"), 1);
  EXPECT_EQ(parse_phase("11"), 11);
  EXPECT_EQ(parse_phase("42"), 42);  // not in the table, but a number Haconiwa can fire
  EXPECT_EQ(parse_phase("127"), 127);
}

TEST(ParsePhase, EveryKnownNameMapsBackToItsNumber) {
  for (const auto& [number, name] : kKnownPhases) EXPECT_EQ(parse_phase(name), number) << name;
}

TEST(ParsePhase, NamesAreCaseInsensitive) {
  EXPECT_EQ(parse_phase("start_sv"), 1);
  EXPECT_EQ(parse_phase("Container_Execing"), 21);
  EXPECT_EQ(parse_phase("cli_start"), 0);
  EXPECT_EQ(parse_phase("usr5"), 127);
}

TEST(ParsePhase, RejectsWhatHaconiwaCannotFire) {
  for (const char* text :
       {"128", "-1", "", "FOO", "START", "START_SV_", " 1", "1 ", "1.0", "0x10", "999999999999999999999"}) {
    EXPECT_EQ(parse_phase(text), std::nullopt) << '"' << text << '"';
  }
}

TEST(PhaseNames, DefaultIsHaconiwasTable) {
  const PhaseNames names;
  for (const auto& [number, name] : kKnownPhases) EXPECT_EQ(names.name(number), name);
  EXPECT_EQ(names.name(42), "PHASE_42");
  EXPECT_EQ(names.find("start_fork"), 2);
  EXPECT_EQ(names.find("127"), 127);
  EXPECT_EQ(names.find("128"), std::nullopt);
}

TEST(PhaseNames, UserNamesLayeredOverTheTable) {
  const auto names = PhaseNames::parse(
      "# markers of our app\n"
      "\n"
      "123 APP_READY\n"
      "  124\tDB_MIGRATED   # trailing comment\n"
      "40 NET_READY\n",
      "names.txt");
  EXPECT_EQ(names.name(123), "APP_READY");
  EXPECT_EQ(names.name(124), "DB_MIGRATED");
  EXPECT_EQ(names.name(40), "NET_READY");
  EXPECT_EQ(names.name(125), "USR3") << "unnamed phases keep Haconiwa's name";
  EXPECT_EQ(names.find("app_ready"), 123);
  EXPECT_EQ(names.find("Net_Ready"), 40);
  EXPECT_EQ(names.find("CONTAINER_START"), 11);
  EXPECT_EQ(names.find("USR2"), 124) << "built-in names still work";
  EXPECT_EQ(names.find("NOPE"), std::nullopt);
}

TEST(PhaseNames, EmptyTextNamesNothing) {
  EXPECT_EQ(PhaseNames::parse("", "empty").name(123), "USR1");
  EXPECT_EQ(PhaseNames::parse("# only a comment\n\n", "c").name(123), "USR1");
}

TEST(PhaseNames, MalformedLinesNameTheSourceAndLine) {
  const std::pair<const char*, const char*> bad[] = {
      {"123 APP_READY\n123\n", "names.txt:2"},                                      // no name
      {"123 APP READY\n", "names.txt:1"},                                           // two words
      {"\n\n128 TOO_BIG\n", "names.txt:3"},                                         // not a phase number
      {"-1 NEGATIVE\n", "names.txt:1"},        {"APP_READY 123\n", "names.txt:1"},  // swapped
  };
  for (const auto& [text, where] : bad) {
    try {
      PhaseNames::parse(text, "names.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  }
}

// The message of the UsageError PhaseNames::parse throws for text.
std::string refusal(const std::string& text) {
  try {
    PhaseNames::parse(text, "names.txt");
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

// Names go to terminals, SVG, JSON and Prometheus labels: only printable
// UTF-8 is taken, and the message shows the bad bytes escaped, never raw.
TEST(PhaseNames, NamesMustBePrintableUtf8) {
  EXPECT_EQ(PhaseNames::parse("123 起動完了\n", "names.txt").name(123), "起動完了");
  EXPECT_EQ(refusal("123 APP\x1B[31mRED\n"),
            "names.txt:1: phase name 'APP\\x1B[31mRED' is not printable UTF-8 (control characters or invalid bytes)");
  EXPECT_EQ(refusal("# ok\n124 BAD\xFF\xFE\n"),
            "names.txt:2: phase name 'BAD\\xFF\\xFE' is not printable UTF-8 (control characters or invalid bytes)");
  EXPECT_EQ(refusal("126 NON\xEF\xBF\xBF\n"),
            "names.txt:1: phase name 'NON\\xEF\\xBF\\xBF' is not printable UTF-8 (control characters or invalid "
            "bytes)");
  EXPECT_EQ(refusal(std::string("125 NUL\0HERE\n", 13)),
            "names.txt:1: phase name 'NUL\\x00HERE' is not printable UTF-8 (control characters or invalid bytes)");
}

// --phase-names /etc/shadow through sudo: the error must not show the line.
TEST(PhaseNames, ALineThatDoesNotStartWithANumberIsNotQuoted) {
  EXPECT_EQ(refusal("root:$y$j9T$secret:19000:0:99999:7:::\n"),
            "names.txt:1: expected NUMBER NAME, NUMBER a phase number 0-127");
  EXPECT_EQ(refusal("\x1B[2J 1\n"), "names.txt:1: expected NUMBER NAME, NUMBER a phase number 0-127");
  EXPECT_EQ(refusal("# fine\n99999999999999999999999 BIG\n"),
            "names.txt:2: '99999999999999999999999' is not a phase number 0-127");
}

TEST(PhaseNames, NamesAreAtMost64Bytes) {
  const std::string longest(kMaxPhaseNameBytes, 'N');
  EXPECT_EQ(PhaseNames::parse("123 " + longest + "\n", "names.txt").name(123), longest);
  EXPECT_EQ(refusal("123 " + longest + "N\n"), "names.txt:1: a phase name of 65 bytes: at most 64");
}

TEST(CheckPhaseName, SaysWhatIsWrongOrNothing) {
  EXPECT_TRUE(check_phase_name("APP_READY"));
  EXPECT_FALSE(check_phase_name("A\tB"));
  EXPECT_FALSE(check_phase_name(std::string(65, 'A')));
}

// Every name must lead to one phase (--from, --gate, the outputs): a number
// or a name given twice is refused, naming both lines.
TEST(PhaseNames, ANumberOrANameGivenTwiceNamesBothLines) {
  EXPECT_EQ(refusal("123 APP_READY\n124 DB\n\n123 APP_LIVE\n"),
            "names.txt:4: phase 123 is named twice (lines 1 and 4)");
  EXPECT_EQ(refusal("123 APP_READY\n124 app_ready\n"),
            "names.txt:2: 'app_ready' names two phases, 123 (line 1) and 124 (line 2)");
}

// `123 START_SV` would make --from START_SV mean 123 and the outputs show
// START_SV for two phases.
TEST(PhaseNames, ABuiltInNameGoesToItsOwnPhaseOnly) {
  EXPECT_EQ(refusal("123 START_SV\n"), "names.txt:1: 'START_SV' already names phase 1: choose another name");
  EXPECT_EQ(refusal("40 phase_41\n"), "names.txt:1: 'phase_41' already names phase 41: choose another name");
  EXPECT_EQ(refusal("40 17\n"), "names.txt:1: '17' already names phase 17: choose another name");
  for (const char* word : {"execve", "LISTEN", "all"}) {
    EXPECT_NE(refusal(std::string("123 ") + word + "\n").find("names something else"), std::string::npos) << word;
  }
  // Re-stating Haconiwa's own name is harmless.
  const auto names = PhaseNames::parse("1 START_SV\n21 container_execing\n", "names.txt");
  EXPECT_EQ(names.name(1), "START_SV");
  EXPECT_EQ(names.find("CONTAINER_EXECING"), 21);
}

}  // namespace
}  // namespace hacoboot
