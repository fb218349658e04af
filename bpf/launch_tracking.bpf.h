/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * Launch tracking: which processes belong to which Haconiwa launch. A launch
 * starts when its supervisor passes START_SV under its own pid (the hpid),
 * which draws its launch id; its container is the supervisor's first process
 * fork after START_FORK, and every descendant of the container is a member.
 * Each tracked process carries its launch's hpid and id until it exits.
 *
 * Part of hacoboot.bpf.c, which includes it after state_accounting.bpf.h
 * (a process tracked has its first thread accounted), its `counters` and
 * the configuration watched_tgid.
 */
#ifndef HACOBOOT_LAUNCH_TRACKING_BPF_H
#define HACOBOOT_LAUNCH_TRACKING_BPF_H

struct tracked_process {
	__u32 hpid;
	__u32 launch; /* id of the launch, drawn at START_SV, inherited by the container */
	__u32 role;   /* enum hacoboot_role */
	__u32 armed;  /* launcher passed START_FORK: its next process fork is the container */
};

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
 * Phase events of no launch the kernel side tracks, dropped here (see
 * on_phase). Per CPU: a flood of them from many CPUs must not contend on one
 * counter. Read and summed by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} untracked_phases SEC(".maps");

static __always_inline void count_untracked_phase(void)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&untracked_phases, &zero);

	if (count)
		__sync_fetch_and_add(count, 1);
}

/*
 * Its first accounted thread comes with the process: a launcher tracking
 * itself is the thread passing the phase, on CPU; a forked child's only
 * thread (tid == pid) waits for a CPU until it first runs.
 */
static __always_inline void track(__u32 pid, const struct tracked_process *value, __u64 now)
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
		start_thread((__u32)current, pid, value->launch, HACOBOOT_SCHED_CPU, now);
	else
		start_thread(pid, pid, value->launch, HACOBOOT_SCHED_RUN_QUEUE, now);
}

/* Process `pid`, tracked as `t`, exited: a supervisor's exit ends its launch's accounting. */
static __always_inline void untrack(__u32 pid, const struct tracked_process *t)
{
	if (t->role != HACOBOOT_ROLE_LAUNCHER) {
		__sync_fetch_and_sub(&members_alive, 1);
	} else {
		__sync_fetch_and_sub(launcher_slot(pid), 1);
		stop_accounting(t->launch);
	}
	bpf_map_delete_elem(&tracked, &pid);
}

/*
 * A launcher (CLI phase 0, supervisor START_SV and START_FORK) passes a
 * phase under its own pid; returns the id of its launch. START_SV starts a
 * launch, with a new id; START_FORK arms the launcher for its container.
 */
static __always_inline __u32 launcher_passed(__u32 pid, struct tracked_process *t, long phase,
					     __u64 now)
{
	__u32 launch = t ? t->launch : 0;

	if (phase == HACOBOOT_PHASE_START_SV) {
		launch = bpf_get_prandom_u32() | 1; /* never 0: that is a CLI */
		start_accounting(launch);
	}
	if (t && phase == HACOBOOT_PHASE_START_FORK) {
		t->armed = 1;
	} else {
		struct tracked_process launcher = {
		    .hpid = pid,
		    .launch = launch,
		    .role = HACOBOOT_ROLE_LAUNCHER,
		    .armed = phase == HACOBOOT_PHASE_START_FORK,
		};
		track(pid, &launcher, now);
	}
	return launch;
}

/*
 * What a process fork by `parent` makes of the child: the container when
 * the launcher is armed (which disarms it), a member under a container, and
 * nothing (role 0) for any other launcher fork.
 */
static __always_inline struct tracked_process child_of(struct tracked_process *parent)
{
	struct tracked_process child = {.hpid = parent->hpid, .launch = parent->launch};

	if (parent->role != HACOBOOT_ROLE_LAUNCHER) {
		child.role = HACOBOOT_ROLE_MEMBER;
	} else if (parent->armed) {
		child.role = HACOBOOT_ROLE_CONTAINER;
		parent->armed = 0;
	}
	return child;
}

static __always_inline struct tracked_process *member_of_container(__u32 pid)
{
	struct tracked_process *t = bpf_map_lookup_elem(&tracked, &pid);

	return t && t->role != HACOBOOT_ROLE_LAUNCHER ? t : NULL;
}

/* Deeper than any real haconiwa process tree; bounds the verifier's walk. */
#define MAX_ANCESTRY 32

/* A walk up the current process's ancestry, one process per step. */
struct ancestry_walk {
	struct task_struct *task;
	bool watched;
};

/* One step of the walk (bpf_loop): 1 ends it. */
static long ancestor_step(__u32 depth, struct ancestry_walk *walk)
{
	/* Read into a local first: the walk's own type has no CO-RE relocation. */
	struct task_struct *task = walk->task;
	__u32 tgid;

	if (!task)
		return 1;
	tgid = BPF_CORE_READ(task, tgid);
	if (tgid == watched_tgid) {
		walk->watched = true;
		return 1;
	}
	if (tgid <= 1)
		return 1;
	walk->task = BPF_CORE_READ(task, real_parent);
	return 0;
}

/*
 * Whether the current process is watched_tgid or one of its descendants.
 * Through bpf_loop, whose body the verifier walks once rather than once per
 * level (a millisecond of the start with --pid; without it, watched_tgid is
 * 0 and the verifier drops the walk).
 */
static __always_inline bool under_watched_process(void)
{
	struct ancestry_walk walk = {.task = (struct task_struct *)bpf_get_current_task()};

	bpf_loop(MAX_ANCESTRY, ancestor_step, &walk, 0);
	return walk.watched;
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

#endif /* HACOBOOT_LAUNCH_TRACKING_BPF_H */
