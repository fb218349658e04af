/* SPDX-License-Identifier: MIT */
/*
 * The kernel types hacoboot.bpf.c reads, written by hand in place of a
 * vmlinux.h dumped from the build machine's /sys/kernel/btf/vmlinux: the
 * build then needs no BTF (build containers and package builders have none)
 * and its output does not depend on the build host's kernel.
 *
 * Only the fields the program reads are declared. preserve_access_index makes
 * every access a CO-RE relocation, resolved by name against the running
 * kernel's BTF at load time: the layout below (offsets, padding) is
 * irrelevant, the names and types of the fields must match the kernel's.
 * -DHACOBOOT_VMLINUX_H=FILE compiles against a generated vmlinux.h instead.
 */
#ifndef HACOBOOT_KERNEL_TYPES_H
#define HACOBOOT_KERNEL_TYPES_H

/* Helper ids, map types and flags: the UAPI, stable, from linux-libc-dev. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <stdbool.h>

typedef __kernel_pid_t pid_t;

typedef struct {
	int counter;
} atomic_t;

struct tty_struct;

struct signal_struct {
	atomic_t live;
	struct tty_struct *tty; /* the controlling terminal, NULL without one */
} __attribute__((preserve_access_index));

/* A CPU's runqueue: its clock, and its clock less steal and IRQ time. */
struct rq {
	__u64 clock;
	__u64 clock_task;
} __attribute__((preserve_access_index));

/* With CONFIG_FAIR_GROUP_SCHED, the runqueue a fair task's queue is on. */
struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
	__u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

struct task_struct {
	struct sched_entity se;
	int exit_code;
	pid_t pid;
	pid_t tgid;
	struct task_struct *real_parent;
	struct signal_struct *signal;
	/* set while it waits in io_schedule(); a bit field: BPF_CORE_READ_BITFIELD_PROBED */
	unsigned int in_iowait : 1;
} __attribute__((preserve_access_index));

/* An exec'd file: which one (filesystem, inode), and its name and directory. */
struct super_block {
	__u32 s_dev; /* dev_t */
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct qstr {
	const unsigned char *name;
} __attribute__((preserve_access_index));

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
} __attribute__((preserve_access_index));

struct path {
	struct dentry *dentry;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct linux_binprm {
	struct file *file;
	const char *filename;
} __attribute__((preserve_access_index));

/*
 * The registers at a syscall tracepoint (the syscall number) and at the USDT
 * probe (libbpf's usdt.bpf.h reads the instruction pointer, and arguments at
 * offsets its loader computes). __VMLINUX_H__ tells bpf_tracing.h that
 * struct pt_regs has the kernel's field names, not the user-space ones.
 */
#define __VMLINUX_H__
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long ip;
	unsigned long orig_ax;
} __attribute__((preserve_access_index));
#elif defined(__TARGET_ARCH_arm64)
/* bpf_tracing.h reads arm64 registers through the UAPI struct user_pt_regs. */
#include <asm/ptrace.h>
struct pt_regs {
	__s32 syscallno;
} __attribute__((preserve_access_index));
#else
#error "hacoboot: declare this architecture's struct pt_regs"
#endif

#endif
