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
 * Syscalls: the per-syscall tracepoints (syscalls:sys_enter_execve, ...) when
 * the loader can find their ids, so that no program runs on any other
 * syscall of the host; raw_syscalls sys_enter/sys_exit otherwise, which run on
 * every syscall and return at once unless a container boots. fentry on the
 * syscall functions is refused on some kernels and sandboxes (EPERM).
 *
 * Scheduler states: sched_switch and sched_waking move each thread of a
 * tracked process between the states of enum hacoboot_sched_state, summing
 * the time spent in each in its `threads` entry; every event a thread emits
 * carries its sums up to the event, so they cost no record of their own.
 * Only a wakeup across processes is recorded (HACOBOOT_EV_WAKEUP).
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
/* --pid: only launches by this process or its descendants; 0: any. */
const volatile __u32 watched_tgid = 0;
/* Deeper than any real haconiwa process tree; bounds the verifier's walk. */
#define MAX_ANCESTRY 32
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
/* The generic (x86, arm64) SIGSTOP. */
#define HACOBOOT_SIGSTOP 19

struct tracked_process {
	__u32 hpid;
	__u32 boot;  /* id of the launch, drawn at START_SV, inherited by the container */
	__u32 role;  /* enum hacoboot_role */
	__u32 armed; /* launcher passed START_FORK: its next process fork is the container */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HACOBOOT_DEFAULT_RINGBUF_BYTES); /* resized by the loader before load */
} events SEC(".maps");

/*
 * Keyed by tgid: threads share their process's membership. Not preallocated:
 * preallocating HACOBOOT_MAX_TRACKED entries would lengthen every start, and
 * entries are only added on the fork of a tracked process.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_TRACKED);
	__type(key, __u32);
	__type(value, struct tracked_process);
} tracked SEC(".maps");

/* A thread of a tracked process: its current scheduler state and the sums of the past ones. */
struct thread_states {
	__u32 pid;   /* tgid */
	__u32 state; /* enum hacoboot_sched_state, since `since` */
	__u64 since;
	/* up to `since` */
	struct hacoboot_sched_totals totals;
	/* the launch it is accounted for */
	__u32 boot;
	/* whether `runtime` is the scheduler's count at `since` (else: not yet known) */
	__u32 runtime_known;
	/*
	 * The scheduler's count of its CPU time (se.sum_exec_runtime) at its
	 * last switch, which began the stretch on a CPU when it runs.
	 */
	__u64 runtime;
	/* running: of the stretch since `since`, the time found not on a CPU (steal) */
	__u64 waited;
	/* running: its CPU's steal time (cpu_steal_of) when the stretch began there */
	__u64 steal_at_start;
	__u32 stretch_cpu;
	__u32 reserved;
	/* its CPU sum as the last reading while it ran reported it: never taken back */
	__u64 cpu_reported;
};

/*
 * Keyed by tid. An entry is added when the thread is first seen (its process
 * becoming tracked, or its fork or clone by a tracked process) and deleted at
 * its exit. Not preallocated, for the reason `tracked` is not.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct thread_states);
} threads SEC(".maps");

/*
 * Entries in `threads`. The scheduler hooks run on every context switch and
 * wakeup of the host; with no thread accounted they return on this one load.
 */
__u64 threads_alive = 0;

/*
 * A launch's threads in `threads`, so that ending its accounting deletes
 * those few entries: walking `threads` visits all of its buckets however
 * few entries it holds (~0.4 ms at 65,536), inside the container's listen.
 * Past HACOBOOT_LAUNCH_THREADS the threads are only counted, and the walk
 * is the fallback.
 */
#define HACOBOOT_LAUNCH_THREADS 8
struct accounted_launch {
	__u32 threads; /* added so far */
	__u32 tids[HACOBOOT_LAUNCH_THREADS];
};

/*
 * Launches whose threads are accounted: from START_SV until the launch
 * settles (its first listen) or its supervisor exits. What follows a boot's
 * listen delays no boot: a container that runs for hours keeps the
 * scheduler hooks on no longer than its boot, and a CLI (launch id 0),
 * which only precedes the start, is never accounted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_TRACKED);
	__type(key, __u32);
	__type(value, struct accounted_launch);
} accounted_launches SEC(".maps");

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

struct hacoboot_counters counters = {};

/*
 * Phase events of no launch the kernel side tracks, dropped here (see
 * on_phase). Per CPU: a flood of them from many CPUs must not contend on one
 * counter. Read and summed by the loader.
 */
/* The files the loader attached the probe to, or found without one: their execs are not caught. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HACOBOOT_MAX_PROBED_FILES);
	__type(key, struct hacoboot_file_id);
	__type(value, __u8);
} probed_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} untracked_phases SEC(".maps");

/*
 * Container processes alive now. The syscall hooks run on every syscall of
 * the host; with no container booting they return on this one load.
 */
__u64 members_alive = 0;

/*
 * Tracked launchers by pid % LAUNCHER_SLOTS (never fewer than there are).
 * A phase under an hpid whose slot is 0 is of no tracked launch: in a flood
 * of made-up hpids, one load from this small array stands in for a lookup in
 * `tracked`, whose buckets such hpids hit at random, each a cache miss.
 */
#define LAUNCHER_SLOTS 1024
__u64 launchers_in_slot[LAUNCHER_SLOTS] = {};

static __always_inline __u64 *launcher_slot(__u32 pid)
{
	return &launchers_in_slot[pid & (LAUNCHER_SLOTS - 1)];
}

/*
 * Adds to `totals` the time since `since` in the thread's current state. A
 * stretch on a CPU is not all CPU time: on a VM the host may run something
 * else on the virtual CPU (steal time), which the scheduler's count of the
 * thread's CPU time leaves out, as the thread's CPU clock does. Of a
 * stretch's wall time, what that count grew by is CPU and the rest waiting
 * for a CPU (run queue). At a switch the count is up to date; in between,
 * the CPU's own steal time says as much up to its runqueue clock's last
 * update. `waited` keeps the part of the stretch so far found not on a CPU,
 * and the rest counts as CPU.
 */
static __always_inline void add_time_since(const struct thread_states *thread, __u64 now,
					   struct hacoboot_sched_totals *totals)
{
	__u64 wall = now - thread->since;
	__u64 waited;

	if (thread->state != HACOBOOT_SCHED_CPU) {
		totals->ns[thread->state & (HACOBOOT_SCHED_STATES - 1)] += wall;
		return;
	}
	waited = thread->waited < wall ? thread->waited : wall;
	totals->ns[HACOBOOT_SCHED_CPU] += wall - waited;
	totals->ns[HACOBOOT_SCHED_RUN_QUEUE] += waited;
}

/* Adds the time since `since` to the thread's current state and enters `state`. */
static __always_inline void enter_state(struct thread_states *thread, __u32 state, __u64 now)
{
	add_time_since(thread, now, &thread->totals);
	thread->since = now;
	thread->state = state;
	thread->waited = 0;
}

/*
 * The steal (and IRQ) time of the CPU `task` is on, summed since boot, as of
 * its runqueue clock's last update (a tick, a switch, a wakeup): how far the
 * runqueue's clock ran ahead of the clock tasks are charged by. 0 without
 * CONFIG_FAIR_GROUP_SCHED, which links a task's queue to its runqueue.
 */
static __always_inline __u64 cpu_steal_of(struct task_struct *task)
{
	struct rq *rq;

	if (!bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return 0;
	rq = BPF_CORE_READ(task, se.cfs_rq, rq);
	if (!rq)
		return 0;
	return BPF_CORE_READ(rq, clock) - BPF_CORE_READ(rq, clock_task);
}

/*
 * What is known now of a stretch on a CPU of `task`: its CPU's steal time
 * since the stretch began (up to the runqueue clock's last update, at most a
 * tick ago), and at a switch, where `runtime` is the scheduler's count just
 * updated (0 elsewhere), the wall time beyond what that count grew by, once
 * the stretch's starting count is known. Readings during the stretch reported
 * it as CPU up to then: that much stays CPU.
 */
static __always_inline void update_stretch(struct thread_states *thread, struct task_struct *task,
					   __u64 runtime, __u64 now)
{
	__u64 wall = now - thread->since;
	__u64 ran = runtime - thread->runtime;
	__u64 waited = 0;
	__u64 reported;

	/* The steal of another CPU than the one the stretch began on says nothing. */
	if (bpf_get_smp_processor_id() == thread->stretch_cpu)
		waited = cpu_steal_of(task) - thread->steal_at_start;

	if (runtime && thread->runtime_known && ran < wall && wall - ran > waited)
		waited = wall - ran;
	reported = thread->cpu_reported > thread->totals.ns[HACOBOOT_SCHED_CPU]
		       ? thread->cpu_reported - thread->totals.ns[HACOBOOT_SCHED_CPU]
		       : 0;
	if (waited > wall - reported)
		waited = wall - reported;
	if (waited > thread->waited)
		thread->waited = waited;
}

/* Where a stretch of `task` on the current CPU begins: that CPU, and its steal time now. */
static __always_inline void mark_stretch_start(struct thread_states *thread,
					       struct task_struct *task)
{
	thread->steal_at_start = cpu_steal_of(task);
	thread->stretch_cpu = bpf_get_smp_processor_id();
}

/* A stretch on a CPU of `task`, the current CPU, begins at `at`. */
static __always_inline void begin_stretch(struct thread_states *thread, struct task_struct *task,
					  __u64 at)
{
	enter_state(thread, HACOBOOT_SCHED_CPU, at);
	mark_stretch_start(thread, task);
}

/*
 * A running thread whose entry does not say CPU: its switch-in went unseen
 * (now and then on Linux 6.18, after a voluntary switch while runnable).
 * The scheduler's own count of its CPU time since its last switch, `runtime`
 * now, says when it began to run; before that it was in its recorded state.
 */
static __always_inline void repair_missed_switch_in(struct thread_states *thread,
						    struct task_struct *task, __u64 runtime,
						    __u64 now)
{
	__u64 ran = runtime - thread->runtime;

	if (thread->state == HACOBOOT_SCHED_CPU)
		return;
	begin_stretch(thread, task, ran < now - thread->since ? now - ran : thread->since);
}

/* The sums of a thread's states up to `now`, its current one included. */
static __always_inline void totals_at(const struct thread_states *thread, __u64 now,
				      struct hacoboot_sched_totals *totals)
{
	*totals = thread->totals;
	add_time_since(thread, now, totals);
}

/*
 * The states of the current thread up to `now` into `flags` and `totals`,
 * or flags 0 when the thread is not accounted (it predates its process's
 * tracking, or the map was full). Returns its tid.
 */
static __always_inline __u32 current_totals(__u64 now, __u32 *flags,
					    struct hacoboot_sched_totals *totals)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_states *thread = threads_alive ? bpf_map_lookup_elem(&threads, &tid) : NULL;

	if (thread) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		/*
		 * It runs now: a reading must not count that as waiting. The
		 * task's CPU count is read only then, off the common path.
		 */
		if (thread->state != HACOBOOT_SCHED_CPU)
			repair_missed_switch_in(thread, task,
						BPF_CORE_READ(task, se.sum_exec_runtime), now);
		update_stretch(thread, task, 0, now);
		totals_at(thread, now, totals);
		thread->cpu_reported = totals->ns[HACOBOOT_SCHED_CPU];
		*flags = HACOBOOT_EVENT_SCHED;
	} else {
		__builtin_memset(totals, 0, sizeof(*totals));
		*flags = 0;
	}
	return tid;
}

/*
 * A record of `size` bytes (HACOBOOT_EVENT_BASE_SIZE, HACOBOOT_WAKEUP_EVENT_SIZE,
 * or the whole struct for exec events) from the current process `pid`, which
 * every caller has read already, with every field but the filename or wakee
 * filled, the current thread's states included; NULL, counted, when the
 * ring buffer is full.
 */
static __always_inline struct hacoboot_event *reserve_event(__u32 kind, __u64 size, long long arg,
							    __u32 pid,
							    const struct tracked_process *process)
{
	struct hacoboot_event *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e) {
		__sync_fetch_and_add(&counters.lost_events, 1);
		return NULL;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = 0; /* only exec events need it: see on_exec */
	e->arg = arg;
	e->kind = kind;
	e->pid = pid;
	e->hpid = process->hpid;
	e->role = process->role;
	e->boot = process->boot;
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
			      bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
			  ? BPF_RB_FORCE_WAKEUP
			  : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, flags);
}

/* Accounts a thread's states from now on; a thread accounted already keeps its sums. */
static __always_inline void add_thread(__u32 tid, const struct thread_states *thread)
{
	long err = bpf_map_update_elem(&threads, &tid, thread, BPF_NOEXIST);
	struct accounted_launch *launch;
	__u32 slot;

	if (!err) {
		__sync_fetch_and_add(&threads_alive, 1);
		launch = bpf_map_lookup_elem(&accounted_launches, &thread->boot);
		if (launch) {
			slot = __sync_fetch_and_add(&launch->threads, 1);
			if (slot < HACOBOOT_LAUNCH_THREADS)
				launch->tids[slot] = tid;
		}
	} else if (err != -EEXIST)
		__sync_fetch_and_add(&counters.unaccounted_threads, 1);
}

/*
 * A thread accounted while it runs (the supervisor at START_SV) has no known
 * count for its stretch yet (update_stretch); one that waits gets it when it
 * is switched in.
 */
static __always_inline void start_thread(__u32 tid, __u32 pid, __u32 boot, __u32 state)
{
	struct thread_states thread = {
	    .pid = pid, .state = state, .since = bpf_ktime_get_ns(), .boot = boot};

	if (state == HACOBOOT_SCHED_CPU)
		mark_stretch_start(&thread, (struct task_struct *)bpf_get_current_task());

	if (boot && bpf_map_lookup_elem(&accounted_launches, &boot))
		add_thread(tid, &thread);
}

static long forget_thread_of_launch(void *map, const __u32 *tid, struct thread_states *thread,
				    const __u32 *boot)
{
	if (thread->boot == *boot && !bpf_map_delete_elem(map, tid))
		__sync_fetch_and_sub(&threads_alive, 1);
	return 0;
}

/* Ends the accounting of a launch: its threads' entries go, once. */
static __always_inline void stop_accounting(__u32 boot)
{
	struct accounted_launch *found =
	    boot ? bpf_map_lookup_elem(&accounted_launches, &boot) : NULL;
	struct accounted_launch launch;
	struct thread_states *thread;

	if (!found)
		return;
	launch = *found;
	if (bpf_map_delete_elem(&accounted_launches, &boot))
		return; /* ended by another CPU meanwhile */
	if (launch.threads > HACOBOOT_LAUNCH_THREADS) {
		bpf_for_each_map_elem(&threads, forget_thread_of_launch, &boot, 0);
		return;
	}
	for (__u32 i = 0; i < HACOBOOT_LAUNCH_THREADS && i < launch.threads; i++) {
		thread = bpf_map_lookup_elem(&threads, &launch.tids[i]);
		/* Gone at its exit, or its tid reused by another launch's thread. */
		if (thread)
			forget_thread_of_launch(&threads, &launch.tids[i], thread, &boot);
	}
}

static __always_inline void forget_thread(__u32 tid)
{
	if (threads_alive && !bpf_map_delete_elem(&threads, &tid))
		__sync_fetch_and_sub(&threads_alive, 1);
}

/*
 * Its first accounted thread comes with the process: a launcher tracking
 * itself is the thread passing the phase, on CPU; a forked child's only
 * thread (tid == pid) waits for a CPU until it first runs.
 */
static __always_inline void track(__u32 pid, const struct tracked_process *value)
{
	__u64 current = bpf_get_current_pid_tgid();

	if (bpf_map_update_elem(&tracked, &pid, value, BPF_ANY)) {
		__sync_fetch_and_add(&counters.tracked_full, 1);
		return;
	}
	if (value->role != HACOBOOT_ROLE_LAUNCHER)
		__sync_fetch_and_add(&members_alive, 1);
	else
		__sync_fetch_and_add(launcher_slot(pid), 1);
	if (current >> 32 == pid)
		start_thread((__u32)current, pid, value->boot, HACOBOOT_SCHED_CPU);
	else
		start_thread(pid, pid, value->boot, HACOBOOT_SCHED_RUN_QUEUE);
}

static __always_inline struct tracked_process *member_of_container(__u32 pid)
{
	struct tracked_process *t = bpf_map_lookup_elem(&tracked, &pid);

	return t && t->role != HACOBOOT_ROLE_LAUNCHER ? t : NULL;
}

/* Whether the current process is watched_tgid or one of its descendants. */
static __always_inline bool under_watched_process(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	for (int depth = 0; depth < MAX_ANCESTRY && task; depth++) {
		__u32 tgid = BPF_CORE_READ(task, tgid);

		if (tgid == watched_tgid)
			return true;
		if (tgid <= 1)
			return false;
		task = BPF_CORE_READ(task, real_parent);
	}
	return false;
}

/*
 * The tracked process whose launch has this hpid: the emitting process when
 * it belongs to that launch (the container, a member), else the supervisor
 * itself, tracked under its pid (helpers it forked are not tracked).
 */
static __always_inline struct tracked_process *launch_of(struct tracked_process *emitter, long hpid)
{
	__u32 supervisor_pid = hpid;
	struct tracked_process *supervisor;

	if (emitter && emitter->hpid == hpid)
		return emitter;
	if (supervisor_pid != hpid ||
	    !*launcher_slot(supervisor_pid)) /* no pid, or surely untracked */
		return NULL;
	supervisor = bpf_map_lookup_elem(&tracked, &supervisor_pid);
	return supervisor && supervisor->role == HACOBOOT_ROLE_LAUNCHER ? supervisor : NULL;
}

static __always_inline void count_untracked_phase(void)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&untracked_phases, &zero);

	if (count)
		__sync_fetch_and_add(count, 1);
}

SEC("usdt")
int BPF_USDT(on_phase, long phase, long hpid)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct tracked_process *t = bpf_map_lookup_elem(&tracked, &pid);
	struct hacoboot_event *e;
	__u32 boot = t ? t->boot : 0;

	/* Tracked processes descend from a watched launcher already. */
	if (watched_tgid && !t && !under_watched_process())
		return 0;

	/* CLI (phase 0) and supervisor (1, 2) pass phases with their own pid. */
	if (phase <= HACOBOOT_PHASE_START_FORK && pid == hpid) {
		if (phase == HACOBOOT_PHASE_START_SV) {
			struct accounted_launch fresh = {};

			boot = bpf_get_prandom_u32() | 1; /* never 0: that is a CLI */
			bpf_map_update_elem(&accounted_launches, &boot, &fresh, BPF_ANY);
		}
		if (t && phase == HACOBOOT_PHASE_START_FORK) {
			t->armed = 1;
		} else {
			struct tracked_process launcher = {
			    .hpid = pid,
			    .boot = boot,
			    .role = HACOBOOT_ROLE_LAUNCHER,
			    .armed = phase == HACOBOOT_PHASE_START_FORK,
			};
			track(pid, &launcher);
		}
	} else {
		/*
		 * Any other phase belongs to a launch seen starting, or is dropped
		 * here: a launch begun before tracing, or a process passing made-up
		 * hpids, costs two lookups and a count instead of a record.
		 */
		struct tracked_process *launch = launch_of(t, hpid);

		if (!launch) {
			count_untracked_phase();
			return 0;
		}
		boot = launch->boot;
	}

	/* Phase events report no role: the decoder reads 0 as untracked. */
	struct tracked_process launch_ids = {.hpid = hpid, .boot = boot};

	e = reserve_event(HACOBOOT_EV_PHASE, HACOBOOT_EVENT_BASE_SIZE, phase, pid, &launch_ids);
	if (!e)
		return 0;
	submit(e, false);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 child_pid = BPF_CORE_READ(child, pid);
	__u32 parent_pid = BPF_CORE_READ(parent, tgid);
	struct tracked_process *t;
	struct tracked_process member = {};
	struct hacoboot_event *e;

	/*
	 * A new thread belongs to its process already: only its states are
	 * new. A tracked process has an accounted thread (its first, at least),
	 * so with none accounted a clone returns on one load, as it did before.
	 */
	if (child_pid != BPF_CORE_READ(child, tgid)) {
		if (threads_alive) {
			t = bpf_map_lookup_elem(&tracked, &parent_pid);
			if (t)
				start_thread(child_pid, parent_pid, t->boot,
					     HACOBOOT_SCHED_RUN_QUEUE);
		}
		return 0;
	}
	t = bpf_map_lookup_elem(&tracked, &parent_pid);
	if (!t)
		return 0;

	member.hpid = t->hpid;
	member.boot = t->boot;
	if (t->role != HACOBOOT_ROLE_LAUNCHER) {
		member.role = HACOBOOT_ROLE_MEMBER;
	} else if (t->armed) {
		member.role = HACOBOOT_ROLE_CONTAINER;
		t->armed = 0;
	}
	/* Other launcher forks are reported untracked: they link a CLI to its supervisor. */
	if (member.role)
		track(child_pid, &member);

	e = reserve_event(HACOBOOT_EV_FORK, HACOBOOT_EVENT_BASE_SIZE, child_pid, parent_pid,
			  &member);
	if (!e)
		return 0;
	/*
	 * The child's totals are zero at the fork event (BootRecord's
	 * created_ns): its accounting starts at the event's time, not at the
	 * clock read of track(), which came a few hundred ns earlier. It has
	 * not run yet: it is still in the run queue state, with nothing summed.
	 */
	if (member.role) {
		struct thread_states *child_states = bpf_map_lookup_elem(&threads, &child_pid);

		if (child_states)
			child_states->since = e->ts_ns;
	}
	submit(e, false);
	return 0;
}

/*
 * execve entry: the time a container process asked to run its command.
 * execveat has no per-syscall hook of its own: every perf tracepoint costs
 * the tool's exit two RCU Tasks Trace grace periods (BENCHMARKS.md), and
 * Haconiwa, like libc's exec family, calls execve. An execveat (fexecve) is
 * timed when it completes, at sched_process_exec, with either set of hooks.
 */
static __always_inline int execve_entered(void)
{
	struct execve_entry entry;
	__u32 tid;

	if (!members_alive)
		return 0;
	if (!member_of_container(bpf_get_current_pid_tgid() >> 32))
		return 0;
	entry.ts_ns = bpf_ktime_get_ns();
	tid = current_totals(entry.ts_ns, &entry.flags, &entry.sched);
	bpf_map_update_elem(&execing, &tid, &entry, BPF_ANY);
	return 0;
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
	/* Another syscall's tracepoint, whose record has the same layout: not ours. */
	if (ctx->syscall_nr != __NR_execve)
		return 0;
	if (self_checking() && ctx->args[0] == self_check_filename)
		self_check_execve_seen = 1;
	return execve_entered();
}

SEC("raw_tp/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	if (id != __NR_execve)
		return 0;
	return execve_entered();
}

/*
 * A thread other than the leader that execs takes the leader's tid
 * (de_thread), after the leader's exit: its sums follow it.
 */
static __always_inline void thread_renamed(__u32 old_tid, __u32 tid)
{
	struct thread_states *thread;
	struct thread_states moved;

	if (old_tid == tid || !threads_alive)
		return;
	thread = bpf_map_lookup_elem(&threads, &old_tid);
	if (!thread)
		return;
	moved = *thread;
	forget_thread(old_tid);
	add_thread(tid, &moved);
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
						__u32 pid)
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
	e->ts_ns = bpf_ktime_get_ns();
	e->kind = HACOBOOT_EV_UNPROBED_EXEC;
	e->pid = pid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->unprobed.device = id.device;
	e->unprobed.inode = id.inode;
	e->unprobed.held = hold_unprobed_execs && !BPF_CORE_READ(task, signal, tty) &&
			   bpf_send_signal(HACOBOOT_SIGSTOP) == 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * The filename comes from the kernel's copy (bprm->filename): reading the
 * user pointer at syscall entry fails when its page is not resident.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 old_tid = old_pid;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct tracked_process *t;
	struct hacoboot_event *e;
	struct execve_entry *entry;

	if (watched_dir_inode)
		catch_unprobed_exec(task, bprm, pid);
	t = member_of_container(pid);
	if (!t)
		return 0;
	thread_renamed(old_tid, (__u32)bpf_get_current_pid_tgid());
	e = reserve_event(HACOBOOT_EV_EXEC, sizeof(*e), 0, pid, t);
	if (!e)
		return 0;
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
	return 0;
}

/* A successful listen(2) by a container process. */
static __always_inline int listen_returned(long ret)
{
	struct tracked_process *t;
	struct hacoboot_event *e;
	__u32 pid;

	if (ret != 0 || !members_alive)
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	t = member_of_container(pid);
	if (!t)
		return 0;
	e = reserve_event(HACOBOOT_EV_LISTEN, HACOBOOT_EVENT_BASE_SIZE, ret, pid, t);
	if (e)
		submit(e, true);
	stop_accounting(t->boot);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_listen")
int on_listen_exit(struct syscall_exit_record *ctx)
{
	if (ctx->syscall_nr != __NR_listen)
		return 0;
	if (self_checking() && ctx->ret == -EBADF)
		self_check_listen_seen = 1;
	return listen_returned(ctx->ret);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	if (ret != 0 || !members_alive || SYSCALL_NR(regs) != __NR_listen)
		return 0;
	return listen_returned(ret);
}

/* exit_code: the process's wait(2) status, as its parent will read it. */
static __always_inline void process_exited(__u32 pid, int exit_code)
{
	struct tracked_process *t = bpf_map_lookup_elem(&tracked, &pid);
	struct hacoboot_event *e;

	if (!t)
		return;
	e = reserve_event(HACOBOOT_EV_EXIT, HACOBOOT_EVENT_BASE_SIZE, exit_code, pid, t);
	if (e)
		submit(e, e->role != HACOBOOT_ROLE_MEMBER);
	if (t->role != HACOBOOT_ROLE_LAUNCHER) {
		__sync_fetch_and_sub(&members_alive, 1);
	} else {
		__sync_fetch_and_sub(launcher_slot(pid), 1);
		stop_accounting(t->boot);
	}
	bpf_map_delete_elem(&tracked, &pid);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u64 current = bpf_get_current_pid_tgid();

	/*
	 * Only the last thread to leave ends the process; its exit event carries
	 * its sums. do_exit() has set its exit_code by now, to the group's on an
	 * exit_group() or a fatal signal.
	 */
	if (BPF_CORE_READ(task, signal, live.counter) == 0)
		process_exited(current >> 32, BPF_CORE_READ(task, exit_code));
	forget_thread((__u32)current);
	return 0;
}

/* prev_state bits of sched_switch (include/linux/sched.h). */
#define HACOBOOT_TASK_UNINTERRUPTIBLE 0x0002
#define HACOBOOT_TASK_NOLOAD 0x0400 /* with UNINTERRUPTIBLE: TASK_IDLE, an idle wait */

/*
 * Where a thread switched out goes: back to the run queue when preempted or
 * yielding (still TASK_RUNNING), else blocked; uninterruptibly counts as I/O
 * except TASK_IDLE (kernel threads' idle waits, never I/O).
 */
static __always_inline __u32 state_switched_out(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == 0)
		return HACOBOOT_SCHED_RUN_QUEUE;
	if ((prev_state & HACOBOOT_TASK_UNINTERRUPTIBLE) && !(prev_state & HACOBOOT_TASK_NOLOAD))
		return HACOBOOT_SCHED_IO;
	return HACOBOOT_SCHED_SLEEP;
}

static __always_inline struct thread_states *thread_of(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid);

	return bpf_map_lookup_elem(&threads, &tid);
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
		/* prev's count is up to date here: the switch has just updated it. */
		__u64 runtime = BPF_CORE_READ(prev, se.sum_exec_runtime);

		repair_missed_switch_in(thread, prev, runtime, now);
		update_stretch(thread, prev, runtime, now);
		enter_state(thread, state_switched_out(preempt, prev_state), now);
		thread->runtime = runtime;
		thread->runtime_known = 1;
	}
	thread = thread_of(next);
	if (thread) {
		/* next's count is exact: it has not run since it last changed. */
		__u64 runtime = BPF_CORE_READ(next, se.sum_exec_runtime);

		/* An entry that still says CPU: its switch-out went unseen. */
		if (thread->state == HACOBOOT_SCHED_CPU)
			update_stretch(thread, next, runtime, now);
		begin_stretch(thread, next, now);
		thread->runtime = runtime;
		thread->runtime_known = 1;
	}
	return 0;
}

/*
 * A wakeup across processes: the waker (current) is an accounted thread of
 * another process than the wakee's. Returns the record's time, both threads'
 * sums taken then, or `now` without a record.
 */
static __always_inline __u64 report_wakeup(struct thread_states *wakee, __u32 wakee_tid, __u64 now)
{
	__u32 waker_pid = bpf_get_current_pid_tgid() >> 32;
	struct tracked_process *waker_process;
	struct tracked_process *wakee_process;
	struct hacoboot_event *e;

	if (waker_pid == wakee->pid)
		return now;
	waker_process = bpf_map_lookup_elem(&tracked, &waker_pid);
	wakee_process = bpf_map_lookup_elem(&tracked, &wakee->pid);
	if (!waker_process || !wakee_process)
		return now;
	e = reserve_event(HACOBOOT_EV_WAKEUP, HACOBOOT_WAKEUP_EVENT_SIZE, wakee_tid, waker_pid,
			  waker_process);
	if (!e)
		return now;
	if (!(e->flags & HACOBOOT_EVENT_SCHED)) { /* an unaccounted waker: no edge */
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
		return now;
	}
	e->wakee.pid = wakee->pid;
	e->wakee.tid = wakee_tid;
	e->wakee.hpid = wakee_process->hpid;
	e->wakee.boot = wakee_process->boot;
	e->wakee.role = wakee_process->role;
	e->wakee.reserved = 0;
	totals_at(wakee, e->ts_ns, &e->wakee.sched);
	now = e->ts_ns;
	submit(e, false);
	return now;
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

	if (!threads_alive)
		return 0;
	tid = BPF_CORE_READ(task, pid);
	wakee = bpf_map_lookup_elem(&threads, &tid);
	if (!wakee || (wakee->state != HACOBOOT_SCHED_SLEEP && wakee->state != HACOBOOT_SCHED_IO))
		return 0;
	enter_state(wakee, HACOBOOT_SCHED_RUN_QUEUE, report_wakeup(wakee, tid, bpf_ktime_get_ns()));
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
