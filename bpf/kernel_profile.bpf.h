/* SPDX-License-Identifier: (MIT OR GPL-2.0-only) */
/*
 * Kernel CPU, sampled (--kernel-profile): the program the loader attaches to
 * one perf event per online CPU (a CPU clock at the asked frequency) counts
 * each sample of an accounted thread in the map kernel_samples (the
 * contract's hacoboot_sample_key) under the thread's segment, the call it is
 * in and its kernel stack, taken into blocking_stacks. Part of
 * hacoboot.bpf.c, which includes it after state_accounting.bpf.h (the
 * `threads` it looks the current thread up in) and blocking.bpf.h (the
 * stack map).
 *
 * A sample is a CPU timer's interrupt: what it reads of the thread's entry
 * may be amid a handler's change of it on this CPU (a segment ending): the
 * sample then goes to the segment before or after the instant, which both
 * hold time of that instant.
 */
#ifndef HACOBOOT_KERNEL_PROFILE_BPF_H
#define HACOBOOT_KERNEL_PROFILE_BPF_H

/*
 * Whether the sample interrupted user mode: the registers it interrupted
 * begin the program's context (the UAPI's struct bpf_perf_event_data: the
 * architecture's user-space pt_regs), read at their stable offsets.
 */
#if defined(__TARGET_ARCH_x86)
/* struct pt_regs' cs (the 18th of its 8-byte fields): its low two bits are the ring. */
#define SAMPLE_IN_USER_MODE(ctx) ((((const __u64 *)(ctx))[17] & 3) != 0)
#elif defined(__TARGET_ARCH_arm64)
/* struct user_pt_regs' pstate (after 31 registers, sp and pc): mode bits 0 are EL0. */
#define SAMPLE_IN_USER_MODE(ctx) ((((const __u64 *)(ctx))[33] & 0xf) == 0)
#else
#error "hacoboot: add how this architecture's sample registers tell user mode"
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HACOBOOT_MAX_KERNEL_SAMPLES); /* 1 without --kernel-profile */
	__type(key, struct hacoboot_sample_key);
	__type(value, __u64);
} kernel_samples SEC(".maps");

/* Counts one sample of the accounted `thread` (tid `tid`), in the call it is in. */
static __always_inline void count_sample(void *ctx, const struct thread_states *thread, __u32 tid)
{
	const struct thread_syscalls *calls = &thread->syscalls;
	struct hacoboot_sample_key key = {.segment_ns = calls->segment_ns,
					  .launch = thread->launch,
					  .tid = tid,
					  .nr = HACOBOOT_SYSCALL_USER,
					  .stack_id = HACOBOOT_USER_MODE};
	__u64 one = 1;
	__u64 *samples;

	if (!SAMPLE_IN_USER_MODE(ctx)) {
		key.nr = calls->in_call ? calls->nr : HACOBOOT_SYSCALL_USER;
		key.stack_id = current_stack(ctx);
	}
	samples = bpf_map_lookup_elem(&kernel_samples, &key);
	if (samples) {
		__sync_fetch_and_add(samples, 1);
		return;
	}
	if (bpf_map_update_elem(&kernel_samples, &key, &one, BPF_NOEXIST) == 0)
		return;
	/* Made meanwhile on another CPU, or the map is full. */
	samples = bpf_map_lookup_elem(&kernel_samples, &key);
	if (samples)
		__sync_fetch_and_add(samples, 1);
	else
		__sync_fetch_and_add(&counters.samples_dropped, 1);
}

#endif /* HACOBOOT_KERNEL_PROFILE_BPF_H */
