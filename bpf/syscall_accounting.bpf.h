/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * Syscall accounting: each accounted thread's time split into its syscalls
 * (by number) and its time in user space, per segment of the thread (the
 * contract says what a segment is), summed in the map syscall_aggregates.
 * Part of hacoboot.bpf.c, which includes it before state_accounting.bpf.h
 * (whose thread_states holds a struct thread_syscalls); the callers read the
 * thread's scheduler totals and pass them in, so that a call's split into
 * states comes from the same readings as the steps' states.
 *
 * Per thread, with the raw syscall hooks and the events it emits:
 *
 * | event                       | in a call | what is charged, then                            |
 * |-----------------------------|-----------|--------------------------------------------------|
 * | sys_enter                   | no        | user time since `since`; in a call from now      |
 * | sys_exit                    | yes       | the call's time since `since`, counted; not in a |
 * |                             |           | call from now                                    |
 * | sys_exit                    | no        | none: a call entered before accounting began     |
 * |                             |           | (the return from fork of a new child)            |
 * | it emits an event (a        | yes       | the call's time since `since`, not counted       |
 * |   boundary)                 |           | (its return will be); the user time of the       |
 * |                             |           | segment is written; a new segment from now       |
 * | it emits an event           | no        | user time since `since`, written; new segment    |
 *
 * Invariant: from the thread's creation, every nanosecond is charged to one
 * call or to user time of the segment it lies in, with the states the
 * thread's readings give it: a segment's aggregates add up to its length
 * and its states exactly. The current segment's user time is kept in the
 * thread's entry and written at its end only.
 */
#ifndef HACOBOOT_SYSCALL_ACCOUNTING_BPF_H
#define HACOBOOT_SYSCALL_ACCOUNTING_BPF_H

/* A thread's syscall state, in its thread_states entry. */
struct thread_syscalls {
	__u64 segment_ns; /* the current segment's start */
	__u32 nr;	  /* the call it is in */
	__u32 in_call;
	/* the start of the stretch (in a call, or in user space) not charged yet */
	__u64 since;
	struct hacoboot_sched_totals at_since; /* the thread's totals then */
	/* user time of the current segment so far */
	struct hacoboot_syscall_totals user;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_SYSCALL_AGGREGATES);
	__type(key, struct hacoboot_syscall_key);
	__type(value, struct hacoboot_syscall_totals);
} syscall_aggregates SEC(".maps");

/*
 * Set by the loader when the user asked for syscalls per step (--syscalls):
 * the accounting then needs the raw syscall hooks, which run on every
 * syscall of the host while the tool runs, so without it they stay detached
 * (or, attached for execve and listen, time nothing). A constant: without
 * it the verifier drops the syscall accounting from every program, a third
 * of what it walks at an everyday start.
 */
const volatile bool account_syscalls = false;

/* The entry of `key`, made when missing; NULL, counted, when the map is full. */
static __always_inline struct hacoboot_syscall_totals *
aggregate_of(const struct hacoboot_syscall_key *key)
{
	struct hacoboot_syscall_totals zero = {};
	struct hacoboot_syscall_totals *totals = bpf_map_lookup_elem(&syscall_aggregates, key);

	if (totals)
		return totals;
	bpf_map_update_elem(&syscall_aggregates, key, &zero, BPF_NOEXIST);
	totals = bpf_map_lookup_elem(&syscall_aggregates, key);
	if (!totals)
		__sync_fetch_and_add(&counters.syscalls_dropped, 1);
	return totals;
}

/*
 * Adds the stretch since `since` (ending at `now`, the thread's totals
 * `at_now`) to `into`, one piece of a call or of user time, and starts the
 * next stretch there.
 */
static __always_inline void add_stretch(struct thread_syscalls *calls,
					struct hacoboot_syscall_totals *into, __u64 now,
					const struct hacoboot_sched_totals *at_now)
{
	__u64 piece = now - calls->since;

	into->total_ns += piece;
	if (piece > into->max_ns)
		into->max_ns = piece;
	for (int i = 0; i < HACOBOOT_SCHED_STATES; i++)
		into->sched.ns[i] += at_now->ns[i] - calls->at_since.ns[i];
	calls->since = now;
	calls->at_since = *at_now;
}

/*
 * Charges the call's time since `since` to the current segment; `returned`
 * counts it (a call cut by a segment's end is counted where it returns). A
 * piece of no length is left out unless it counts the call.
 */
static __always_inline void charge_call(struct thread_syscalls *calls, __u32 launch, __u32 tid,
					__u64 now, const struct hacoboot_sched_totals *at_now,
					bool returned)
{
	struct hacoboot_syscall_key key = {
	    .segment_ns = calls->segment_ns, .launch = launch, .tid = tid, .nr = calls->nr};
	struct hacoboot_syscall_totals *totals;

	if (now == calls->since && !returned)
		return;
	totals = aggregate_of(&key);
	if (!totals) {
		calls->since = now;
		calls->at_since = *at_now;
		return;
	}
	add_stretch(calls, totals, now, at_now);
	if (returned)
		totals->count++;
}

/* A thread's accounting begins at `now` (its creation), in user space, its totals zero. */
static __always_inline void syscalls_start(struct thread_syscalls *calls, __u64 now)
{
	__builtin_memset(calls, 0, sizeof(*calls));
	calls->segment_ns = now;
	calls->since = now;
}

/* Entry to syscall `nr` at `now`: the user time up to it is the segment's. */
static __always_inline void syscall_entered(struct thread_syscalls *calls, __u32 nr, __u64 now,
					    const struct hacoboot_sched_totals *at_now)
{
	if (calls->in_call) {
		/* Its exit went unseen: what it ran since is the call's, uncounted. */
		calls->since = now;
		calls->at_since = *at_now;
	} else {
		add_stretch(calls, &calls->user, now, at_now);
	}
	calls->nr = nr;
	calls->in_call = 1;
}

/* The call's return at `now`: counted in the current segment. */
static __always_inline void syscall_returned(struct thread_syscalls *calls, __u32 launch, __u32 tid,
					     __u64 now, const struct hacoboot_sched_totals *at_now)
{
	if (!calls->in_call)
		return;
	charge_call(calls, launch, tid, now, at_now, true);
	calls->in_call = 0;
}

/*
 * The thread emits an event at `now`: the segment ends there, its user
 * time written, and the next begins.
 */
static __always_inline void segment_ends(struct thread_syscalls *calls, __u32 launch, __u32 tid,
					 __u64 now, const struct hacoboot_sched_totals *at_now)
{
	struct hacoboot_syscall_key key = {.segment_ns = calls->segment_ns,
					   .launch = launch,
					   .tid = tid,
					   .nr = HACOBOOT_SYSCALL_USER};
	struct hacoboot_syscall_totals *totals;

	if (calls->in_call)
		charge_call(calls, launch, tid, now, at_now, false);
	else
		add_stretch(calls, &calls->user, now, at_now);
	if (calls->user.total_ns) {
		totals = aggregate_of(&key);
		if (totals)
			*totals = calls->user;
	}
	__builtin_memset(&calls->user, 0, sizeof(calls->user));
	calls->segment_ns = now;
}

#endif /* HACOBOOT_SYSCALL_ACCOUNTING_BPF_H */
