#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "capture/usdt_argument.hpp"
#include "cli/probe_listing.hpp"
#include "golden.hpp"

namespace hacoboot {
namespace {

using test::line_diff;

std::string describe_all(std::string_view arguments) {
  std::string text;
  for (const auto& argument : parse_usdt_arguments(arguments)) {
    text += (text.empty() ? "" : " | ") + describe(argument);
  }
  return text;
}

std::string listing(const std::string& binary, const std::vector<UsdtProbe>& probes) {
  std::ostringstream out;
  write_probe_list(binary, probes, out);
  return out.str();
}

TEST(UsdtArguments, RegisterSpecsDecodeSizeSignAndRegister) {
  EXPECT_EQ(describe_all("-8@%rdi -8@%rsi"), "int64 in %rdi | int64 in %rsi");
  EXPECT_EQ(describe_all("8@%rax 4@%edx -2@%cx 1@%al"),
            "uint64 in %rax | uint32 in %edx | int16 in %cx | uint8 in %al");
  const auto parsed = parse_usdt_arguments("-4@%r12d");
  ASSERT_EQ(parsed.size(), 1U);
  EXPECT_EQ(parsed[0].kind, UsdtArgument::Kind::Register);
  EXPECT_EQ(parsed[0].size, 4);
  EXPECT_TRUE(parsed[0].is_signed);
  EXPECT_EQ(parsed[0].operand, "%r12d");
}

TEST(UsdtArguments, MemorySpecsKeepTheOperand) {
  EXPECT_EQ(describe_all("-4@-12(%rbp)"), "int32 at -12(%rbp)");
  EXPECT_EQ(describe_all("8@(%rax) -8@16(%rsp,%rbx,8) 8@0(,%rcx,4)"),
            "uint64 at (%rax) | int64 at 16(%rsp,%rbx,8) | uint64 at 0(,%rcx,4)");
  EXPECT_EQ(describe_all("8@counter+8(%rip)"), "uint64 at counter+8(%rip)");
  EXPECT_EQ(parse_usdt_arguments("-4@-12(%rbp)").at(0).kind, UsdtArgument::Kind::Memory);
}

TEST(UsdtArguments, ConstantSpecs) {
  EXPECT_EQ(describe_all("8@$5"), "uint64 constant 5");
  EXPECT_EQ(describe_all("-4@$-1 4@$0x10"), "int32 constant -1 | uint32 constant 0x10");
  const auto parsed = parse_usdt_arguments("8@$5");
  ASSERT_EQ(parsed.size(), 1U);
  EXPECT_EQ(parsed[0].kind, UsdtArgument::Kind::Constant);
  EXPECT_EQ(parsed[0].operand, "5");
}

TEST(UsdtArguments, Aarch64Specs) {
  EXPECT_EQ(describe_all("-8@x0 -4@w1 8@sp"), "int64 in x0 | int32 in w1 | uint64 in sp");
  // A memory operand holds a space: it is one spec, not two.
  EXPECT_EQ(describe_all("-4@[sp, 12] 8@[x19] -8@5"), "int32 at [sp, 12] | uint64 at [x19] | int64 constant 5");
}

TEST(UsdtArguments, MalformedSpecsAreShownRaw) {
  EXPECT_EQ(describe_all("%rdi"), "unrecognised spec '%rdi'");            // no size (pre-2010 notes)
  EXPECT_EQ(describe_all("3@%rdi"), "unrecognised spec '3@%rdi'");        // no such size
  EXPECT_EQ(describe_all("-@%rdi"), "unrecognised spec '-@%rdi'");        // sign without size
  EXPECT_EQ(describe_all("8@"), "unrecognised spec '8@'");                // no operand
  EXPECT_EQ(describe_all("8@$x"), "unrecognised spec '8@$x'");            // constant not a number
  EXPECT_EQ(describe_all("8@12(rbp)"), "unrecognised spec '8@12(rbp)'");  // not a register inside
  EXPECT_EQ(describe_all("8@x31"), "unrecognised spec '8@x31'");
  EXPECT_EQ(describe_all("-8@%rdi garbage"), "int64 in %rdi | unrecognised spec 'garbage'");
  EXPECT_EQ(parse_usdt_arguments("8@%%").at(0).kind, UsdtArgument::Kind::Unrecognised);
}

TEST(UsdtArguments, SpacingAndEmptyLists) {
  EXPECT_TRUE(parse_usdt_arguments("").empty());
  EXPECT_TRUE(parse_usdt_arguments("   ").empty());
  EXPECT_EQ(parse_usdt_arguments("  -8@%rdi   -8@%rsi ").size(), 2U);
  // An unbalanced '[' keeps the rest as one spec, shown raw.
  EXPECT_EQ(describe_all("-4@[sp, 12 8@%rax"), "unrecognised spec '-4@[sp, 12 8@%rax'");
}

TEST(ProbeListing, TableWithDecodedArgumentsAndTheTracedProbeMarked) {
  const std::vector<UsdtProbe> probes{
      {"haconiwa", "bootstrap_phase_pass", "-8@%rdi -8@%rsi", 0x3a70, 0},
      {"haconiwa", "probe_misc", "-8@%rdi -4@-12(%rbp)", 0x3ab4, 0x7010},
      {"haconiwa", "probe_misc_str", "8@$5 bogus", 0x3b00, 0x7012},
      {"libc", "setjmp", "", 0x12345678, 0},
  };
  const std::string expected =
      "USDT probes in /usr/bin/haconiwa: 4\n"
      "* = haconiwa:bootstrap_phase_pass, the probe hacoboot-sampler attaches to\n"
      "\n"
      "  PROVIDER  NAME                  LOCATION    SEMAPHORE  ARGUMENTS\n"
      "* haconiwa  bootstrap_phase_pass  0x3a70      none       -8@%rdi -8@%rsi\n"
      "                                                         arg0: int64 in %rdi (phase)\n"
      "                                                         arg1: int64 in %rsi (hpid)\n"
      "  haconiwa  probe_misc            0x3ab4      0x7010     -8@%rdi -4@-12(%rbp)\n"
      "                                                         arg0: int64 in %rdi\n"
      "                                                         arg1: int32 at -12(%rbp)\n"
      "  haconiwa  probe_misc_str        0x3b00      0x7012     8@$5 bogus\n"
      "                                                         arg0: uint64 constant 5\n"
      "                                                         arg1: unrecognised spec 'bogus'\n"
      "  libc      setjmp                0x12345678  none       (none)\n";
  const std::string actual = listing("/usr/bin/haconiwa", probes);
  EXPECT_EQ(actual, expected) << line_diff(expected, actual);
}

TEST(ProbeListing, SaysWhenTheTracedProbeIsMissing) {
  const std::vector<UsdtProbe> probes{{"haconiwa", "probe_misc", "-8@%rdi -8@%rsi", 0x10, 0}};
  const std::string actual = listing("./haconiwa", probes);
  EXPECT_TRUE(
      actual.ends_with("  haconiwa  probe_misc  0x10      none       -8@%rdi -8@%rsi\n"
                       "                                             arg0: int64 in %rdi\n"
                       "                                             arg1: int64 in %rsi\n"
                       "haconiwa:bootstrap_phase_pass is missing: hacoboot-sampler cannot trace ./haconiwa\n"))
      << actual;
}

TEST(ProbeListing, NoProbesAtAll) {
  EXPECT_EQ(listing("/bin/true", {}),
            "USDT probes in /bin/true: none (no .note.stapsdt notes)\n"
            "haconiwa:bootstrap_phase_pass is missing: hacoboot-sampler cannot trace /bin/true\n");
}

// The binary's path and its notes' strings are anyone's to choose: shown
// escaped, so that a crafted binary cannot drive the terminal.
TEST(ProbeListing, PathAndNotesAreShownEscaped) {
  const std::vector<UsdtProbe> probes{{"evil\x1B[2J", "name\x07", "-8@%rdi\x1B]0;x", 0x10, 0}};
  const std::string actual = listing("/opt/\x1B[31mred/haconiwa", probes);
  EXPECT_NE(actual.find("USDT probes in /opt/\\x1B[31mred/haconiwa: 1\n"), std::string::npos) << actual;
  EXPECT_NE(actual.find("  evil\\x1B[2J  name\\x07  0x10      none       -8@%rdi\\x1B]0;x\n"), std::string::npos)
      << actual;
  EXPECT_NE(actual.find("cannot trace /opt/\\x1B[31mred/haconiwa\n"), std::string::npos) << actual;
  EXPECT_EQ(actual.find('\x1B'), std::string::npos) << actual;
  EXPECT_EQ(actual.find('\x07'), std::string::npos) << actual;
}

TEST(ProbeListing, EveryCopyOfAnInlinedProbeIsMarked) {
  const std::vector<UsdtProbe> probes{
      {"haconiwa", "bootstrap_phase_pass", "-8@%rdi -8@%rsi", 0x100, 0x200},
      {"haconiwa", "bootstrap_phase_pass", "-8@%rbx -8@%rax", 0x180, 0x200},
  };
  const std::string actual = listing("h", probes);
  EXPECT_NE(actual.find("* haconiwa  bootstrap_phase_pass  0x100     0x200      -8@%rdi -8@%rsi\n"), std::string::npos)
      << actual;
  EXPECT_NE(actual.find("* haconiwa  bootstrap_phase_pass  0x180     0x200      -8@%rbx -8@%rax\n"), std::string::npos)
      << actual;
  EXPECT_EQ(actual.find("missing"), std::string::npos) << actual;
}

}  // namespace
}  // namespace hacoboot
