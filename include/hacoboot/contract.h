/* SPDX-License-Identifier: MIT */
/*
 * The contract between the BPF program (bpf/hacoboot.bpf.c) and user space.
 * Plain C so that both clang -target bpf and the C++ decoder include it.
 */
#ifndef HACOBOOT_CONTRACT_H
#define HACOBOOT_CONTRACT_H

/*
 * The version of the record layout below (struct hacoboot_event, its kinds
 * and flags): a recording states it, and a build refuses a recording of a
 * newer layout. Bump it with every change of what a record's bytes mean
 * (3: HACOBOOT_SCHED_IO is the waits in io_schedule alone; 4: the kind
 * HACOBOOT_EV_THREAD).
 */
#define HACOBOOT_RECORD_LAYOUT_VERSION 4

/* Phase that starts a launch: the supervisor passes it under its own pid. */
#define HACOBOOT_PHASE_START_SV 1

/* Phase after which the supervisor's next process fork is the container. */
#define HACOBOOT_PHASE_START_FORK 2

/*
 * Ring buffer size unless --ringbuf-size says otherwise: 512 KiB holds ~5,400
 * events (HACOBOOT_EVENT_BASE_SIZE plus an 8-byte header each), a hundred
 * boots' worth, and the reader is woken once a quarter is used. Its pages are
 * mapped twice in the tool (and all present from the start): the size counts
 * double in its resident memory.
 */
#define HACOBOOT_DEFAULT_RINGBUF_BYTES (1 << 19)

/* Bytes of the execve filename carried in an exec event, NUL included. */
#define HACOBOOT_FILENAME_LEN 256

/* Processes tracked at once: CLIs, supervisors and container members. */
#define HACOBOOT_MAX_TRACKED 32768

/*
 * Container threads between execve entry and sched_process_exec at once. An
 * LRU map is preallocated (its size is start-up time): a few per booting
 * container is plenty, and an overflow only loses the oldest entry time.
 */
#define HACOBOOT_MAX_EXECING 1024

/*
 * Threads whose scheduler states are accounted at once: those of the launches
 * between START_SV and their listen, a few each. A hash map's buckets cost
 * its creation time in proportion to its size, at every start (about 0.1 ms
 * per 4,096 here), preallocated or not; a thread past it is counted in
 * unaccounted_threads.
 */
#define HACOBOOT_MAX_THREADS 16384

/*
 * Launches accounted at once (booting: from START_SV to their listen). A
 * launch past it is not accounted, and counted in unaccounted_threads.
 */
#define HACOBOOT_MAX_ACCOUNTED_LAUNCHES 8192

enum hacoboot_event_kind {
	HACOBOOT_EV_PHASE = 1,	/* USDT bootstrap_phase_pass: arg = phase */
	HACOBOOT_EV_FORK = 2,	/* process fork by a tracked process: arg = child pid */
	HACOBOOT_EV_EXEC = 3,	/* successful execve by a member: filename, ts at entry */
	HACOBOOT_EV_LISTEN = 4, /* successful listen(2) by a member, ts at return */
	HACOBOOT_EV_EXIT = 5,	/* last thread of a tracked process exited: arg = wait(2) status */
	HACOBOOT_EV_WAKEUP = 6, /* a tracked thread woke a blocked one of another process: wakee */
	HACOBOOT_EV_UNPROBED_EXEC = 7, /* an exec of the haconiwa path's file without the probe:
					* unprobed; for the loader, not a boot's */
	HACOBOOT_EV_THREAD = 8,	       /* a thread of a tracked process cloned another, which is
					* accounted from now: arg = its tid; role as the process's */
};

/*
 * Scheduler states of a thread of a tracked process, indexes of
 * hacoboot_sched_totals.ns. Every nanosecond from the thread's first sighting
 * (its process becoming tracked, or its fork or clone by a tracked process)
 * is in exactly one state.
 */
enum hacoboot_sched_state {
	HACOBOOT_SCHED_CPU = 0,	      /* on a CPU: the scheduler's count of its CPU time */
	HACOBOOT_SCHED_RUN_QUEUE = 1, /* runnable since a wakeup, preemption or fork; on a VM also
				       * the host's steal time while it ran */
	HACOBOOT_SCHED_SLEEP = 2,     /* blocked, not waiting for I/O: sleep, pipes, futexes,
				       * locks, RCU grace periods... */
	HACOBOOT_SCHED_IO = 3,	      /* waiting for block I/O (io_schedule: in_iowait) */
	HACOBOOT_SCHED_STATES = 4,
};

/*
 * A thread's cumulative nanoseconds per state up to an event's ts_ns: a
 * step's breakdown is the difference of two events' totals of one thread,
 * and the difference of their sums is the difference of their ts_ns exactly.
 */
struct hacoboot_sched_totals {
	unsigned long long ns[HACOBOOT_SCHED_STATES];
};

/* hacoboot_event.flags: sched holds tid's totals (else tid is not accounted). */
#define HACOBOOT_EVENT_SCHED 1U

/*
 * The woken side of a wakeup event, whose other fields are the waker's.
 * Recorded when a tracked thread wakes one of another tracked process that
 * was blocked (not preempted): a wakeup within a process stays blocked time
 * of the wakee, without a record. The waker is the thread on the CPU when the
 * wakeup starts: one from an interrupt (a timer, an I/O completion) that
 * lands while a tracked thread of another process runs there is recorded as
 * that thread's.
 */
struct hacoboot_wakee {
	unsigned int pid; /* tgid */
	unsigned int tid;
	unsigned int hpid; /* its launch, as hpid and launch of hacoboot_event */
	unsigned int launch;
	unsigned int role; /* enum hacoboot_role */
	unsigned int reserved;
	struct hacoboot_sched_totals sched; /* up to ts_ns, the blocked time included */
};

/*
 * A file the probe is not attached to was exec'd at the haconiwa binary's
 * path, as right after an upgrade renamed it there: the loader attaches the
 * probe to it (through /proc/PID/exe), then lets the process go on when it
 * was held (stopped before its first instruction, so that no phase of its
 * launch passes before the probe is in place).
 */
struct hacoboot_unprobed_exec {
	unsigned long long device; /* the kernel's dev_t of the file's filesystem */
	unsigned long long inode;
	unsigned int held; /* 1: stopped (SIGSTOP) until the loader continues it */
	unsigned int reserved;
};

/* Key of the map probed_files: a file the probe is attached to (or that has none). */
struct hacoboot_file_id {
	unsigned long long device; /* as hacoboot_unprobed_exec's */
	unsigned long long inode;
};

/* Files in probed_files at most: the loader attaches to 16 at most. */
#define HACOBOOT_MAX_PROBED_FILES 64

/* Bytes of the haconiwa binary's file name (its last path component) the kernel side compares. */
#define HACOBOOT_WATCHED_NAME_LEN 64

/* Roles of a tracked process, carried in hacoboot_event.role. */
enum hacoboot_role {
	HACOBOOT_ROLE_LAUNCHER = 1,  /* passed phases itself (Haconiwa CLI or supervisor) */
	HACOBOOT_ROLE_CONTAINER = 2, /* the container child forked after START_FORK */
	HACOBOOT_ROLE_MEMBER = 3,    /* any descendant of the container child */
};

/*
 * One event. Only exec events carry the filename and wakeup events the
 * wakee: the others are reserved with HACOBOOT_EVENT_BASE_SIZE bytes to keep
 * the ring buffer dense, wakeups with HACOBOOT_WAKEUP_EVENT_SIZE.
 */
struct hacoboot_event {
	unsigned long long ts_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	unsigned long long cgroup_id; /* cgroup v2 id of the emitting task (exec events only) */
	long long arg;		      /* see enum hacoboot_event_kind */
	unsigned int kind;	      /* enum hacoboot_event_kind */
	unsigned int pid;	      /* tgid of the emitting process (init pid ns) */
	unsigned int hpid;	      /* boot key: the supervisor's pid */
	unsigned int role;	      /* enum hacoboot_role of pid (of the child for forks) */
	unsigned int launch; /* random id of pid's launch, 0 for a CLI: tells apart launches under a
				reused hpid */
	unsigned int tid;    /* the emitting thread (init pid ns) */
	unsigned int flags;  /* HACOBOOT_EVENT_SCHED */
	struct hacoboot_sched_totals sched; /* tid's, up to ts_ns */
	union {
		char filename[HACOBOOT_FILENAME_LEN];	/* exec */
		struct hacoboot_wakee wakee;		/* wakeup */
		struct hacoboot_unprobed_exec unprobed; /* unprobed exec */
	};
};

#define HACOBOOT_EVENT_BASE_SIZE (sizeof(struct hacoboot_event) - HACOBOOT_FILENAME_LEN)
#define HACOBOOT_WAKEUP_EVENT_SIZE (HACOBOOT_EVENT_BASE_SIZE + sizeof(struct hacoboot_wakee))
#define HACOBOOT_UNPROBED_EXEC_EVENT_SIZE                                                          \
	(HACOBOOT_EVENT_BASE_SIZE + sizeof(struct hacoboot_unprobed_exec))

/* Counters the BPF side keeps so that nothing is lost silently. */
struct hacoboot_counters {
	unsigned long long lost_events;		/* ring buffer reservation failed */
	unsigned long long tracked_full;	/* a process could not be tracked: map full */
	unsigned long long unaccounted_threads; /* a thread's states could not be: map full */
	/*
	 * Not a loss: a running thread whose switch onto its CPU the scheduler
	 * hooks missed, its states repaired from the scheduler's count of its
	 * CPU time (state_accounting.bpf.h).
	 */
	unsigned long long repaired_switch_ins;
	/* syscall time not aggregated: the map syscall_aggregates was full */
	unsigned long long syscalls_dropped;
	/* blocked stretches not aggregated: the map blocking_aggregates was full */
	unsigned long long blocking_dropped;
	/* kernel stacks not taken (bpf_get_stackid failed: the stack map full, a hash clash) */
	unsigned long long stacks_dropped;
	/* CPU samples not aggregated: the map kernel_samples was full (--kernel-profile) */
	unsigned long long samples_dropped;
};

/*
 * Syscalls of accounted threads, aggregated in the kernel (no record per
 * call): the map syscall_aggregates, keyed by hacoboot_syscall_key, holds
 * hacoboot_syscall_totals. A thread's time is cut into segments at every
 * event it emits (each event's ts_ns starts a new one): a step of the thread
 * is a run of whole segments, so that the segments starting within a step
 * hold exactly its syscalls. A call that spans an event (a fork event inside
 * clone, the listen event inside listen) is split there. Besides the calls,
 * each segment holds its time in user space (nr HACOBOOT_SYSCALL_USER), timed
 * independently: from each return to the next entry. The calls' times and
 * the user time of a segment add up to its length exactly, per state too.
 *
 * Hash entries, not preallocated; a boot uses about (steps x distinct
 * syscalls per step) entries. Past HACOBOOT_MAX_SYSCALL_AGGREGATES, the time
 * is counted in hacoboot_counters.syscalls_dropped (calls, user stretches).
 * The reader deletes a launch's entries when its boot ends.
 */
#define HACOBOOT_MAX_SYSCALL_AGGREGATES 32768

/* hacoboot_syscall_key.nr of a segment's time in user space. */
#define HACOBOOT_SYSCALL_USER 0xffffffffU

struct hacoboot_syscall_key {
	unsigned long long segment_ns; /* the thread's event (or creation) that began the segment */
	unsigned int launch;
	unsigned int tid;
	unsigned int nr; /* the syscall's number (this architecture's), or HACOBOOT_SYSCALL_USER */
	/*
	 * Always 0: the key's padding, named so that it is zeroed. Where a call
	 * blocked has its own map (hacoboot_blocking_key), so that the calls'
	 * counts and the "calls + user = step" sum stay one entry per call.
	 */
	unsigned int reserved;
};

struct hacoboot_syscall_totals {
	unsigned long long count; /* calls that returned in the segment (listen's at its event) */
	unsigned long long total_ns; /* their time in the segment: sched's sum */
	unsigned long long max_ns;   /* the longest one's time in the segment */
	struct hacoboot_sched_totals sched;
};

/*
 * Where accounted threads blocked (while syscalls are accounted): each time
 * a thread switches out blocked (SLEEP or IO), its kernel stack is taken
 * into the stack map blocking_stacks; when it is woken (or, that unseen,
 * switched in), the blocked time is added to the map blocking_aggregates
 * under its segment, its call (nr as in hacoboot_syscall_key, USER for a
 * page fault's wait) and that stack, and under the waker's tid and kernel
 * stack when the waker is itself an accounted thread (0 and
 * HACOBOOT_NO_STACK otherwise: a timer, an interrupt, another process).
 * A separate map from syscall_aggregates: a call may block several times
 * at several places, while its time and count stay one entry there.
 *
 * Stack ids are the stack map's; the reader takes a launch's stacks with its
 * entries and deletes the ids no entry left in the map refers to. Blocked
 * time lost to a full map is counted in hacoboot_counters.blocking_dropped,
 * a stack not taken in stacks_dropped (the entry then has HACOBOOT_NO_STACK).
 */
#define HACOBOOT_MAX_BLOCKING_AGGREGATES 16384

/*
 * Distinct kernel stacks held at once: those of the boots in flight (a boot
 * blocks at some tens of places; its wakers' stacks as many). Preallocated
 * by the kernel (HACOBOOT_STACK_DEPTH frames each, 256 bytes): 1 MiB with
 * the buckets. The loader shrinks it to 1 entry without --syscalls, and
 * grows it by HACOBOOT_MAX_SAMPLED_STACKS with --kernel-profile.
 */
#define HACOBOOT_MAX_STACKS 4096

/*
 * The stacks the CPU samples add (--kernel-profile): a boot's samples land
 * on some hundreds of distinct stacks at most, and a stack map is best kept
 * far from full (a bucket clash fails bpf_get_stackid).
 */
#define HACOBOOT_MAX_SAMPLED_STACKS 4096

/* Frames kept per stack: deep enough for a syscall's wait under its entry code. */
#define HACOBOOT_STACK_DEPTH 32

/* A stack id that is none: not taken, or no accounted waker. */
#define HACOBOOT_NO_STACK 0xffffffffU

struct hacoboot_blocking_key {
	unsigned long long segment_ns; /* as hacoboot_syscall_key's */
	unsigned int launch;
	unsigned int tid;
	unsigned int nr;	     /* as hacoboot_syscall_key's */
	unsigned int stack_id;	     /* blocking_stacks' id of the blocked thread's stack */
	unsigned int waker_tid;	     /* 0: not woken by an accounted thread */
	unsigned int waker_stack_id; /* HACOBOOT_NO_STACK without one */
};

struct hacoboot_blocking_totals {
	unsigned long long count;   /* blocked stretches */
	unsigned long long time_ns; /* their time, blocked (SLEEP and IO) */
};

/*
 * What the loader hands over per blocking entry (take_blocking): the key,
 * the totals, this header, then `frames` addresses of the blocked stack and
 * `waker_frames` of the waker's (unsigned long long each, innermost first).
 */
struct hacoboot_blocking_frames {
	unsigned int frames;
	unsigned int waker_frames;
};

/*
 * Kernel CPU, sampled (--kernel-profile): a perf event per online CPU
 * (PERF_COUNT_SW_CPU_CLOCK, at the frequency the user asked for) runs a
 * program that, when the thread on that CPU is accounted, counts the sample
 * in the map kernel_samples under (segment, launch, tid, the call the
 * thread is in or HACOBOOT_SYSCALL_USER, its kernel stack in
 * blocking_stacks). A sample taken in user mode has no kernel stack: its
 * stack_id is HACOBOOT_USER_MODE. A full map is counted in
 * hacoboot_counters.samples_dropped, a stack not taken in stacks_dropped
 * (the entry then has HACOBOOT_NO_STACK). The loader enables the perf
 * events only while some thread is accounted.
 */
#define HACOBOOT_MAX_KERNEL_SAMPLES 16384

/* hacoboot_sample_key.stack_id of a sample taken in user mode. */
#define HACOBOOT_USER_MODE 0xfffffffeU

struct hacoboot_sample_key {
	unsigned long long segment_ns; /* as hacoboot_syscall_key's */
	unsigned int launch;
	unsigned int tid;
	unsigned int nr;       /* as hacoboot_syscall_key's */
	unsigned int stack_id; /* blocking_stacks' id, HACOBOOT_NO_STACK or HACOBOOT_USER_MODE */
};

/*
 * What the loader hands over per sample entry (take_kernel_samples): the
 * key, this header, then `frames` addresses of its stack (unsigned long
 * long each, innermost first).
 */
struct hacoboot_sample_entry {
	unsigned long long samples;
	unsigned int frames;
	unsigned int reserved;
};

/*
 * Phase events of no launch the kernel side tracks (not passed by a launcher
 * starting, nor under the hpid of a launch seen starting) are dropped there
 * and counted per CPU in the map untracked_phases: one unsigned long long
 * per CPU, summed by the reader.
 */

#endif /* HACOBOOT_CONTRACT_H */
