"""6. Accuracy over launcher boots (and 2. peak RSS, from the same runs)."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from .context import Context, OURS, REF, order
from .running import Process, end_run, run, start_ours, start_reference, vm_hwm_mb
from .table import Results, Row


def read_truth(path: Path) -> dict[int, dict[str, int]]:
    truth: dict[int, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        hpid, key, v = line.split("\t")
        truth.setdefault(int(hpid), {})[key] = int(v)
    return truth


def truth_bracket(t: dict[str, int], what: str) -> tuple[int, int] | None:
    """Since-start interval the true value must lie in: [what_lo - start_hi,
    what_hi - start_lo]."""
    keys = ("start_lo", "start_hi", f"{what}_lo", f"{what}_hi")
    if not all(k in t for k in keys):
        return None
    return t[f"{what}_lo"] - t["start_hi"], t[f"{what}_hi"] - t["start_lo"]


def read_rows(path: Path) -> dict[int, dict[str, int]]:
    """--events TSV -> {hpid: {'execve': since_start_ns, 'listen': ...}}."""
    lines = path.read_text().splitlines()
    col = {name: i for i, name in enumerate(lines[0].split("\t"))}
    seen: dict[int, dict[str, int]] = {}
    for line in lines[1:]:
        f = line.split("\t")
        kind = f[col["kind"]]
        if kind in ("execve", "listen") and f[col["since_start_ns"]]:
            seen.setdefault(int(f[col["hpid"]]), {})[kind] = int(f[col["since_start_ns"]])
    return seen


def read_bpftrace_maps(text: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^@(\w+): (\d+)$", text, re.M)}


def measure_accuracy(ctx: Context, results: Results) -> None:
    """Each tracer, started and live, watches `launcher -n BOOTS --truth` run
    the demo app; then SIGINT. Truth brackets per boot: the true since-start
    value lies in [X_lo - start_hi, X_hi - start_lo]. hacoboot-sampler: per
    boot, execve/listen since-start from --events joined by hpid. bpftrace:
    only its averages, against the truth's averages. Peak RSS (measurement 2)
    is the tracer's ru_maxrss in these runs.

    The execve bracket is wide: exec_hi is taken in the app's main(), after
    the kernel's exec and the dynamic loader, while both tracers time execve
    at syscall entry, just after exec_lo. So execve is also compared with the
    bracket's low edge (signed: a few us above it is right)."""
    boots = ctx.sizes.boots
    metrics = ("execve", "listen")
    rss: dict[str, list[float]] = {OURS: [], REF: []}
    hwm: dict[str, list[float]] = {OURS: [], REF: []}
    avg_mid = {w: {OURS: [], REF: []} for w in metrics}  # |avg - truth midpoint avg|
    avg_low = {w: {OURS: [], REF: []} for w in metrics}  # avg - truth low-edge avg
    boot_mid = {w: [] for w in metrics}  # per run: mean |err| against each boot's midpoint
    boot_low = {w: [] for w in metrics}  # per run: mean (value - low edge)
    boot_max = {w: 0.0 for w in metrics}
    halfwidth = {w: [] for w in metrics}
    inside = {w: [0, 0] for w in metrics}
    counted: dict[str, list[float]] = {OURS: [], REF: []}
    for rep in range(ctx.sizes.session_reps):
        for tool in order(rep, [OURS, REF] if ctx.bpftrace else [OURS]):
            truth_path = ctx.file(f"truth-{tool}-{rep}.tsv")
            truth_path.unlink(missing_ok=True)
            events = ctx.file(f"accuracy-{rep}.tsv")
            if tool == OURS:
                p = start_ours(ctx, f"accuracy-ours-{rep}", ["--haconiwa", ctx.launcher, "--events", str(events),
                                                             "-o", "/dev/null", ctx.app])
            else:
                p = start_reference(ctx, f"accuracy-ref-{rep}")
            try:
                run(ctx, [ctx.launcher, "-n", str(boots), "--truth", str(truth_path), "--", ctx.app], timeout=900)
                time.sleep(0.1)  # the last events reach the reader
                hwm[tool].append(vm_hwm_mb(p.proc.pid))
                p.interrupt()
            finally:
                p.kill()
            rss[tool].append(p.peak_rss_mb)
            truth = read_truth(truth_path)
            seen = read_rows(events) if tool == OURS else {}
            maps = read_bpftrace_maps(p.text()) if tool == REF else {}
            counted[tool].append(sum(1 for h in truth if "listen" in seen.get(h, {})) if tool == OURS
                                 else maps.get("listen__count", 0))
            for what in metrics:
                key = "exec" if what == "execve" else what
                brackets = {h: b for h, t in truth.items() if (b := truth_bracket(t, key))}
                mid = {h: (lo + hi) / 2 for h, (lo, hi) in brackets.items()}
                truth_mid_avg = statistics.mean(mid.values())
                truth_low_avg = statistics.mean(lo for lo, _ in brackets.values())
                if tool == OURS:
                    got = {h: seen[h][what] for h in brackets if what in seen.get(h, {})}
                    tool_avg = statistics.mean(got.values())
                    errs = [abs(v - mid[h]) for h, v in got.items()]
                    boot_mid[what].append(statistics.mean(errs) / 1e3)
                    boot_low[what].append(statistics.mean(v - brackets[h][0] for h, v in got.items()) / 1e3)
                    boot_max[what] = max(boot_max[what], max(errs) / 1e3)
                    halfwidth[what].append(statistics.mean((hi - lo) / 2 for lo, hi in brackets.values()) / 1e3)
                    inside[what][0] += sum(1 for h, v in got.items() if brackets[h][0] <= v <= brackets[h][1])
                    inside[what][1] += len(brackets)
                else:
                    tool_avg = maps.get(f"{what}_avg", 0)
                avg_mid[what][tool].append(abs(tool_avg - truth_mid_avg) / 1e3)
                avg_low[what][tool].append((tool_avg - truth_low_avg) / 1e3)

    results.add(Row("2. peak RSS of the tracer (VmHWM at Ctrl-C, accuracy runs)", "MB", ours=hwm[OURS], ref=hwm[REF],
                    goal="<= 8 MB", met=statistics.median(hwm[OURS]) <= 8))
    # wait4's ru_maxrss also counts the image the process replaced at exec:
    # the fork of this Python driver, whatever the tracer uses (row 2b
    # against row 2 in BENCHMARKS.md).
    results.add(Row("2b. ru_maxrss from wait4 (includes the spawning Python's pre-exec image)", "MB",
                    ours=rss[OURS], ref=rss[REF]))
    for letter, what in (("a", "execve"), ("b", "listen")):
        results.add(Row(f"6{letter}. {what}: |avg - truth avg (bracket mids)|, {boots} boots", "us",
                        ours=avg_mid[what][OURS], ref=avg_mid[what][REF], ratio=False))
    results.add(Row("6c. execve: avg - truth avg of bracket low edges", "us", ours=avg_low["execve"][OURS],
                    ref=avg_low["execve"][REF], ratio=False))
    for letter, what in (("d", "execve"), ("e", "listen")):
        results.add(Row(f"6{letter}. {what} per boot: mean |err| vs bracket mid", "us", ours=boot_mid[what],
                        ref_text="n/a (aggregates only)", ratio=False,
                        goal=f"in bracket: {inside[what][0]}/{inside[what][1]}",
                        met=inside[what][0] == inside[what][1]))
        results.notes.append(
            f"6{letter}: {what} per boot: max |err| vs bracket mid {boot_max[what]:.1f} us; mean bracket half-width "
            f"{statistics.median(halfwidth[what]):.1f} us; mean distance above the low edge "
            f"{statistics.median(boot_low[what]):.1f} us")
    results.add(Row(f"6f. boots with a listen figure (of {boots})", "boots", ours=counted[OURS], ref=counted[REF],
                    ratio=False, goal=f"{boots}", met=bool(counted[OURS]) and min(counted[OURS]) == boots,
                    decimals=0))


# A tracer of a parity run: its name, and how to start it live under a name.
Starter = tuple[str, Callable[[str], Process]]


def parity_run(ctx: Context, results: Results, name: str, tracers: list[Starter]) -> dict[str, int] | None:
    """One run of two tracers at once on the same boots, started in the
    order given; returns the figures of both, keyed 'NAME:execve_avg',
    'NAME:listen_min'..., or None when one of them did not exit on SIGINT
    (noted)."""
    started: list[tuple[str, Process]] = []
    try:
        for tool, start in tracers:
            started.append((tool, start(f"{name}-{'ours' if tool == OURS else 'ref'}-{len(started)}")))
        run(ctx, [ctx.launcher, "-n", str(ctx.sizes.boots), "--", ctx.app], timeout=900)
        time.sleep(0.1)
        figures: dict[str, int] = {}
        ended = True
        for tool, p in started:
            ended = end_run(p, results, f"{name}: {tool}") and ended
            figures.update({f"{tool}:{k}": v for k, v in read_bpftrace_maps(p.text()).items()})
        return figures if ended else None
    finally:
        for _, p in started:
            p.kill()


def both_orders(ctx: Context, results: Results, name: str, first: Starter, second: Starter,
                runs: int) -> tuple[dict[str, dict[bool, list[float]]], dict[str, list[float]], int, int]:
    """RUNS parity runs of FIRST and SECOND at once, alternating which starts
    first. Returns, per metric, the differences of the averages (second -
    first, us) by whether FIRST started first; the averages of each (ms);
    the runs ended cleanly and those of them with the same counts."""
    diffs: dict[str, dict[bool, list[float]]] = {w: {True: [], False: []} for w in ("execve", "listen")}
    avgs: dict[str, list[float]] = {f"{tool}:{w}": [] for tool in (first[0], second[0]) for w in diffs}
    ended = same_counts = 0
    for rep in range(runs):
        first_first = rep % 2 == 0
        figures = parity_run(ctx, results, f"{name}-{rep}", [first, second] if first_first else [second, first])
        if figures is None:
            continue
        ended += 1
        same_counts += all(figures.get(f"{first[0]}:{w}__count") == figures.get(f"{second[0]}:{w}__count")
                           for w in diffs)
        for w in diffs:
            a, b = figures.get(f"{first[0]}:{w}_avg", 0), figures.get(f"{second[0]}:{w}_avg", 0)
            avgs[f"{first[0]}:{w}"].append(a / 1e6)
            avgs[f"{second[0]}:{w}"].append(b / 1e6)
            diffs[w][first_first].append((b - a) / 1e3)
    return diffs, avgs, ended, same_counts


def order_means(by_order: dict[bool, list[float]]) -> tuple[float, float, float] | None:
    """A both_orders difference's mean when FIRST started first, when SECOND
    did, and the mean of the two, in which each tracer's own handler length
    cancels; None without runs in both orders."""
    if not by_order[True] or not by_order[False]:
        return None
    first_first, second_first = statistics.mean(by_order[True]), statistics.mean(by_order[False])
    return first_first, second_first, (first_first + second_first) / 2


def parity_runs(ctx: Context) -> int:
    """Runs per parity measurement: an even number, for both orders alike."""
    return 2 * max(1, ctx.sizes.session_reps // 2 + ctx.sizes.session_reps % 2)


def measure_parity(ctx: Context, results: Results) -> None:
    """Both tracers live at once on the same launcher boots: hacoboot-sampler
    `--format bpftrace` against the reference script, figure for figure,
    with tracefs unmounted and mounted where hacoboot-sampler runs.

    Which of two tracers attached first moves both figures: at a uprobe
    the probe attached last runs first, at a tracepoint the program
    attached first does; so the tracer attached first reads the start after
    the other's handler and the end before it, and its figures come out
    shorter by the two handlers' lengths. The runs alternate which starts
    first, and the difference reported is the mean over both orders: what
    is left is where each reads its clock, not who came first."""
    if not ctx.bpftrace:
        return
    boots = ctx.sizes.boots
    states = ("unmounted", "mounted") if ctx.sizes.reps > 1 else ("unmounted",)
    reference: Starter = (REF, lambda name: start_reference(ctx, name))
    avgs: dict[str, list[float]] = {}
    by_state = {}
    runs = same_counts = 0
    for state in states:
        wrapper = (str(ctx.source / "scripts" / "tracefs-state.sh"), state)
        ours: Starter = (OURS, lambda name, wrapper=wrapper: start_ours(
            ctx, name, ["--haconiwa", ctx.launcher, "-f", "bpftrace", ctx.app], wrapper=wrapper))
        diffs, state_avgs, ended, same = both_orders(ctx, results, f"parity-{state}", reference, ours, parity_runs(ctx))
        by_state[state] = diffs
        runs += ended
        same_counts += same
        for key, values in state_avgs.items():
            avgs.setdefault(key, []).extend(values)
    if runs == 0:
        raise RuntimeError("no repetition where both tracers exited on SIGINT (see the notes)")
    for letter, w in (("g", "execve"), ("h", "listen")):
        results.add(Row(f"6{letter}. {w} avg, same {boots} boots, both tracers at once", "ms",
                        ours=avgs[f"{OURS}:{w}"], ref=avgs[f"{REF}:{w}"], goal=f"same counts: {same_counts}/{runs}",
                        met=same_counts == runs, decimals=3))
    letters = iter("ijkl")
    for state in states:
        for w, by_order in by_state[state].items():
            if (means := order_means(by_order)) is None:
                continue
            bpftrace_first, ours_first, balanced = means  # the reference is both_orders' FIRST
            results.add(Row(f"6{next(letters)}. {w} avg: hacoboot - bpftrace, both orders, tracefs {state}", "us",
                            ours=[balanced], ref_text="n/a (the difference)", ratio=False, goal="|x| <= 2 us",
                            met=abs(balanced) <= 2))
            results.notes.append(f"6i-6l: {w}, tracefs {state}: hacoboot - bpftrace {ours_first:+.1f} us when "
                                 f"hacoboot-sampler attached first, {bpftrace_first:+.1f} us when bpftrace did")
    if ctx.sizes.reps > 1:
        measure_reference_lag(ctx, results, reference)


def measure_reference_lag(ctx: Context, results: Results, reference: Starter) -> None:
    """How late the reference script reads its own clock: its clock-first
    copy (running.clock_first) against it, on the same boots, both orders,
    as rows 6i-6l. The copy reads `nsecs` on entry to each probe; the
    script reads it after its predicate (at execve: a map lookup, the
    filename's copy and its compare). Row 6i's difference is measured
    against the script as it is."""
    copy: Starter = ("clock-first copy", lambda name: start_reference(ctx, name, clock_first_copy=True))
    diffs, _, ended, _ = both_orders(ctx, results, "reference-lag", reference, copy, parity_runs(ctx))
    if ended == 0:
        raise RuntimeError("no repetition where both copies of the reference exited on SIGINT (see the notes)")
    for letter, (w, by_order) in zip("mn", diffs.items()):
        if (means := order_means(by_order)) is None:
            continue
        reference_first, copy_first, balanced = means
        results.add(Row(f"6{letter}. {w} avg: the reference's clock-first copy - the reference, both orders", "us",
                        ours=[balanced], ref_text="n/a (bpftrace against itself)", ratio=False))
        results.notes.append(f"6m-6n: {w}: clock-first copy - reference {reference_first:+.1f} us "
                             f"when the reference attached first, {copy_first:+.1f} us when the copy did")
