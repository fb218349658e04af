"""11. What syscalls per step (--syscalls) cost: the host, the boots, the start."""

from __future__ import annotations

import json
import shutil
import statistics

from .context import Context, OURS, PREV, order
from .observer_effect import later_than_untraced, times_to_listen_ms
from .running import Process, end_run, launch_ours, run, start_ours, value
from .table import Results, Row, cell

PLAIN = "without --syscalls"
SYSCALLS = "--syscalls"
PREV_SYSCALLS = "previous revision --syscalls"
STRACE = "strace -f -c"


def start(ctx: Context, condition: str, name: str) -> Process | None:
    """The tracer of `condition`, live and idle, watching the demo launcher; None untraced."""
    if condition == "untraced" or condition == STRACE:
        return None
    extra = [] if condition == PLAIN else [SYSCALLS]
    return start_ours(ctx, name, ["--haconiwa", ctx.launcher, "-o", "/dev/null", *extra, ctx.app],
                      PREV if condition == PREV_SYSCALLS else OURS)


def getppid_ns(ctx: Context) -> float:
    """Least CPU per getppid over blocks of 10,000, the least of three processes (as row 4b)."""
    return min(value(r"min_cpu_ns_per_iteration=([\d.]+)",
                     run(ctx, [ctx.hostload, "syscalls", str(ctx.sizes.syscalls)])) for _ in range(3))


def getppid_ns_while_booting(ctx: Context, name: str) -> float:
    """The same while the demo launcher boots one container after another
    (a boot in flight nearly all the time): the least process of three."""
    boots = Process(ctx, [ctx.launcher, "-n", "100000", "--", ctx.app], f"{name}-boots")
    try:
        return getppid_ns(ctx)
    finally:
        boots.kill()


def boots_ms(ctx: Context, condition: str, name: str, results: Results) -> float:
    """The median time to listen of `observer_boots` sequential boots (the
    launcher's own --truth clock), under `condition`."""
    truth = ctx.file(f"{name}.truth")
    boot = [ctx.launcher, "-n", str(ctx.sizes.observer_boots), "--truth", str(truth), "--", ctx.app]
    p = start(ctx, condition, name)
    try:
        run(ctx, ["strace", "-f", "-c", "-o", "/dev/null", *boot] if condition == STRACE else boot)
        if p:
            end_run(p, results, f"11: {condition}, {name}")
    finally:
        if p:
            p.kill()
    return statistics.median(times_to_listen_ms(truth))


def map_fill(ctx: Context, rep: int, results: Results) -> dict[str, dict[str, int]]:
    """kernel_maps of the JSON summary of `observer_boots` boots, 8 at a time,
    each with mounts, fsyncs and a network namespace (many syscalls, stacks
    and samples), under --syscalls --kernel-profile."""
    summary = ctx.file(f"syscost-maps-{rep}.json")
    p = start_ours(ctx, f"syscost-maps-{rep}", ["--haconiwa", ctx.launcher, "--syscalls", "--kernel-profile",
                                                "--format", "json", "-o", str(summary), ctx.app])
    try:
        run(ctx, [ctx.launcher, "-n", str(ctx.sizes.observer_boots), "-j", "8", "--fsync", "13:2",
                  "--unshare-net", "12", "--mounts", "17:10", "--", ctx.app])
        if not end_run(p, results, f"11e: repetition {rep}"):
            return {}
    finally:
        p.kill()
    return json.loads(summary.read_text()).get("kernel_maps", {})


def measure_syscall_cost(ctx: Context, results: Results) -> None:
    """The cost of syscalls per step: the raw syscall hooks are attached for
    the whole run with --syscalls, so every syscall of the host runs a
    program. Rows: getppid's CPU per call with no boot in flight (the hooks'
    early return) and while boots run (threads accounted: one lookup more
    per unrelated call), against the same build without --syscalls; the
    observer effect on the demo boots' time to listen, against the same
    boots without --syscalls and under `strace -f -c` (what an operator
    runs today to get the same counts); launch -> probes live with it."""
    conditions = ["untraced", PLAIN, SYSCALLS] + ([PREV_SYSCALLS] if ctx.previous else [])
    idle: dict[str, list[float]] = {c: [] for c in conditions}
    busy: dict[str, list[float]] = {c: [] for c in conditions if c != "untraced"}
    for rep in range(ctx.sizes.reps):
        for condition in order(rep, conditions):
            p = start(ctx, condition, f"syscost-{rep}-{len(idle[condition])}")
            try:
                idle[condition].append(getppid_ns(ctx))
                if p:
                    busy[condition].append(getppid_ns_while_booting(ctx, f"syscost-busy-{rep}"))
                    end_run(p, results, f"11: {condition}, repetition {rep}")
            finally:
                if p:
                    p.kill()
    untraced = statistics.median(idle["untraced"])

    def slowdown(condition: str) -> list[float]:
        return [(ns / base - 1) * 100 for ns, base in zip(idle[condition], idle["untraced"])]

    def added(condition: str) -> list[float]:
        return [ns - plain for ns, plain in zip(busy[condition], busy[PLAIN])]

    results.add(Row(f"11a. getppid, no boot in flight, slowdown with --syscalls [untraced {untraced:.0f} ns]", "%",
                    ours=slowdown(SYSCALLS), prev=slowdown(PREV_SYSCALLS) if ctx.previous else [], ratio=False,
                    ref_text=f"{PLAIN}: {cell(slowdown(PLAIN), 1)}"))
    results.add(Row("11b. getppid while boots run: added CPU per call against the same build " + PLAIN, "ns",
                    ours=added(SYSCALLS), prev=added(PREV_SYSCALLS) if ctx.previous else [], ratio=False,
                    ref_text="n/a", decimals=1))

    observer = ["untraced", PLAIN, SYSCALLS] + ([STRACE] if shutil.which("strace") else [])
    later, base = later_than_untraced(
        ctx, observer, lambda c, rep: boots_ms(ctx, c, f"syscost-observer-{c.split()[0].strip('-')}-{rep}", results))
    row = results.add(Row(f"11c. observer effect with --syscalls: later listen per boot [untraced "
                          f"{statistics.median(base):.2f} ms]", "us", ours=later[SYSCALLS], ratio=False,
                          ref_text=f"{PLAIN}: {cell(later[PLAIN], 0)}; {STRACE}: {cell(later.get(STRACE, []), 0)}",
                          goal=f"<= {PLAIN} + 1 % of the boot, >= 10x below {STRACE}", decimals=0))
    if later.get(STRACE):
        ours, plain, strace = (statistics.median(later[c]) for c in (SYSCALLS, PLAIN, STRACE))
        row.met = ours <= plain + statistics.median(base) * 10 and strace >= 10 * max(ours, 1.0)

    probes_live = results.add(Row("11d. launch -> all probes live with --syscalls", "ms", ratio=False,
                                  ref_text="n/a"))
    marker = Process(ctx, [ctx.marker, "spawn", "1000"], "syscost-launch-marker")
    try:
        for rep in range(ctx.sizes.reps):
            probes_live.ours.append(launch_ours(ctx, f"syscost-launch-{rep}", [SYSCALLS]))
    finally:
        marker.kill()
    fill = results.add(Row(f"11e. fullest aggregation map, {ctx.sizes.observer_boots} boots 8 at a time "
                           "(--kernel-profile; peak entries, of capacity)", "%", ratio=False, ref_text="n/a",
                           goal="< 75 % (the table's note)"))
    peaks: dict[str, list[int]] = {}
    for rep in range(ctx.sizes.reps):
        maps = map_fill(ctx, rep, results)
        if maps:
            fill.ours.append(max(100 * m["peak"] / m["capacity"] for m in maps.values()))
        for name, m in maps.items():
            peaks.setdefault(f"{name} (of {m['capacity']})", []).append(m["peak"])
    if fill.ours:
        fill.met = max(fill.ours) < 75
        results.notes.append("11e: peak entries per map: " +
                             "; ".join(f"{name}: {cell([float(v) for v in values], 0)}" for name, values in peaks.items()))
    if not shutil.which("strace"):
        results.notes.append("11c: strace not installed: no strace column")
