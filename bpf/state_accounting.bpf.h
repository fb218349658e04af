/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * Scheduler-state accounting: the time each thread of a booting launch spends
 * in each state of enum hacoboot_sched_state, kept in its `threads` entry and
 * read by every event the thread emits (current_totals). Part of
 * hacoboot.bpf.c, which includes it after the kernel types, the libbpf
 * headers, the contract and its `counters`.
 *
 * The state machine, per thread (the hooks are hacoboot.bpf.c's programs),
 * with the state its entry held before the event:
 *
 * | event (hook)                         | before     | transition                               |
 * |--------------------------------------|------------|------------------------------------------|
 * | a launcher passes START_SV           | none       | created: CPU from now, on this CPU       |
 * |   (on_phase)                         |            |                                          |
 * | a tracked process forks (on_fork)    | none       | the child created: RUN_QUEUE from the    |
 * |                                      |            | fork event's time                        |
 * | a thread of it clones (on_fork)      | none       | created: RUN_QUEUE from now              |
 * | switched out (on_sched_switch,       | CPU        | RUN_QUEUE when preempted or still        |
 * |   prev)                              |            | runnable, IO when waiting in             |
 * |                                      |            | io_schedule (in_iowait), else SLEEP      |
 * | switched out                         | not CPU    | its switch-in went unseen: repaired      |
 * |                                      |            | (CPU from when it began to run,          |
 * |                                      |            | counted), then as above                  |
 * | switched in (on_sched_switch,        | any        | CPU from now; still CPU: its switch-out  |
 * |   next)                              |            | went unseen, the stretch closes first    |
 * | woken (on_sched_waking)              | SLEEP, IO  | RUN_QUEUE from the wakeup                |
 * | woken                                | CPU,       | none: a preempted thread is not woken    |
 * |                                      | RUN_QUEUE  |                                          |
 * | it emits an event (current_totals)   | CPU        | none: the sums are read                  |
 * | it emits an event                    | not CPU    | it runs: repaired as when switched out   |
 * | a non-leader thread execs (on_exec)  | old tid    | the entry moves to the leader's tid      |
 * | it exits (on_exit)                   | any        | deleted                                  |
 * | its launch listens, or its           | any        | deleted with every thread of the         |
 * |   supervisor exits                   |            | launch: accounting ends                  |
 *
 * Invariants:
 * - From its creation, every nanosecond of a thread is in exactly one state:
 *   the sums of a reading add up to its time since the creation exactly.
 * - A stretch on a CPU splits into CPU (what the scheduler's count of the
 *   thread's CPU time grew by) and RUN_QUEUE (the rest: steal on a VM), and
 *   the CPU a reading reported is never taken back (struct cpu_stretch).
 * - threads_alive is the number of entries in `threads`: with none, the
 *   scheduler hooks return on that one load.
 * - An entry belongs to one launch, accounted from START_SV until it settles
 *   (its first listen) or its supervisor exits; a CLI (launch 0) never is.
 */
#ifndef HACOBOOT_STATE_ACCOUNTING_BPF_H
#define HACOBOOT_STATE_ACCOUNTING_BPF_H

/*
 * What tells, on a VM, a thread's time on a CPU from the host's steal: the
 * current stretch on a CPU and the scheduler's count of its CPU time.
 */
struct cpu_stretch {
	/*
	 * The scheduler's count of its CPU time (se.sum_exec_runtime) at its
	 * last switch, which began the stretch when it runs.
	 */
	__u64 runtime;
	/* whether `runtime` is the scheduler's count at `since` (else: not yet known) */
	__u32 runtime_known;
	/* running: the CPU the stretch began on */
	__u32 cpu;
	/* running: that CPU's steal time (cpu_steal_of) when the stretch began */
	__u64 steal_at_start;
	/* running: of the stretch since `since`, the time found not on a CPU (steal) */
	__u64 waited;
	/* its CPU sum as the last reading while it ran reported it: never taken back */
	__u64 cpu_reported;
};

/* A thread of a tracked process: its current scheduler state and the sums of the past ones. */
struct thread_states {
	__u32 pid;   /* tgid */
	__u32 state; /* enum hacoboot_sched_state, since `since` */
	__u64 since;
	/* up to `since` */
	struct hacoboot_sched_totals totals;
	/* the launch it is accounted for */
	__u32 launch;
	__u32 reserved;
	struct cpu_stretch stretch;
	/* its syscalls and user time (syscall_accounting.bpf.h) */
	struct thread_syscalls syscalls;
	/* where it blocked last, until woken (blocking.bpf.h) */
	struct thread_block block;
};

/*
 * Keyed by tid. An entry is added when the thread is first seen (its process
 * becoming tracked, or its fork or clone by a tracked process) and deleted at
 * its exit. Not preallocated: preallocating HACOBOOT_MAX_THREADS entries
 * would lengthen every start, and entries are only added while a launch boots.
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
 * Set false by the loader when no output reads the states (--format
 * bpftrace alone): no thread is ever accounted, the scheduler hooks are not
 * loaded, and the verifier, reading this constant, drops the accounting
 * from every other program.
 */
const volatile bool account_states = true;

/*
 * A launch's threads in `threads`, so that ending its accounting deletes
 * those few entries: walking `threads` visits all of its buckets however
 * few entries it holds (BENCHMARKS.md), inside the container's listen.
 * Past HACOBOOT_LAUNCH_THREADS the threads are only counted, and the walk
 * is the fallback.
 */
#define HACOBOOT_LAUNCH_THREADS 8
struct accounted_launch {
	__u32 threads; /* added so far */
	__u32 tids[HACOBOOT_LAUNCH_THREADS];
};

/*
 * Launches whose threads are accounted, by launch id: from START_SV until the
 * launch settles (its first listen) or its supervisor exits. What follows a
 * boot's listen delays no boot: a container that runs for hours keeps the
 * scheduler hooks on no longer than its boot, and a CLI (launch id 0),
 * which only precedes the start, is never accounted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_ACCOUNTED_LAUNCHES);
	__type(key, __u32);
	__type(value, struct accounted_launch);
} accounted_launches SEC(".maps");

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
	waited = thread->stretch.waited < wall ? thread->stretch.waited : wall;
	totals->ns[HACOBOOT_SCHED_CPU] += wall - waited;
	totals->ns[HACOBOOT_SCHED_RUN_QUEUE] += waited;
}

/* Adds the time since `since` to the thread's current state and enters `state`. */
static __always_inline void enter_state(struct thread_states *thread, __u32 state, __u64 now)
{
	add_time_since(thread, now, &thread->totals);
	thread->since = now;
	thread->state = state;
	thread->stretch.waited = 0;
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
	struct cpu_stretch *stretch = &thread->stretch;
	__u64 wall = now - thread->since;
	__u64 ran = runtime - stretch->runtime;
	__u64 waited = 0;
	__u64 reported;

	/* The steal of another CPU than the one the stretch began on says nothing. */
	if (bpf_get_smp_processor_id() == stretch->cpu)
		waited = cpu_steal_of(task) - stretch->steal_at_start;

	if (runtime && stretch->runtime_known && ran < wall && wall - ran > waited)
		waited = wall - ran;
	reported = stretch->cpu_reported > thread->totals.ns[HACOBOOT_SCHED_CPU]
		       ? stretch->cpu_reported - thread->totals.ns[HACOBOOT_SCHED_CPU]
		       : 0;
	if (waited > wall - reported)
		waited = wall - reported;
	if (waited > stretch->waited)
		stretch->waited = waited;
}

/* Where a stretch of `task` on the current CPU begins: that CPU, and its steal time now. */
static __always_inline void mark_stretch_start(struct thread_states *thread,
					       struct task_struct *task)
{
	thread->stretch.steal_at_start = cpu_steal_of(task);
	thread->stretch.cpu = bpf_get_smp_processor_id();
}

/* A stretch on a CPU of `task`, the current CPU, begins at `at`. */
static __always_inline void begin_stretch(struct thread_states *thread, struct task_struct *task,
					  __u64 at)
{
	enter_state(thread, HACOBOOT_SCHED_CPU, at);
	mark_stretch_start(thread, task);
}

/* The scheduler's count of `task`'s CPU time at a switch: the next stretch starts from it. */
static __always_inline void set_runtime(struct thread_states *thread, __u64 runtime)
{
	thread->stretch.runtime = runtime;
	thread->stretch.runtime_known = 1;
}

/*
 * A running thread whose entry does not say CPU: its switch-in went unseen
 * (now and then on Linux 6.18, after a voluntary switch while runnable).
 * The scheduler's own count of its CPU time since its last switch, `runtime`
 * now, says when it began to run; before that it was in its recorded state.
 * Counted (counters.repaired_switch_ins): the report says how often.
 */
static __always_inline void repair_missed_switch_in(struct thread_states *thread,
						    struct task_struct *task, __u64 runtime,
						    __u64 now)
{
	__u64 ran = runtime - thread->stretch.runtime;

	if (thread->state == HACOBOOT_SCHED_CPU)
		return;
	__sync_fetch_and_add(&counters.repaired_switch_ins, 1);
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
 * A reading of a running thread's states up to `now`, into `totals`. It runs
 * now: a reading must not count that as waiting.
 */
static __always_inline void take_reading(struct thread_states *thread, __u64 now,
					 struct hacoboot_sched_totals *totals)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	/* The task's CPU count is read only then, off the common path. */
	if (thread->state != HACOBOOT_SCHED_CPU)
		repair_missed_switch_in(thread, task, BPF_CORE_READ(task, se.sum_exec_runtime),
					now);
	update_stretch(thread, task, 0, now);
	totals_at(thread, now, totals);
	thread->stretch.cpu_reported = totals->ns[HACOBOOT_SCHED_CPU];
}

/*
 * The states of the current thread up to `now` into `flags` and `totals`,
 * or flags 0 when the thread is not accounted (it predates its process's
 * tracking, or the map was full). Every event a thread emits reads them
 * here, which ends its syscall segment. Returns its tid.
 */
static __always_inline __u32 current_totals(__u64 now, __u32 *flags,
					    struct hacoboot_sched_totals *totals)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_states *thread =
	    account_states && threads_alive ? bpf_map_lookup_elem(&threads, &tid) : NULL;

	if (thread) {
		take_reading(thread, now, totals);
		if (account_syscalls)
			segment_ends(&thread->syscalls, thread->launch, tid, now, totals);
		*flags = HACOBOOT_EVENT_SCHED;
	} else {
		__builtin_memset(totals, 0, sizeof(*totals));
		*flags = 0;
	}
	return tid;
}

/*
 * Accounts a thread's states from now on; a thread accounted already keeps its
 * sums. Whether it is newly accounted (not already, and the map not full).
 */
static __always_inline bool add_thread(__u32 tid, const struct thread_states *thread)
{
	long err = bpf_map_update_elem(&threads, &tid, thread, BPF_NOEXIST);
	struct accounted_launch *launch;
	__u32 slot;

	if (!err) {
		__sync_fetch_and_add(&threads_alive, 1);
		launch = bpf_map_lookup_elem(&accounted_launches, &thread->launch);
		if (launch) {
			slot = __sync_fetch_and_add(&launch->threads, 1);
			if (slot < HACOBOOT_LAUNCH_THREADS)
				launch->tids[slot] = tid;
		}
		return true;
	}
	if (err != -EEXIST)
		__sync_fetch_and_add(&counters.unaccounted_threads, 1);
	return false;
}

/*
 * A thread of `launch` seen for the first time, at `now`, in `state`: the
 * time of the event that makes it (the supervisor's START_SV, the fork that
 * created it), where its totals are zero (BootRecord's created_ns). One
 * accounted while it runs (the supervisor at START_SV) has no known count
 * for its stretch yet (update_stretch); one that waits gets it when it is
 * switched in. Whether it is accounted now (its launch is, and was not full).
 */
static __always_inline bool start_thread(__u32 tid, __u32 pid, __u32 launch, __u32 state, __u64 now)
{
	struct thread_states thread = {.pid = pid, .state = state, .since = now, .launch = launch};

	if (!account_states)
		return false;
	if (state == HACOBOOT_SCHED_CPU)
		mark_stretch_start(&thread, (struct task_struct *)bpf_get_current_task());
	syscalls_start(&thread.syscalls, thread.since);

	return launch && bpf_map_lookup_elem(&accounted_launches, &launch) &&
	       add_thread(tid, &thread);
}

/* A thread's accounting ends: at its exit, its rename, or its launch's end. */
static __always_inline void forget_thread(__u32 tid)
{
	if (account_states && threads_alive && !bpf_map_delete_elem(&threads, &tid))
		__sync_fetch_and_sub(&threads_alive, 1);
}

/* For each thread in `threads` (bpf_for_each_map_elem): forgets those of `launch`. */
static long forget_thread_of_launch(void *map, const __u32 *tid, struct thread_states *thread,
				    const __u32 *launch)
{
	if (thread->launch == *launch)
		forget_thread(*tid);
	return 0;
}

/* Accounts the threads of `launch`, a launch id drawn at START_SV, from now on. */
static __always_inline void start_accounting(__u32 launch)
{
	struct accounted_launch fresh = {};

	/* Its threads would go unaccounted unseen: one count says the map was full. */
	if (account_states && bpf_map_update_elem(&accounted_launches, &launch, &fresh, BPF_ANY))
		__sync_fetch_and_add(&counters.unaccounted_threads, 1);
}

/* A launch whose accounting ends: its id and the threads it listed. */
struct ending_launch {
	__u32 id;
	struct accounted_launch listed;
};

/* For each thread the launch listed (bpf_loop): forgets it if it is still the launch's. */
static long forget_listed_thread(__u32 i, struct ending_launch *ending)
{
	struct thread_states *thread;
	__u32 tid;

	if (i >= HACOBOOT_LAUNCH_THREADS)
		return 1;
	tid = ending->listed.tids[i];
	thread = bpf_map_lookup_elem(&threads, &tid);
	/* Gone at its exit, or its tid reused by another launch's thread. */
	if (thread)
		forget_thread_of_launch(&threads, &tid, thread, &ending->id);
	return 0;
}

/*
 * Ends the accounting of a launch: its threads' entries go, once. Through
 * bpf_loop, whose body the verifier walks once, where an unrolled loop had
 * it walk each of the HACOBOOT_LAUNCH_THREADS copies in every program that
 * ends a launch (a millisecond of every start).
 */
static __always_inline void stop_accounting(__u32 launch_id)
{
	struct accounted_launch *found = account_states && launch_id
					     ? bpf_map_lookup_elem(&accounted_launches, &launch_id)
					     : NULL;
	struct ending_launch ending = {.id = launch_id};

	if (!found)
		return;
	ending.listed = *found;
	if (bpf_map_delete_elem(&accounted_launches, &launch_id))
		return; /* ended by another CPU meanwhile */
	if (ending.listed.threads > HACOBOOT_LAUNCH_THREADS) {
		bpf_for_each_map_elem(&threads, forget_thread_of_launch, &launch_id, 0);
		return;
	}
	bpf_loop(ending.listed.threads, forget_listed_thread, &ending, 0);
}

/*
 * A thread other than the leader that execs takes the leader's tid
 * (de_thread), after the leader's exit: its sums follow it.
 */
static __always_inline void thread_renamed(__u32 old_tid, __u32 tid)
{
	struct thread_states *thread;
	struct thread_states moved;

	if (old_tid == tid || !account_states || !threads_alive)
		return;
	thread = bpf_map_lookup_elem(&threads, &old_tid);
	if (!thread)
		return;
	moved = *thread;
	forget_thread(old_tid);
	add_thread(tid, &moved);
}

/* prev_state bits of sched_switch (include/linux/sched.h). */
#define HACOBOOT_TASK_UNINTERRUPTIBLE 0x0002
#define HACOBOOT_TASK_NOLOAD 0x0400 /* with UNINTERRUPTIBLE: TASK_IDLE, an idle wait */

/*
 * Whether `task`, switched out blocked, waits for I/O: the kernel marks a
 * wait in io_schedule() (block I/O, page and buffer locks) with in_iowait,
 * which its iowait accounting and PSI read. An uninterruptible wait alone
 * says no more than "not for a signal": mutexes, RCU grace periods
 * (umount's synchronize_rcu_expedited) wait so, without any device. A
 * kernel without the mark falls back to that: uninterruptible, not TASK_IDLE.
 */
static __always_inline bool waits_for_io(struct task_struct *task, unsigned int prev_state)
{
	if (bpf_core_field_exists(task->in_iowait))
		return BPF_CORE_READ_BITFIELD_PROBED(task, in_iowait);
	return (prev_state & HACOBOOT_TASK_UNINTERRUPTIBLE) && !(prev_state & HACOBOOT_TASK_NOLOAD);
}

/*
 * Where a thread switched out goes: back to the run queue when preempted or
 * yielding (still TASK_RUNNING), else blocked: I/O when it waits for I/O,
 * SLEEP for any other wait, interruptible or not. The mark is read only
 * here, on the blocked path of an accounted thread.
 */
static __always_inline __u32 state_switched_out(struct task_struct *prev, bool preempt,
						unsigned int prev_state)
{
	if (preempt || prev_state == 0)
		return HACOBOOT_SCHED_RUN_QUEUE;
	if (waits_for_io(prev, prev_state))
		return HACOBOOT_SCHED_IO;
	return HACOBOOT_SCHED_SLEEP;
}

static __always_inline struct thread_states *thread_of(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid);

	return bpf_map_lookup_elem(&threads, &tid);
}

/* `prev` leaves the CPU at `now` for the state prev_state and preempt say. */
static __always_inline void switched_out(struct thread_states *thread, struct task_struct *prev,
					 bool preempt, unsigned int prev_state, __u64 now)
{
	/* prev's count is up to date here: the switch has just updated it. */
	__u64 runtime = BPF_CORE_READ(prev, se.sum_exec_runtime);

	repair_missed_switch_in(thread, prev, runtime, now);
	update_stretch(thread, prev, runtime, now);
	enter_state(thread, state_switched_out(prev, preempt, prev_state), now);
	set_runtime(thread, runtime);
}

/* `next` begins a stretch on this CPU at `now`. */
static __always_inline void switched_in(struct thread_states *thread, struct task_struct *next,
					__u64 now)
{
	/* next's count is exact: it has not run since it last changed. */
	__u64 runtime = BPF_CORE_READ(next, se.sum_exec_runtime);

	/* An entry that still says CPU: its switch-out went unseen. */
	if (thread->state == HACOBOOT_SCHED_CPU)
		update_stretch(thread, next, runtime, now);
	begin_stretch(thread, next, now);
	set_runtime(thread, runtime);
}

/* Whether a wakeup moves the thread: only a blocked one leaves its state. */
static __always_inline bool blocked(const struct thread_states *thread)
{
	return thread->state == HACOBOOT_SCHED_SLEEP || thread->state == HACOBOOT_SCHED_IO;
}

#endif /* HACOBOOT_STATE_ACCOUNTING_BPF_H */
