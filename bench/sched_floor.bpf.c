// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
/*
 * The floor of any always-attached scheduler hook: two raw tracepoint
 * programs on the tool's scheduler tracepoints, each returning after one load
 * of a global, as the tool's do while no thread is accounted
 * (hacoboot-bench-schedfloor, BENCHMARKS.md).
 */
#include <linux/types.h>

#include <bpf/bpf_helpers.h>

__u64 threads_alive = 0;

SEC("raw_tp/sched_switch")
int floor_switch(void* ctx) {
  return *(volatile __u64*)&threads_alive != 0;
}

SEC("raw_tp/sched_waking")
int floor_waking(void* ctx) {
  return *(volatile __u64*)&threads_alive != 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
