// The capture stage names no option; the command line adds the hint.
#include "cli/capture_hints.hpp"

#include <gtest/gtest.h>

namespace hacoboot {
namespace {

TEST(CaptureHints, HaconiwaNotFoundNamesTheOption) {
  EXPECT_EQ(with_option_hint(HaconiwaMissing{
                .why = "'haconiwa' not found in PATH (/bin)", .name = "haconiwa", .in_current_directory = false}),
            "'haconiwa' not found in PATH (/bin): give the haconiwa binary with --haconiwa PATH");
  EXPECT_EQ(with_option_hint(HaconiwaMissing{
                .why = "'my-h' not found in PATH (/bin)", .name = "my-h", .in_current_directory = true}),
            "'my-h' not found in PATH (/bin): to use the file in the current directory, give --haconiwa ./my-h");
}

TEST(CaptureHints, UprobeMultiErrorNamesTheChoiceOrTheWayOut) {
  EXPECT_EQ(with_option_hint(UprobeMultiError("the kernel has no uprobe_multi links (Linux 6.6+)", false)),
            "--usdt-attach uprobe_multi: the kernel has no uprobe_multi links (Linux 6.6+)");
  EXPECT_EQ(with_option_hint(UprobeMultiError("libbpf's USDT spec map holds 16-byte values, not 208", true)),
            "libbpf's USDT spec map holds 16-byte values, not 208: use --usdt-attach perf");
}

TEST(CaptureHints, DescribesHowTheProbeWasAttached) {
  EXPECT_EQ(describe(UsdtAttachment{.uprobe_multi = true, .why_not_uprobe_multi = {}}), "one uprobe_multi link");
  EXPECT_EQ(describe(UsdtAttachment{.uprobe_multi = false, .why_not_uprobe_multi = {}}),
            "perf uprobes (--usdt-attach perf)");
  EXPECT_EQ(describe(UsdtAttachment{.uprobe_multi = false, .why_not_uprobe_multi = "more than 12 arguments"}),
            "perf uprobes (more than 12 arguments)");
}

TEST(CaptureHints, DescribesTheBtfCacheFilling) {
  EXPECT_EQ(describe_btf_filling(std::filesystem::path("/usr/sbin/bpftool")),
            "filling the BTF cache with /usr/sbin/bpftool for the next runs");
  EXPECT_EQ(describe_btf_filling(Failure{"bpftool not found"}), "bpftool not found");
}

}  // namespace
}  // namespace hacoboot
