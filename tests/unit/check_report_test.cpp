#include "cli/check_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "capture/kernel_support.hpp"

namespace hacoboot {
namespace {

std::string report_of(const std::vector<CheckLine>& lines, bool* ready = nullptr) {
  std::ostringstream out;
  const bool is_ready = write_check_report(lines, out);
  if (ready != nullptr) *ready = is_ready;
  return out.str();
}

TEST(CheckReport, AlignsItsItemsAndEndsReadyWhenNothingIsMissing) {
  bool ready = false;
  const auto report =
      report_of({{.item = "kernel", .detail = "Linux 6.18", .state = CheckState::Ok},
                 {.item = "syscall tracepoints", .detail = "raw_syscalls", .state = CheckState::Fallback}},
                &ready);
  EXPECT_TRUE(ready);
  EXPECT_EQ(report,
            "kernel               ok        Linux 6.18\n"
            "syscall tracepoints  fallback  raw_syscalls\n"
            "ready to trace (with fallbacks: syscall tracepoints)\n");
}

TEST(CheckReport, NamesWhatIsMissing) {
  bool ready = true;
  const auto report = report_of({{.item = "kernel BTF", .detail = "none", .state = CheckState::Missing},
                                 {.item = "capabilities", .detail = "held: none", .state = CheckState::Missing},
                                 {.item = "haconiwa", .detail = "/usr/bin/haconiwa", .state = CheckState::Ok}},
                                &ready);
  EXPECT_FALSE(ready);
  EXPECT_TRUE(report.ends_with("\nnot ready: kernel BTF, capabilities\n")) << report;
  EXPECT_NE(report.find("kernel BTF    MISSING   none\n"), std::string::npos) << report;
}

TEST(KernelRelease, MajorAndMinorOfWhatUnameSays) {
  EXPECT_EQ(parse_kernel_release("6.18.44-fc-v1045"), (KernelVersion{6, 18}));
  EXPECT_EQ(parse_kernel_release("5.15.0-91-generic"), (KernelVersion{5, 15}));
  EXPECT_EQ(parse_kernel_release("6.6"), (KernelVersion{6, 6}));
  EXPECT_EQ(parse_kernel_release("4.18.0-513.el8.x86_64"), (KernelVersion{4, 18}));
  EXPECT_FALSE(parse_kernel_release(""));
  EXPECT_FALSE(parse_kernel_release("6"));
  EXPECT_FALSE(parse_kernel_release("linux-6.1"));
  EXPECT_FALSE(parse_kernel_release("6.x"));
}

TEST(KernelRelease, VersionsCompareAsReleases) {
  EXPECT_LT((KernelVersion{5, 18}), (KernelVersion{6, 6}));
  EXPECT_LT((KernelVersion{5, 9}), (KernelVersion{5, 18}));
  EXPECT_GE((KernelVersion{6, 18}), kOldestKernel);
  EXPECT_LT((KernelVersion{5, 15}), kOldestKernel) << "Ubuntu 22.04's kernel lacks sched_switch's prev_state";
}

// docs/kernel-requirements.md's table is this one: every feature the tool cannot do without
// names what needs it; one with a fallback names the fallback.
TEST(KernelFeatures, EachSaysWhatNeedsItAndRequiredOnesAreNoNewerThanTheOldestKernel) {
  for (const auto& feature : kKernelFeatures) {
    EXPECT_FALSE(feature.needed_for.empty()) << feature.name;
    if (feature.without.empty()) {
      EXPECT_LE(feature.since, kOldestKernel) << feature.name;
    }
  }
}

}  // namespace
}  // namespace hacoboot
