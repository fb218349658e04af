// Nothing of ours stays attached to the kernel once hacoboot-sampler exits,
// whether its --run command ended or it was interrupted with Ctrl-C.
//
// The programs and links are identified by the ids the running tracer holds
// open (/proc/PID/fdinfo), not by name alone: another tracer started by a
// concurrent test may legitimately have programs of the same names loaded.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <thread>

#include "fixture.hpp"

namespace hacoboot::it {
namespace {

class CleanupTest : public IntegrationTest {
 protected:
  // Waits until the tracer holds all of our programs, and returns their ids.
  BpfIds attached_ids(Process& tracer) {
    BpfIds ids;
    std::set<std::string> names;
    for (int i = 0; i < 300 && tracer.running(); ++i) {
      ids = bpf_ids_held_by(tracer.pid());
      names.clear();
      for (const auto& prog : bpftool_list("prog", dir())) {
        if (ids.programs.count(prog.value("id", 0U)) > 0) names.insert(prog.value("name", std::string()));
      }
      if (has_all_programs(names)) return ids;
      std::this_thread::sleep_for(100ms);
    }
    std::string seen;
    for (const auto& n : names) seen += n + " ";
    ADD_FAILURE() << "the tracer never held all of its programs; seen: " << seen << "\nstderr: " << tracer.err();
    return ids;
  }

  // Program names are cut to 15 characters by the kernel.
  static bool has_all_programs(const std::set<std::string>& names) {
    const auto has = [&](const std::vector<std::string>& programs) {
      return std::all_of(programs.begin(), programs.end(),
                         [&](const std::string& program) { return names.count(program.substr(0, 15)) > 0; });
    };
    return has(kCommonPrograms) && (has(kPerSyscallPrograms) || has(kRawSyscallPrograms));
  }

  // The kernel frees programs shortly after their last reference goes.
  void expect_all_gone(const BpfIds& ids) {
    ASSERT_FALSE(ids.programs.empty());
    ASSERT_FALSE(ids.links.empty()) << "the tracer held no BPF link";
    std::vector<std::string> present = bpf_objects_still_present(ids, dir());
    for (int i = 0; i < 50 && !present.empty(); ++i) {
      std::this_thread::sleep_for(100ms);
      present = bpf_objects_still_present(ids, dir());
    }
    std::string listing;
    for (const auto& p : present) listing += p + "\n";
    EXPECT_TRUE(present.empty()) << "still loaded 5 s after the tracer exited:\n" << listing;
  }
};

TEST_F(CleanupTest, NothingLeftAttachedAfterTheRunCommandEnds) {
  const auto live = dir() / "live";
  const auto done = dir() / "done";
  const std::string run = "touch " + shell_quote(live.string()) + "; " + wait_for_file_command(done);
  Process tracer(sampler_argv({"--format", "json", "--run", run}), dir());
  for (int i = 0; i < 600 && !std::filesystem::exists(live) && tracer.running(); ++i) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(std::filesystem::exists(live)) << "the --run command never started\n" << tracer.err();

  const auto ids = attached_ids(tracer);
  ASSERT_FALSE(HasFailure());
  ASSERT_FALSE(bpf_objects_still_present(ids, dir()).empty()) << "bpftool does not show the running tracer's programs";
  std::ofstream(done.string()).put('\n');
  const auto status = tracer.wait_or_kill(60s);
  ASSERT_TRUE(status.exited && status.code == 0) << status.describe() << '\n' << tracer.err();
  expect_all_gone(ids);
}

TEST_F(CleanupTest, CtrlCPrintsTheSummaryAndDetaches) {
  Process tracer(sampler_argv({"--format", "json", "-d", "60s", app().string()}), dir());
  ASSERT_TRUE(tracer.wait_for_text("Hit Ctrl-C", true, 60s)) << tracer.err();
  const auto ids = attached_ids(tracer);
  ASSERT_FALSE(HasFailure());

  const auto boot = run_process({launcher().string(), "-n", "1", "--", app().string()}, dir(), 60s);
  ASSERT_TRUE(boot.status.exited && boot.status.code == 0) << boot.status.describe() << '\n' << boot.err;

  tracer.send_signal(SIGINT);
  const auto status = tracer.wait_or_kill(30s);
  EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << '\n' << tracer.err();
  nlohmann::json summary;
  ASSERT_NO_THROW(summary = nlohmann::json::parse(tracer.out())) << "no summary on stdout: " << tracer.out();
  expect_boot_counts(summary, 1, 1, 1, 0);
  expect_all_gone(ids);
}

}  // namespace
}  // namespace hacoboot::it
