/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * Where accounted threads blocked, while syscalls are accounted: the kernel
 * stack of a thread switched out blocked, and when it is woken, its blocked
 * time added under (segment, call, stack, waker, waker's stack) in the map
 * blocking_aggregates (the contract's hacoboot_blocking_key). Part of
 * hacoboot.bpf.c, which includes it after syscall_accounting.bpf.h (the call
 * a thread is in) and before state_accounting.bpf.h (whose thread_states
 * holds a struct thread_block).
 *
 * | event                         | what happens                                     |
 * |-------------------------------|--------------------------------------------------|
 * | switched out blocked          | its stack taken; the call it is in kept; pending |
 * | woken while pending           | the time blocked (its SLEEP or IO stretch) added |
 * |                               | with the waker's tid and stack when the waker is |
 * |                               | accounted; not pending                           |
 * | switched in while pending     | its wakeup went unseen: added without a waker    |
 *
 * A blocked thread emits no event, so a blocked stretch lies in one segment.
 * The waker is the thread on the CPU when the wakeup starts, as for the
 * wakeup events: one from an interrupt landing while an accounted thread runs
 * is charged to that thread, its stack then showing the interrupt's frames.
 */
#ifndef HACOBOOT_BLOCKING_BPF_H
#define HACOBOOT_BLOCKING_BPF_H

/* A thread's pending block, in its thread_states entry. */
struct thread_block {
	__u32 pending;
	__u32 nr;	/* the call it blocked in, as hacoboot_blocking_key's */
	__u32 stack_id; /* where */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, HACOBOOT_MAX_STACKS); /* 1 without --syscalls: set by the loader */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, HACOBOOT_STACK_DEPTH * sizeof(__u64));
} blocking_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_BLOCKING_AGGREGATES);
	__type(key, struct hacoboot_blocking_key);
	__type(value, struct hacoboot_blocking_totals);
} blocking_aggregates SEC(".maps");

/* The current thread's kernel stack in blocking_stacks, or HACOBOOT_NO_STACK, counted. */
static __always_inline __u32 current_stack(void *ctx)
{
	long id = bpf_get_stackid(ctx, &blocking_stacks, 0);

	if (id < 0) {
		__sync_fetch_and_add(&counters.stacks_dropped, 1);
		return HACOBOOT_NO_STACK;
	}
	return (__u32)id;
}

/* The thread, `calls` its syscall state, has just switched out blocked. */
static __always_inline void block_begins(struct thread_block *block,
					 const struct thread_syscalls *calls, void *ctx)
{
	block->stack_id = current_stack(ctx);
	block->nr = calls->in_call ? calls->nr : HACOBOOT_SYSCALL_USER;
	block->pending = 1;
}

/* Its pending block ends after `blocked_ns` blocked, woken by `waker_tid` (0: none known). */
static __always_inline void block_ends(struct thread_block *block,
				       const struct thread_syscalls *calls, __u32 launch, __u32 tid,
				       __u64 blocked_ns, __u32 waker_tid, __u32 waker_stack_id)
{
	struct hacoboot_blocking_key key = {.segment_ns = calls->segment_ns,
					    .launch = launch,
					    .tid = tid,
					    .nr = block->nr,
					    .stack_id = block->stack_id,
					    .waker_tid = waker_tid,
					    .waker_stack_id = waker_stack_id};
	struct hacoboot_blocking_totals zero = {};
	struct hacoboot_blocking_totals *totals;

	block->pending = 0;
	totals = bpf_map_lookup_elem(&blocking_aggregates, &key);
	if (!totals) {
		bpf_map_update_elem(&blocking_aggregates, &key, &zero, BPF_NOEXIST);
		totals = bpf_map_lookup_elem(&blocking_aggregates, &key);
	}
	if (!totals) {
		__sync_fetch_and_add(&counters.blocking_dropped, 1);
		return;
	}
	__sync_fetch_and_add(&totals->count, 1);
	__sync_fetch_and_add(&totals->time_ns, blocked_ns);
}

#endif /* HACOBOOT_BLOCKING_BPF_H */
