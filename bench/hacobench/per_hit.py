"""3. Cost per USDT hit in the traced process."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from .context import Context, OURS, order
from .running import bpftrace_argv, run, value
from .table import Results, Row


def marker_cpu_per_hit(ctx: Context, kind: str, mode: str, n: int, summary: Path | None = None) -> float:
    """Least CPU time per hit over blocks of `marker MODE N`: untraced, under
    hacoboot-sampler (--run; its JSON summary to `summary`), under the
    reference script (-c) or under an empty bpftrace program ("floor")."""
    command = f"{ctx.marker} {mode} {n}"
    if kind == "untraced":
        out = run(ctx, [ctx.marker, mode, str(n)])
    elif kind == OURS:
        out = run(ctx, [ctx.sampler, "-q", "--haconiwa", ctx.marker, "-f", "json", "-o", str(summary), "--run", command])
    elif kind == "reference":
        out = run(ctx, bpftrace_argv(ctx, ["-c", command, str(ctx.reference), ctx.marker, ctx.app]))
    else:
        program = f"usdt:{ctx.marker}:haconiwa:bootstrap_phase_pass {{ }}"
        out = run(ctx, bpftrace_argv(ctx, ["-c", command, "-e", program]))
    return value(r"min_cpu_ns_per_hit=([\d.]+)", out)


def measure_usdt_hits(ctx: Context, results: Results) -> None:
    """`marker hits N` fires the probe N times with a launch's phase numbers
    and hpid = its pid, and reports its CPU time per hit (the uprobe trap and
    the BPF programs run in it), the least over blocks of 10,000 hits: CPU
    time and the least block leave out what other tasks on a noisy host take,
    and keep what the tracer adds to every hit. Untraced, under hacoboot-sampler (--run), under the
    reference script (-c) and under an empty bpftrace program on the same
    probe, the floor of any USDT tracer. The tool's lost_events of these runs
    feed measurement 5."""
    n = ctx.sizes.hits
    kinds = ["untraced", OURS] + (["reference", "floor"] if ctx.bpftrace else [])
    got: dict[str, list[float]] = {k: [] for k in kinds}
    above_floor: dict[str, list[float]] = {OURS: [], "reference": []}
    for rep in range(ctx.sizes.reps):
        this_rep: dict[str, float] = {}
        for kind in order(rep, kinds):
            summary = ctx.file(f"hits-{rep}.json")
            this_rep[kind] = marker_cpu_per_hit(ctx, kind, "hits", n, summary)
            got[kind].append(this_rep[kind])
            if kind == OURS:
                results.tool_lost.append(int(json.loads(summary.read_text())["lost_events"]))
        if "floor" in this_rep:
            above_floor[OURS].append(this_rep[OURS] - this_rep["floor"])
            above_floor["reference"].append(this_rep["reference"] - this_rep["floor"])
    results.tool_lost_hits = n

    untraced = statistics.median(got["untraced"])
    floor = f"; empty-program floor {statistics.median(got['floor']):.0f}" if got.get("floor") else ""
    results.add(Row(f"3. USDT hit, CPU in traced process [untraced {untraced:.1f}{floor}]", "ns/hit",
                    ours=got[OURS], ref=got.get("reference", []), decimals=0))
    if got.get("floor"):
        results.add(Row("3b. USDT hit above the empty-program floor, same repetition", "ns/hit",
                        ours=above_floor[OURS], ref=above_floor["reference"], decimals=0))
