// hacoboot-bench-schedfloor: runs COMMAND with the two empty scheduler hooks
// of bench/sched_floor.bpf.c attached (each returns after one load of a
// global), the floor the tool's idle scheduler hooks are measured against.
//
//   hacoboot-bench-schedfloor COMMAND [ARGS...]
#include <bpf/libbpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "sched_floor.skel.h"

namespace {

struct SkeletonDeleter {
  void operator()(sched_floor_bpf* skeleton) const { sched_floor_bpf__destroy(skeleton); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: hacoboot-bench-schedfloor COMMAND [ARGS...]\n", stderr);
    return 2;
  }
  const std::unique_ptr<sched_floor_bpf, SkeletonDeleter> skeleton(sched_floor_bpf__open_and_load());
  if (!skeleton || sched_floor_bpf__attach(skeleton.get()) != 0) {
    std::perror("hacoboot-bench-schedfloor: loading or attaching the programs");
    return 1;
  }
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    execv(argv[1], argv + 1);
    std::perror("hacoboot-bench-schedfloor: exec");
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
