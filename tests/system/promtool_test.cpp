// promtool, Prometheus' own checker, accepts the exposition BootMetrics
// writes: the golden files, which the unit tests keep equal to it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "temp_dir.hpp"

namespace hacoboot {
namespace {

// CI sets HACOBOOT_REQUIRE_BPF=1 to turn every skip for a missing tool into a failure.
bool tools_required() {
  const char* value = std::getenv("HACOBOOT_REQUIRE_BPF");
  return value != nullptr && std::string_view(value) == "1";
}

TEST(Promtool, AcceptsTheExpositionWithoutALintProblem) {
  const auto promtool = it::find_in_path("promtool");
  if (!promtool) {
    if (tools_required())
      FAIL() << "promtool is not in PATH (HACOBOOT_REQUIRE_BPF=1: CI installs it, scripts/setup.sh)";
    GTEST_SKIP() << "promtool is not in PATH: install the Debian package prometheus (scripts/setup.sh)";
  }
  const test::TempDir dir;
  for (const char* name : {"metrics.empty.prom", "metrics.prom"}) {
    const auto golden = test::golden_dir() / name;
    ASSERT_TRUE(std::filesystem::exists(golden)) << golden;
    // promtool reads the metrics from its standard input only.
    const auto command =
        it::shell_command({promtool->string(), "check", "metrics"}) + " < " + it::shell_quote(golden.string());
    const auto result = it::run_process({"/bin/sh", "-c", command}, dir.path(), std::chrono::seconds(60));
    EXPECT_TRUE(result.status.exited && result.status.code == 0) << name << ": " << result.status.describe() << "\n"
                                                                 << result.out << result.err;
    EXPECT_EQ(result.out + result.err, "") << name << ": promtool found problems";
  }
}

}  // namespace
}  // namespace hacoboot
