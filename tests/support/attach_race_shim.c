/*
 * Preloaded into hacoboot-sampler by the integration tests (LD_PRELOAD), to
 * make the moment an upgrade could land deterministic: right before the
 * tool first creates a uprobe_multi link or opens a perf uprobe, which is
 * after it read the haconiwa binary's notes and before the probe is
 * attached, it renames $HACOBOOT_SHIM_RENAME_FROM over
 * $HACOBOOT_SHIM_RENAME_TO, once. Every call goes on to the real syscall().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

/* BPF_TRACE_UPROBE_MULTI, newer than Debian 12's uapi headers. */
#define UPROBE_MULTI_ATTACH_TYPE 48

static int renamed;

static int attaches_a_uprobe(long number, long argument0, long argument1) {
  if (number == SYS_bpf && argument0 == BPF_LINK_CREATE) {
    const union bpf_attr* attr = (const union bpf_attr*)argument1;
    return attr->link_create.attach_type == UPROBE_MULTI_ATTACH_TYPE;
  }
  if (number == SYS_perf_event_open) {
    const struct perf_event_attr* attr = (const struct perf_event_attr*)argument0;
    /* uprobes are a PMU of a dynamic type, past the fixed ones */
    return attr->type >= PERF_TYPE_MAX;
  }
  return 0;
}

long syscall(long number, ...) {
  static long (*real_syscall)(long, ...);
  long arguments[6];
  va_list list;

  va_start(list, number);
  for (int i = 0; i < 6; i++) arguments[i] = va_arg(list, long);
  va_end(list);
  if (!real_syscall) real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  if (!renamed && attaches_a_uprobe(number, arguments[0], arguments[1])) {
    const char* from = getenv("HACOBOOT_SHIM_RENAME_FROM");
    const char* to = getenv("HACOBOOT_SHIM_RENAME_TO");

    renamed = 1;
    if (from && to && rename(from, to) != 0) perror("attach_race_shim: rename");
  }
  return real_syscall(number, arguments[0], arguments[1], arguments[2], arguments[3], arguments[4], arguments[5]);
}
