"""10. The observer effect: how much later a traced boot listens."""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable

from .accuracy import read_truth, truth_bracket
from .context import Context, OURS, PREV, REF, order
from .running import end_run, run, start_ours, start_reference
from .table import Results, Row, cell


STOPPED = "reader stopped"  # hacoboot-sampler with its process stopped (SIGSTOP) once live


def times_to_listen_ms(truth_path: Path) -> list[float]:
    """Per boot, the launcher's own start -> listen time (bracket mids)."""
    return [sum(b) / 2e6 for t in read_truth(truth_path).values() if (b := truth_bracket(t, "listen"))]


def boots_under(ctx: Context, condition: str, name: str, results: Results) -> float:
    """`launcher -n BOOTS --truth` under one condition; the median of its
    boots' times to listen (ms), which a stray slow boot on a shared host
    does not move. The tool's own summary must show every boot listening:
    stopped, its reader drains the ring buffer once continued."""
    boots = ctx.sizes.observer_boots
    truth_path = ctx.file(f"{name}.truth")
    summary = ctx.file(f"{name}.json")
    p = None
    if condition in (OURS, STOPPED, PREV):
        p = start_ours(ctx, name, ["--haconiwa", ctx.launcher, "-f", "json", "-o", str(summary), ctx.app],
                       PREV if condition == PREV else OURS)
    elif condition == REF:
        p = start_reference(ctx, name)
    try:
        if condition == STOPPED:
            os.kill(p.pid, signal.SIGSTOP)
        run(ctx, [ctx.launcher, "-n", str(boots), "--truth", str(truth_path), "--", ctx.app], timeout=600)
        if condition == STOPPED:
            os.kill(p.pid, signal.SIGCONT)
        if p:
            time.sleep(0.1)  # the last events reach the reader
            end_run(p, results, f"10: {condition}, {name}")
    finally:
        if p:
            p.kill()
    if condition in (OURS, STOPPED) and (seen := json.loads(summary.read_text())["boots"]["listen"]) != boots:
        results.notes.append(f"10: {condition}, {name}: the tool saw {seen} of {boots} boots listen")
    return statistics.median(times_to_listen_ms(truth_path))


def later_than_untraced(ctx: Context, conditions: list[str],
                        time_to_listen_ms: Callable[[str, int], float]) -> tuple[dict[str, list[float]], list[float]]:
    """`observer_reps` repetitions of every condition in alternating order:
    per repetition, each traced condition's time to listen
    (`time_to_listen_ms(condition, repetition)`) minus the untraced one's, in
    us, and the untraced times (ms)."""
    added: dict[str, list[float]] = {c: [] for c in conditions if c != "untraced"}
    untraced: list[float] = []
    for rep in range(ctx.sizes.observer_reps):
        ms = {c: time_to_listen_ms(c, rep) for c in order(rep, conditions)}
        untraced.append(ms["untraced"])
        for c in added:
            added[c].append((ms[c] - ms["untraced"]) * 1e3)
    return added, untraced


def bpf_program_stats() -> dict[int, tuple[str, int, int]]:
    """Every BPF program on the host: id -> (name, run_cnt, run_time_ns)."""
    return {p["id"]: (p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0))
            for p in json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], stdout=subprocess.PIPE,
                                               check=True, text=True).stdout)}


def kernel_side_per_boot(ctx: Context, tool: str, results: Results) -> dict[str, float]:
    """Run time of the tracer's BPF programs (those it loaded) over one run
    of the boots, per boot (us), by program name, with kernel.bpf_stats_enabled
    on for that run only. Whatever fires them counts: the boots, and the host's
    other work while boots are in flight."""
    boots = ctx.sizes.observer_boots
    before_start = set(bpf_program_stats())
    name = f"observer-stats-{tool[:8]}"
    if tool == STRACE:
        p = None
    elif tool == REF:
        p = start_reference(ctx, name)
    else:
        extra = ["--syscalls"] if tool == OURS_SYSCALLS else []
        p = start_ours(ctx, name, ["--haconiwa", ctx.launcher, "-o", "/dev/null", *extra, ctx.app],
                       OURS if tool == OURS_SYSCALLS else tool)
    stats_switch = Path("/proc/sys/kernel/bpf_stats_enabled")
    was = stats_switch.read_text()
    try:
        stats_switch.write_text("1")
        try:
            before = bpf_program_stats()
            run(ctx, [ctx.launcher, "-n", str(boots), "--", ctx.app], timeout=600)
            after = bpf_program_stats()
        finally:
            stats_switch.write_text(was)
        end_run(p, results, f"10d: {tool}")
    finally:
        p.kill()
    per_program: dict[str, float] = {}
    for pid, (prog, _, ns) in after.items():
        if pid not in before_start and pid in before:
            per_program[prog] = per_program.get(prog, 0) + (ns - before[pid][2]) / boots / 1e3
    return per_program


def measure_observer_effect(ctx: Context, results: Results) -> None:
    """How much later a traced boot reaches listen than an untraced one, by
    the demo launcher's own clock (its --truth file): sequential boots of the
    demo app, untraced and under each tracer in turn, in alternating order.
    Per run the median boot; per repetition each tracer's difference to the
    untraced run of that repetition. Where the tool's cost comes from: the
    same boots with its process stopped (SIGSTOP) once live, so that only its
    kernel side runs (the BPF programs in the booting processes and the
    scheduler hooks) and its reader takes no CPU from the boot; and the
    previous revision's build, if given, with no scheduler hooks."""
    conditions = ["untraced", OURS, STOPPED] + ([PREV] if ctx.previous else []) + ([REF] if ctx.bpftrace else [])
    added, untraced = later_than_untraced(
        ctx, conditions, lambda c, rep: boots_under(ctx, c, f"observer-{c.replace(' ', '-')[:8]}-{rep}", results))
    percent = {c: [us / 1e3 / base * 100 for us, base in zip(later, untraced)] for c, later in added.items()}
    boots = ctx.sizes.observer_boots
    base = f"untraced {statistics.median(untraced):.2f} ms"
    row = results.add(Row(f"10. observer effect: later listen per boot, {boots} boots [{base}]", "us", ours=added[OURS],
                          ref=added.get(REF, []), prev=added.get(PREV, []), ratio=False, goal="<= bpftrace",
                          decimals=0))
    share = results.add(Row("10b. observer effect in % of the untraced time to listen", "%", ours=percent[OURS],
                            ref=percent.get(REF, []), prev=percent.get(PREV, []), ratio=False,
                            goal="< 1 % and <= bpftrace", decimals=2))
    results.add(Row("10c. the same, tool's reader stopped: its kernel side alone", "us", ours=added[STOPPED],
                    ref_text="n/a", ratio=False, decimals=0))
    if added.get(REF):
        row.met = statistics.median(added[OURS]) <= statistics.median(added[REF])
    share.met = statistics.median(percent[OURS]) < 1 and row.met is not False
    if not shutil.which("bpftool") or not Path("/proc/sys/kernel/bpf_stats_enabled").exists():
        results.notes.append("10d: no bpftool or no kernel.bpf_stats_enabled: no per-program figures")
        return
    kernel = {tool: [] for tool in ctx.tracers()}
    for rep in range(ctx.sizes.session_reps):
        for tool in order(rep, ctx.tracers()):
            programs = kernel_side_per_boot(ctx, tool, results)
            kernel[tool].append(sum(programs.values()))
            top = sorted(programs.items(), key=lambda item: -item[1])
            results.notes.append(f"10d: {tool}, run {rep}, us per boot by program: "
                                 + ", ".join(f"{prog} {us:.1f}" for prog, us in top if us >= 0.05))
    results.add(Row("10d. its BPF programs' run time per boot (kernel.bpf_stats_enabled)", "us", ours=kernel[OURS],
                    ref=kernel.get(REF, []), prev=kernel.get(PREV, []), decimals=1))
    results.notes.append(f"10: times to listen untraced, per repetition: "
                         f"{', '.join(f'{t:.2f}' for t in untraced)} ms")


# A boot with the kinds of kernel work a real Haconiwa boot does (issue 24):
# the pid file's fsync, a network namespace, a mount storm, and CPU.
REAL_SIZED_WORK = ["--fsync", "2:1", "--unshare-net", "12", "--mounts", "17:10", "--burn", "14:2"]


def boot_once_ms(ctx: Context, launcher: str, name: str, wrapper: tuple[str, ...] = ()) -> float:
    """One real-sized boot of the demo app by LAUNCHER (run by WRAPPER); its time to listen (ms)."""
    truth_path = ctx.file(f"{name}.truth")
    run(ctx, [*wrapper, launcher, "-n", "1", "--truth", str(truth_path), "--io-dir", str(ctx.file(".")), *REAL_SIZED_WORK,
              "--", ctx.app], timeout=120)
    times = times_to_listen_ms(truth_path)
    if len(times) != 1:
        raise RuntimeError(f"{name}: {len(times)} boots listened, not 1")
    return times[0]


# This tool with syscalls per step (issue 24): its pairs beside the plain
# tool's, and beside what an operator runs today for the same counts, strace
# (no tracer: each traced boot runs under it).
OURS_SYSCALLS = f"{OURS} --syscalls"
STRACE = "strace -f -c"
STRACE_WRAPPER = ("strace", "-f", "-c", "-o", "/dev/null")


def paired_differences(ctx: Context, tool: str, untraced_launcher: str, name: str,
                       results: Results) -> tuple[list[float], list[float]]:
    """One run of TOOL, live, while boots of the traced launcher and of an
    untraced copy of it (another file: no probe on it) alternate, A B then
    B A: per pair, the traced boot's time to listen minus the untraced one's
    (us), and the untraced times (ms)."""
    p = start_reference(ctx, name) if tool == REF else start_ours(ctx, name, ["--haconiwa", ctx.launcher, "-o",
                                                                             "/dev/null", ctx.app], tool)
    differences: list[float] = []
    untraced: list[float] = []
    try:
        for pair in range(ctx.sizes.observer_pairs):
            sides = ["traced", "untraced"] if pair % 2 == 0 else ["untraced", "traced"]
            ms = {side: boot_once_ms(ctx, ctx.launcher if side == "traced" else untraced_launcher,
                                     f"{name}-{pair}-{side}",
                                     STRACE_WRAPPER if side == "traced" and tool == STRACE else ())
                  for side in sides}
            differences.append((ms["traced"] - ms["untraced"]) * 1e3)
            untraced.append(ms["untraced"])
        if p:
            end_run(p, results, f"10e: {tool}, {name}")
    finally:
        if p:
            p.kill()
    return differences, untraced


def measure_observer_pairs(ctx: Context, results: Results) -> None:
    """The observer effect with the drift between runs taken out: while a
    tracer runs, real-sized boots of the traced launcher and of an untraced
    copy alternate, boot by boot, and each pair gives a difference. Runs
    seconds apart (row 10) differ by more than the effect; two boots next to
    each other do not. The untraced boots still meet the tracer's hooks that
    fire for every process (they return early): what the pairs measure is what
    following a boot adds to it."""
    untraced_launcher = str(ctx.file("hacoboot-launcher-untraced"))
    shutil.copy2(ctx.launcher, untraced_launcher)
    tools = ctx.tracers() + [OURS_SYSCALLS] + ([STRACE] if shutil.which("strace") else [])
    per_run: dict[str, list[float]] = {tool: [] for tool in tools}
    pooled: dict[str, list[float]] = {tool: [] for tool in tools}
    untraced: list[float] = []
    for rep in range(ctx.sizes.session_reps):
        for tool in order(rep, tools):
            differences, base = paired_differences(ctx, tool, untraced_launcher, f"pairs-{tools.index(tool)}-{rep}",
                                                   results)
            per_run[tool].append(statistics.median(differences))
            pooled[tool] += differences
            untraced += base
    base_ms = statistics.median(untraced)
    pairs = ctx.sizes.observer_pairs
    row = results.add(Row(f"10e. observer effect, paired: traced - untraced boot, {pairs} pairs a run, "
                          f"real-sized boots [untraced {base_ms:.2f} ms]", "us", ours=per_run[OURS],
                          ref=per_run.get(REF, []), prev=per_run.get(PREV, []), ratio=False, goal="<= bpftrace",
                          decimals=0))
    share = results.add(Row("10f. the same in % of the untraced time to listen", "%",
                            ours=[us / 1e3 / base_ms * 100 for us in per_run[OURS]],
                            ref=[us / 1e3 / base_ms * 100 for us in per_run.get(REF, [])],
                            prev=[us / 1e3 / base_ms * 100 for us in per_run.get(PREV, [])], ratio=False,
                            goal="< 1 % and <= bpftrace", decimals=2))
    strace = per_run.get(STRACE, [])
    with_syscalls = results.add(Row("10g. the same with --syscalls (syscalls per step, issue 24)", "us",
                                    ours=per_run[OURS_SYSCALLS], ratio=False,
                                    ref_text=f"without: {cell(per_run[OURS], 0)}; {STRACE}: {cell(strace, 0)}",
                                    goal=f"<= without + 1 % of the untraced boot, >= 10x below {STRACE}",
                                    decimals=0))
    ours_syscalls = statistics.median(per_run[OURS_SYSCALLS])
    with_syscalls.met = (ours_syscalls <= statistics.median(per_run[OURS]) + base_ms * 1e3 * 0.01
                         and (not strace or statistics.median(strace) >= 10 * max(ours_syscalls, 1.0)))
    if per_run.get(REF):
        row.met = statistics.median(per_run[OURS]) <= statistics.median(per_run[REF])
    share.met = statistics.median(per_run[OURS]) / 1e3 / base_ms < 0.01 and row.met is not False
    for tool, values in pooled.items():
        low, high = median_interval(values)
        results.notes.append(f"10e: {tool}: median of all {len(values)} pairs {statistics.median(values):.0f} us, "
                             f"95 % interval [{low:.0f}, {high:.0f}] us")


def median_interval(values: list[float]) -> tuple[float, float]:
    """A distribution-free 95 % confidence interval of the median: the order
    statistics the binomial(n, 1/2) count of values below it reaches with
    2.5 % on either side (normal approximation; the whole range below 6)."""
    ranked = sorted(values)
    n = len(ranked)
    if n < 6:
        return ranked[0], ranked[-1]
    reach = int(1.96 * (n ** 0.5) / 2)
    middle = n // 2
    return ranked[max(0, middle - reach - 1)], ranked[min(n - 1, middle + reach)]
