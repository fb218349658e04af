"""4. Overhead on unrelated host work."""

from __future__ import annotations

import statistics

from .context import Context, OURS, PREV, REF, order
from .running import end_run, run, start_ours, start_reference, value
from .table import Results, Row, cell


def measure_host_overhead(ctx: Context, results: Results) -> None:
    """Work outside any boot: `hostload forks N` (fork, exec a listener on
    127.0.0.1:0, wait) and `hostload syscalls N` (getppid), untraced and
    while each tracer runs, live, watching the demo launcher (which is not
    run). Slowdown of CPU time per operation (the tracers' programs run in
    the process making the syscalls) against the untraced run of the same
    repetition; for getppid, the least of three processes per condition."""
    loads = {"4a. fork+exec+listen": ["forks", str(ctx.sizes.forks)],
             "4b. getppid syscall": ["syscalls", str(ctx.sizes.syscalls)]}
    # fork+exec: median over iterations of CPU per iteration (parent + child);
    # syscalls: least CPU per call over blocks of 10,000 (see hostload.cpp).
    patterns = {"4a. fork+exec+listen": r" cpu_ns_per_iteration=([\d.]+)",
                "4b. getppid syscall": r"min_cpu_ns_per_iteration=([\d.]+)"}
    # Each process's code and stack placement (ASLR) moves the cost of a
    # short syscall by a few percent (the spread of row 4b in BENCHMARKS.md):
    # the least of three processes per condition, so that both tools and the
    # baseline get their best layout.
    processes = {"4a. fork+exec+listen": 1, "4b. getppid syscall": 3}
    tools = ["untraced", *ctx.tracers()]
    base: dict[str, list[float]] = {label: [] for label in loads}
    slow: dict[str, dict[str, list[float]]] = {label: {OURS: [], REF: [], PREV: []} for label in loads}
    for rep in range(ctx.sizes.reps):
        per_tool: dict[str, dict[str, float]] = {}
        for tool in order(rep, tools):
            p = None
            if tool in (OURS, PREV):
                p = start_ours(ctx, f"host-{tool[:4]}-{rep}", ["--haconiwa", ctx.launcher, "-o", "/dev/null", ctx.app],
                               tool)
            elif tool == REF:
                p = start_reference(ctx, f"host-ref-{rep}")
            try:
                per_tool[tool] = {label: min(value(patterns[label], run(ctx, [ctx.hostload, *args]))
                                             for _ in range(processes[label]))
                                  for label, args in loads.items()}
                if p:
                    end_run(p, results, f"4: {tool}, repetition {rep}")
            finally:
                if p:
                    p.kill()
        for label in loads:
            base[label].append(per_tool["untraced"][label])
            for tool in (OURS, REF, PREV):
                if tool in per_tool:
                    slow[label][tool].append((per_tool[tool][label] / per_tool["untraced"][label] - 1) * 100)
    for label in loads:
        b = statistics.median(base[label])
        untraced = f"{b / 1e3:.0f} us" if b >= 1e4 else f"{b:.0f} ns"
        results.add(Row(f"{label} slowdown, CPU/op [untraced {untraced}]", "%", ours=slow[label][OURS],
                        ref=slow[label][REF], prev=slow[label][PREV], ratio=False))


def measure_sched_hooks(ctx: Context, results: Results) -> None:
    """What the scheduler hooks cost every context switch of the host while
    no boot is in flight: `hostload pingpong N` (two processes pinned to one
    CPU pass a byte back and forth through two pipes: two context switches and
    two wakeups per round trip), the least wall time per round trip over
    blocks of 10,000, the least of three processes per condition. Untraced,
    under two empty raw tracepoint programs on sched_switch and sched_waking
    (hacoboot-bench-schedfloor: the floor of any always-attached scheduler
    hook) and while hacoboot-sampler runs, idle, watching the demo launcher.
    Cost per context switch: half the round trip's increase over the
    untraced run of the same repetition. Goal: at most 1.2x the floor's.
    The previous revision's build, if given, idle as well: it has no
    scheduler hooks, so its figure is the noise of the measurement."""
    pingpong = [ctx.hostload, "pingpong", str(ctx.sizes.round_trips)]
    conditions = ["untraced", "floor", OURS] + ([PREV] if ctx.previous else [])
    added: dict[str, list[float]] = {"floor": [], OURS: [], PREV: []}
    untraced: list[float] = []
    for rep in range(ctx.sizes.reps):
        per_condition: dict[str, float] = {}
        for condition in order(rep, conditions):
            p = None
            argv = [ctx.schedfloor, *pingpong] if condition == "floor" else pingpong
            if condition in (OURS, PREV):
                p = start_ours(ctx, f"sched-{condition[:4]}-{rep}", ["--haconiwa", ctx.launcher, "-o", "/dev/null",
                                                                      ctx.app], condition)
            try:
                per_condition[condition] = min(value(r"min_cpu_ns_per_iteration=([\d.]+)", run(ctx, argv))
                                               for _ in range(3))
                if p:
                    end_run(p, results, f"sched hooks: {condition}, repetition {rep}")
            finally:
                if p:
                    p.kill()
        untraced.append(per_condition["untraced"])
        for condition in added:
            if condition in per_condition:
                added[condition].append((per_condition[condition] - per_condition["untraced"]) / 2)
    floor = statistics.median(added["floor"])
    row = results.add(Row(f"4c. pipe ping-pong on one CPU, cost per context switch [untraced "
                          f"{statistics.median(untraced):.0f} ns/round trip]", "ns", ours=added[OURS], prev=added[PREV], ratio=False,
                          ref_text=f"floor {cell(added['floor'], 0)}", goal="<= 1.2x floor",
                          decimals=0))
    row.met = statistics.median(added[OURS]) <= 1.2 * max(floor, 0.0)
