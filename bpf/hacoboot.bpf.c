// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
/*
 * Kernel side of hacoboot-sampler: reports each Haconiwa launch's phases and
 * the execve, first listen and exit of every process of its container.
 *
 * Attach points: the USDT probe (one uprobe_multi link when the kernel has
 * them, else libbpf's perf uprobes) and raw tracepoints for fork/exec/exit.
 * Raw rather than BTF-typed (tp_btf) tracepoints: tp_btf makes libbpf read and
 * index the whole kernel BTF at every start (the cost is in BENCHMARKS.md),
 * while raw ones let CO-RE use a minimal BTF cached per kernel. Hence every
 * kernel pointer is read with BPF_CORE_READ.
 *
 * Syscalls: execve and listen through the per-syscall tracepoints
 * (syscalls:sys_enter_execve, ...) when the loader can find their ids;
 * through raw_syscalls sys_enter/sys_exit otherwise. Those two run on every
 * syscall of the host in any case: they time the syscalls of accounted
 * threads (syscall_accounting.bpf.h), and return on one load while no thread
 * is accounted. fentry on the syscall functions is refused on some kernels
 * and sandboxes (EPERM).
 *
 * Scheduler states: sched_switch and sched_waking move each thread of a
 * tracked process between the states of enum hacoboot_sched_state, summing
 * the time spent in each in its `threads` entry; every event a thread emits
 * carries its sums up to the event, so they cost no record of their own.
 * Only a wakeup across processes is recorded (HACOBOOT_EV_WAKEUP).
 *
 * The file holds the programs (SEC()) and what several of them share; the
 * two jobs they serve are in their own headers: which process belongs to
 * which launch (launch_tracking.bpf.h), and the scheduler states of its
 * threads (state_accounting.bpf.h, with its state machine as a table).
 */
/* The kernel types: vendored (kernel_types.h) or a vmlinux.h given to the build. */
#ifdef HACOBOOT_VMLINUX_H
#include HACOBOOT_VMLINUX_H
#else
#include "kernel_types.h"
#endif
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include <asm-generic/errno-base.h>
#include <asm/unistd.h>

#include "hacoboot/contract.h"

#if defined(__TARGET_ARCH_x86)
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, syscallno)
#else
#error "hacoboot: add how this architecture's pt_regs holds the syscall number"
#endif

/* Ring buffer fill level (bytes) from which producers wake the reader. */
const volatile __u64 wakeup_bytes = 0;
/* -n N: the reader stops after N settled boots, so the events that settle one wake it. */
const volatile bool wake_on_settle = false;
/*
 * --kernel-profile: a launch's start wakes the reader at once, which then
 * enables the CPU sampling; at its next poll the boot's first steps would
 * go unsampled.
 */
const volatile bool wake_on_start = false;
/* --pid: only launches by this process or its descendants; 0: any. */
const volatile __u32 watched_tgid = 0;
/*
 * The haconiwa binary's directory (the kernel's dev_t and inode) and file
 * name: an exec of another file than those in probed_files under that name
 * is reported (catch_unprobed_exec). 0: not watched (--pid, or a name too long).
 */
const volatile __u64 watched_dir_device = 0;
const volatile __u64 watched_dir_inode = 0;
const volatile char watched_name[HACOBOOT_WATCHED_NAME_LEN] = {};
/* Such an exec is held until the loader has attached the probe: it can continue the process. */
const volatile bool hold_unprobed_execs = false;
/*
 * Set by the loader once it stops reading records (the end of tracing): a
 * process held then would stay stopped, its record read by no one.
 */
__u32 holds_released = 0;
/* The generic (x86, arm64) SIGSTOP. */
#define HACOBOOT_SIGSTOP 19

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HACOBOOT_DEFAULT_RINGBUF_BYTES); /* resized by the loader before load */
} events SEC(".maps");

/* The counters the loader reports (see the contract): the headers below count too. */
struct hacoboot_counters counters = {};

#include "syscall_accounting.bpf.h"
#include "blocking.bpf.h"
#include "state_accounting.bpf.h"
#include "launch_tracking.bpf.h"
#include "kernel_profile.bpf.h"

/* What execve entry leaves for sched_process_exec: the event's time and the thread's sums then. */
struct execve_entry {
	__u64 ts_ns;
	__u32 flags; /* HACOBOOT_EVENT_SCHED */
	struct hacoboot_sched_totals sched;
};

/*
 * execve entries by tid, consumed by sched_process_exec. LRU: an execve
 * that fails never reaches sched_process_exec, and its entry must not pile up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HACOBOOT_MAX_EXECING);
	__type(key, __u32);
	__type(value, struct execve_entry);
} execing SEC(".maps");

/* The files the loader attached the probe to, or found without one: their execs are not caught. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HACOBOOT_MAX_PROBED_FILES);
	__type(key, struct hacoboot_file_id);
	__type(value, __u8);
} probed_files SEC(".maps");

/*
 * A record of `size` bytes (HACOBOOT_EVENT_BASE_SIZE, HACOBOOT_WAKEUP_EVENT_SIZE,
 * or the whole struct for exec events) from the current process `pid`, which
 * every caller has read already, with every field but the filename or wakee
 * filled, the current thread's states included; NULL, counted, when the
 * ring buffer is full. Its time is `now`, the clock as the caller read it
 * first thing, before any lookup or update: the tool's own work in the
 * handler does not move the figures.
 */
static __always_inline struct hacoboot_event *reserve_event(__u32 kind, __u64 size, long long arg,
							    __u32 pid,
							    const struct tracked_process *process,
							    __u64 now)
{
	struct hacoboot_event *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e) {
		__sync_fetch_and_add(&counters.lost_events, 1);
		return NULL;
	}
	e->ts_ns = now;
	e->cgroup_id = 0; /* only exec events need it: see on_exec */
	e->arg = arg;
	e->kind = kind;
	e->pid = pid;
	e->hpid = process->hpid;
	e->role = process->role;
	e->launch = process->launch;
	e->tid = current_totals(e->ts_ns, &e->flags, &e->sched);
	return e;
}

/*
 * Waking the reader costs more than the rest of the program, so producers
 * only wake it once the buffer fills up; the reader otherwise polls on a timer.
 * A boot's listen and its supervisor's or container's exit (a few per boot)
 * settle it: those wake the reader when it waits for a number of boots.
 */
static __always_inline void submit(struct hacoboot_event *e, bool settles)
{
	__u64 flags = (settles && wake_on_settle) ||
			      (e->kind == HACOBOOT_EV_PHASE && e->arg == HACOBOOT_PHASE_START_SV &&
			       wake_on_start) ||
			      bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
			  ? BPF_RB_FORCE_WAKEUP
			  : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, flags);
}

/*
 * Per CPU: set while a handler changes the current thread's accounting, from
 * before its clock read on. A hardirq can interrupt a BPF program and run
 * sched_waking on the same CPU, where current is the interrupted thread: a
 * wakeup record from it would end that thread's segment in the middle of
 * the interrupted change, at a later clock read than the handler's own (a
 * piece of negative length, sums off), and name a waker that is none.
 * sched_waking then leaves the current thread alone.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} accounting_busy SEC(".maps");

static __always_inline __u32 *accounting_begins(void)
{
	__u32 zero = 0;
	__u32 *busy = bpf_map_lookup_elem(&accounting_busy, &zero);

	if (busy)
		*busy = 1;
	return busy;
}

static __always_inline void accounting_ends(__u32 *busy)
{
	if (busy)
		*busy = 0;
}

/* Whether this CPU interrupted a handler changing the current thread's accounting. */
static __always_inline bool accounting_interrupted(void)
{
	__u32 zero = 0;
	__u32 *busy = bpf_map_lookup_elem(&accounting_busy, &zero);

	return busy && *busy;
}

SEC("usdt")
int BPF_USDT(on_phase, long phase, long hpid)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	/* CLI (phase 0) and supervisor (1, 2) pass phases with their own pid. */
	bool launcher = phase <= HACOBOOT_PHASE_START_FORK && pid == hpid;
	struct tracked_process *t;
	struct hacoboot_event *e;
	__u32 *busy = NULL;
	__u32 launch;
	__u64 now = 0;

	/*
	 * A launcher's own phase reads the clock first, before the lookup and
	 * (with --pid) the walk up its ancestry: its START_SV starts the boot,
	 * whose figures then begin at the probe's instant, not after the
	 * tool's work. Any other phase reads it once it is known to be of a
	 * launch followed: the lookups before it cost every record the same,
	 * and a hit of a launch not followed (row 9a of BENCHMARKS.md, a flood
	 * of made-up hpids) is spared a clock read. The CPU is marked busy
	 * from before the clock read on, as in every handler.
	 */
	if (launcher) {
		busy = accounting_begins();
		now = bpf_ktime_get_ns();
	}
	t = bpf_map_lookup_elem(&tracked, &pid);
	/* Tracked processes descend from a watched launcher already. */
	if (watched_tgid && !t && !under_watched_process()) {
		accounting_ends(busy);
		return 0;
	}
	if (launcher) {
		launch = launcher_passed(pid, t, phase, now);
	} else {
		/*
		 * Any other phase belongs to a launch seen starting, or is dropped
		 * here: a launch begun before tracing, or a process passing made-up
		 * hpids, costs two lookups and a count instead of a record.
		 */
		struct tracked_process *owner = launch_of(t, hpid);

		if (!owner) {
			count_untracked_phase();
			return 0;
		}
		busy = accounting_begins();
		now = bpf_ktime_get_ns();
		launch = owner->launch;
	}

	/* Phase events report no role: the decoder reads 0 as untracked. */
	struct tracked_process launch_ids = {.hpid = hpid, .launch = launch};

	e = reserve_event(HACOBOOT_EV_PHASE, HACOBOOT_EVENT_BASE_SIZE, phase, pid, &launch_ids,
			  now);
	if (e)
		submit(e, false);
	accounting_ends(busy);
	return 0;
}

static __always_inline void process_forked(struct task_struct *parent, struct task_struct *child)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 child_pid = BPF_CORE_READ(child, pid);
	__u32 parent_pid = BPF_CORE_READ(parent, tgid);
	struct tracked_process *t;
	struct tracked_process member;
	struct hacoboot_event *e;
	__u32 kind = HACOBOOT_EV_FORK;

	/*
	 * A new thread belongs to its process already: only its states are
	 * new, and where it came from, which a critical path through it (a
	 * service listening from a thread) follows back to its creator. A
	 * tracked process has an accounted thread (its first, at least), so
	 * with none accounted a clone returns on one load, as it did before.
	 */
	if (child_pid != BPF_CORE_READ(child, tgid)) {
		if (!threads_alive)
			return;
		t = bpf_map_lookup_elem(&tracked, &parent_pid);
		if (!t ||
		    !start_thread(child_pid, parent_pid, t->launch, HACOBOOT_SCHED_RUN_QUEUE, now))
			return;
		kind = HACOBOOT_EV_THREAD;
		member = *t;
	} else {
		t = bpf_map_lookup_elem(&tracked, &parent_pid);
		if (!t)
			return;
		member = child_of(t);
		/* Other launcher forks are reported untracked: they link a CLI to its supervisor.
		 */
		if (member.role)
			track(child_pid, &member, now);
	}
	/* One record site for both: each inlined copy lengthens every start's verification. */
	e = reserve_event(kind, HACOBOOT_EVENT_BASE_SIZE, child_pid, parent_pid, &member, now);
	if (e)
		submit(e, false);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 *busy = accounting_begins();

	process_forked(parent, child);
	accounting_ends(busy);
	return 0;
}

/*
 * execve entry: the time a container process asked to run its command.
 * execveat has no per-syscall hook of its own: every perf tracepoint costs
 * the tool's exit two RCU Tasks Trace grace periods (BENCHMARKS.md), and
 * Haconiwa, like libc's exec family, calls execve. An execveat (fexecve) is
 * timed when it completes, at sched_process_exec, with either set of hooks.
 */
static __always_inline void execve_entered(__u64 now)
{
	struct execve_entry entry;
	__u32 tid;

	if (!members_alive)
		return;
	if (!member_of_container(bpf_get_current_pid_tgid() >> 32))
		return;
	/*
	 * `now`: read first, by either hook. The raw hook's is the call's entry
	 * time: the call's time then starts with the step after.
	 */
	entry.ts_ns = now;
	tid = current_totals(entry.ts_ns, &entry.flags, &entry.sched);
	bpf_map_update_elem(&execing, &tid, &entry, BPF_ANY);
}

/*
 * The records of the syscalls:sys_enter_* and sys_exit_* tracepoints (their
 * tracefs format files): a stable layout, read as is rather than by CO-RE.
 */
struct syscall_enter_record {
	__u64 common;
	int syscall_nr;
	unsigned long args[6];
};

struct syscall_exit_record {
	__u64 common;
	int syscall_nr;
	long ret;
};

/*
 * The loader's proof that the per-syscall hooks sit on the right tracepoints
 * (their ids may come from a cache file): it sets self_check_tid and
 * self_check_filename, calls execve("") and listen(-1, 0) itself (both fail),
 * and reads which hook saw its own call. Entry and exit of one syscall share
 * its number: the arguments tell them apart (the filename pointer at entry,
 * -EBADF at listen's exit).
 */
__u32 self_check_tid = 0;
__u64 self_check_filename = 0;
__u32 self_check_execve_seen = 0;
__u32 self_check_listen_seen = 0;

static __always_inline bool self_checking(void)
{
	return self_check_tid && (__u32)bpf_get_current_pid_tgid() == self_check_tid;
}

SEC("tracepoint/syscalls/sys_enter_execve")
int on_execve(struct syscall_enter_record *ctx)
{
	__u32 *busy;

	/* Another syscall's tracepoint, whose record has the same layout: not ours. */
	if (ctx->syscall_nr != __NR_execve)
		return 0;
	if (self_checking() && ctx->args[0] == self_check_filename)
		self_check_execve_seen = 1;
	busy = accounting_begins();
	execve_entered(bpf_ktime_get_ns());
	accounting_ends(busy);
	return 0;
}

/*
 * Set by the loader when execve and listen come through the raw syscall
 * hooks (the per-syscall tracepoints could not be attached): the raw hooks
 * run either way, for the syscall accounting.
 */
bool milestones_from_raw_syscalls = false;

/*
 * An accounted thread enters syscall `nr`: the time is read first, so that
 * the lookup is the call's. Returns the time, 0 for a thread not accounted.
 */
static __always_inline __u64 call_entered(__u32 nr)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_states *thread = bpf_map_lookup_elem(&threads, &tid);
	struct hacoboot_sched_totals totals;

	if (!thread)
		return 0;
	take_reading(thread, now, &totals);
	syscall_entered(&thread->syscalls, nr, now, &totals);
	return now;
}

/* An accounted thread returns from its syscall at `now`. */
static __always_inline void call_returned(__u64 now)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_states *thread = bpf_map_lookup_elem(&threads, &tid);
	struct hacoboot_sched_totals totals;

	if (!thread || !thread->syscalls.in_call)
		return;
	take_reading(thread, now, &totals);
	syscall_returned(&thread->syscalls, thread->launch, tid, now, &totals);
}

/*
 * Runs on every syscall of the host: with no thread accounted, unrelated
 * processes pay the load of threads_alive (and of the flag) and return.
 */
SEC("raw_tp/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	bool accounting = threads_alive && account_syscalls;
	bool execve = milestones_from_raw_syscalls && id == __NR_execve;
	__u64 now = 0;
	__u32 *busy;

	if (!accounting && !execve)
		return 0;
	busy = accounting_begins();
	if (accounting)
		now = call_entered(id);
	if (execve)
		execve_entered(now ? now : bpf_ktime_get_ns());
	accounting_ends(busy);
	return 0;
}

static __always_inline bool is_watched_name(const struct dentry *dentry)
{
	char name[HACOBOOT_WATCHED_NAME_LEN];

	if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(dentry, d_name.name)) <= 0)
		return false;
	for (int i = 0; i < HACOBOOT_WATCHED_NAME_LEN; i++) {
		if (name[i] != watched_name[i])
			return false;
		if (!name[i])
			return true;
	}
	return false;
}

/*
 * An exec of a file at the haconiwa binary's path that the probe is not on
 * (a new one an upgrade renamed there a moment ago): reported at once, for
 * the loader to attach to it, and the process held, stopped before its first
 * instruction, so that its launch passes no phase before the probe is in
 * place. Not a process with a controlling terminal: its shell's job control
 * would see it stop. Reserved before the stop: a full ring buffer holds no
 * process that no one would continue.
 */
static __always_inline void catch_unprobed_exec(struct task_struct *task, struct linux_binprm *bprm,
						__u32 pid, __u64 now)
{
	struct file *file = BPF_CORE_READ(bprm, file);
	struct dentry *dentry = BPF_CORE_READ(file, f_path.dentry);
	struct inode *directory = BPF_CORE_READ(dentry, d_parent, d_inode);
	struct hacoboot_file_id id = {};
	struct hacoboot_event *e;

	if (BPF_CORE_READ(directory, i_ino) != watched_dir_inode ||
	    BPF_CORE_READ(directory, i_sb, s_dev) != watched_dir_device || !is_watched_name(dentry))
		return;
	id.device = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	id.inode = BPF_CORE_READ(file, f_inode, i_ino);
	if (bpf_map_lookup_elem(&probed_files, &id))
		return;
	e = bpf_ringbuf_reserve(&events, HACOBOOT_UNPROBED_EXEC_EVENT_SIZE, 0);
	if (!e) {
		__sync_fetch_and_add(&counters.lost_events, 1);
		return;
	}
	__builtin_memset(e, 0, HACOBOOT_UNPROBED_EXEC_EVENT_SIZE);
	e->ts_ns = now;
	e->kind = HACOBOOT_EV_UNPROBED_EXEC;
	e->pid = pid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->unprobed.device = id.device;
	e->unprobed.inode = id.inode;
	e->unprobed.held = hold_unprobed_execs && !holds_released &&
			   !BPF_CORE_READ(task, signal, tty) &&
			   bpf_send_signal(HACOBOOT_SIGSTOP) == 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * The filename comes from the kernel's copy (bprm->filename): reading the
 * user pointer at syscall entry fails when its page is not resident.
 */
static __always_inline void process_execed(struct task_struct *task, pid_t old_pid,
					   struct linux_binprm *bprm)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 old_tid = old_pid;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct tracked_process *t;
	struct hacoboot_event *e;
	struct execve_entry *entry;

	if (watched_dir_inode)
		catch_unprobed_exec(task, bprm, pid, now);
	t = member_of_container(pid);
	if (!t)
		return;
	thread_renamed(old_tid, (__u32)bpf_get_current_pid_tgid());
	e = reserve_event(HACOBOOT_EV_EXEC, sizeof(*e), 0, pid, t, now);
	if (!e)
		return;
	entry = bpf_map_lookup_elem(&execing, &old_tid);
	if (entry) {
		/* The event's time is the entry's, and so are the sums. */
		e->ts_ns = entry->ts_ns;
		e->flags = entry->flags;
		e->sched = entry->sched;
		bpf_map_delete_elem(&execing, &old_tid);
	}
	e->cgroup_id = bpf_get_current_cgroup_id(); /* after cgroup set-up: the container's own */
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	submit(e, false);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 *busy = accounting_begins();

	process_execed(task, old_pid, bprm);
	accounting_ends(busy);
	return 0;
}

/*
 * A successful listen(2) by a container process, whose call returned at
 * `now`: the callers read the clock first, past only the checks that spare
 * other syscalls one.
 */
static __always_inline void listen_returned(long ret, __u64 now)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct tracked_process *t = member_of_container(pid);
	struct hacoboot_event *e;

	if (!t)
		return;
	/*
	 * The call returns here for the accounting, which it ends: in the step
	 * its event ends, whether or not the raw exit hook ran first.
	 */
	call_returned(now);
	e = reserve_event(HACOBOOT_EV_LISTEN, HACOBOOT_EVENT_BASE_SIZE, ret, pid, t, now);
	if (e)
		submit(e, true);
	stop_accounting(t->launch);
}

SEC("tracepoint/syscalls/sys_exit_listen")
int on_listen_exit(struct syscall_exit_record *ctx)
{
	__u32 *busy;

	if (ctx->syscall_nr != __NR_listen)
		return 0;
	if (self_checking() && ctx->ret == -EBADF)
		self_check_listen_seen = 1;
	if (ctx->ret != 0 || !members_alive)
		return 0;
	busy = accounting_begins();
	listen_returned(ctx->ret, bpf_ktime_get_ns());
	accounting_ends(busy);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	bool accounting = threads_alive && account_syscalls;
	/* Runs on every syscall of the host: the syscall number is read last. */
	bool listened = milestones_from_raw_syscalls && ret == 0 && members_alive &&
			SYSCALL_NR(regs) == __NR_listen;
	__u32 *busy;
	__u64 now;

	if (!accounting && !listened)
		return 0;
	busy = accounting_begins();
	now = bpf_ktime_get_ns();
	if (accounting)
		call_returned(now);
	if (listened)
		listen_returned(ret, now);
	accounting_ends(busy);
	return 0;
}

/* exit_code: the process's wait(2) status, as its parent will read it. */
static __always_inline void process_exited(__u32 pid, int exit_code)
{
	__u64 now = bpf_ktime_get_ns();
	struct tracked_process *t = bpf_map_lookup_elem(&tracked, &pid);
	struct hacoboot_event *e;

	if (!t)
		return;
	e = reserve_event(HACOBOOT_EV_EXIT, HACOBOOT_EVENT_BASE_SIZE, exit_code, pid, t, now);
	if (e)
		submit(e, e->role != HACOBOOT_ROLE_MEMBER);
	untrack(pid, t);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u64 current = bpf_get_current_pid_tgid();
	__u32 *busy;

	/*
	 * Only the last thread to leave ends the process; its exit event carries
	 * its sums. do_exit() has set its exit_code by now, to the group's on an
	 * exit_group() or a fatal signal.
	 */
	if (BPF_CORE_READ(task, signal, live.counter) == 0) {
		busy = accounting_begins();
		process_exited(current >> 32, BPF_CORE_READ(task, exit_code));
		accounting_ends(busy);
	}
	forget_thread((__u32)current);
	return 0;
}

/*
 * The prev_state argument (Linux 5.18+), not prev->__state: a wakeup on
 * another CPU may have set that to TASK_RUNNING already.
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct thread_states *thread;
	__u64 now;

	if (!threads_alive)
		return 0;
	now = bpf_ktime_get_ns();
	thread = thread_of(prev);
	if (thread) {
		switched_out(thread, prev, preempt, prev_state, now);
		if (account_syscalls && blocked(thread))
			block_begins(&thread->block, &thread->syscalls, ctx);
	}
	thread = thread_of(next);
	if (thread) {
		/* Still blocked: its wakeup went unseen, the block ends here. */
		if (thread->block.pending && blocked(thread))
			block_ends(&thread->block, &thread->syscalls, thread->launch,
				   BPF_CORE_READ(next, pid), now - thread->since, 0,
				   HACOBOOT_NO_STACK);
		thread->block.pending = 0;
		switched_in(thread, next, now);
	}
	return 0;
}

/*
 * A wakeup across processes: the waker (current) is an accounted thread of
 * another process than the wakee's: a record at `now`, both threads' sums
 * taken then.
 */
static __always_inline void report_wakeup(struct thread_states *wakee, __u32 wakee_tid, __u64 now)
{
	__u32 waker_pid = bpf_get_current_pid_tgid() >> 32;
	struct tracked_process *waker_process;
	struct tracked_process *wakee_process;
	struct hacoboot_event *e;

	if (waker_pid == wakee->pid)
		return;
	waker_process = bpf_map_lookup_elem(&tracked, &waker_pid);
	wakee_process = bpf_map_lookup_elem(&tracked, &wakee->pid);
	if (!waker_process || !wakee_process)
		return;
	e = reserve_event(HACOBOOT_EV_WAKEUP, HACOBOOT_WAKEUP_EVENT_SIZE, wakee_tid, waker_pid,
			  waker_process, now);
	if (!e)
		return;
	if (!(e->flags & HACOBOOT_EVENT_SCHED)) { /* an unaccounted waker: no edge */
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
		return;
	}
	e->wakee.pid = wakee->pid;
	e->wakee.tid = wakee_tid;
	e->wakee.hpid = wakee_process->hpid;
	e->wakee.launch = wakee_process->launch;
	e->wakee.role = wakee_process->role;
	e->wakee.reserved = 0;
	totals_at(wakee, now, &e->wakee.sched);
	submit(e, false);
}

/*
 * A blocked thread with a pending block is woken at `now`: its blocked time
 * is charged, with the waker (current, unless an interrupt woke it amid a
 * handler) and its stack when it is accounted.
 */
static __always_inline void wakee_unblocked(void *ctx, struct thread_states *wakee, __u32 tid,
					    __u64 now, bool waker_is_current)
{
	__u32 waker_tid = (__u32)bpf_get_current_pid_tgid();
	__u32 waker_stack_id = HACOBOOT_NO_STACK;

	if (waker_is_current && waker_tid != tid && bpf_map_lookup_elem(&threads, &waker_tid))
		waker_stack_id = current_stack(ctx);
	else
		waker_tid = 0;
	block_ends(&wakee->block, &wakee->syscalls, wakee->launch, tid, now - wakee->since,
		   waker_tid, waker_stack_id);
}

/*
 * sched_waking rather than sched_wakeup: it runs in the waker's context,
 * while sched_wakeup may run on the wakee's CPU (the wakeup queued to it),
 * under whatever runs there. A thread only preempted is not waked: only a
 * blocked one leaves its state here.
 */
SEC("raw_tp/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *task)
{
	__u32 tid;
	struct thread_states *wakee;
	bool waker_is_current;
	__u64 now;

	if (!threads_alive)
		return 0;
	now = bpf_ktime_get_ns();
	tid = BPF_CORE_READ(task, pid);
	wakee = bpf_map_lookup_elem(&threads, &tid);
	if (!wakee || !blocked(wakee))
		return 0;
	waker_is_current = !accounting_interrupted();
	if (waker_is_current)
		report_wakeup(wakee, tid, now);
	if (wakee->block.pending)
		wakee_unblocked(ctx, wakee, tid, now, waker_is_current);
	enter_state(wakee, HACOBOOT_SCHED_RUN_QUEUE, now);
	return 0;
}

/*
 * A CPU sample (--kernel-profile): the perf events run it on every CPU at
 * their frequency while enabled (the loader enables them while threads are
 * accounted); it returns on the lookup of the thread on the CPU unless that
 * thread is accounted.
 */
SEC("perf_event")
int on_cpu_sample(void *ctx)
{
	__u32 tid;
	struct thread_states *thread;

	if (!threads_alive)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	thread = bpf_map_lookup_elem(&threads, &tid);
	if (thread)
		count_sample(ctx, thread, tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
