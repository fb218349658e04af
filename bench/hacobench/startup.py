"""1. Launch -> all probes live."""

from __future__ import annotations

import statistics
import time

from .context import Context, OURS, PREV, monotonic_ns, order
from .running import Process, bpftrace_argv, end_run, fill_btf_cache, launch_ours, reference_with_readiness
from .table import Results, Row, within_previous


def measure_launch(ctx: Context, results: Results) -> None:
    """From exec of the tracer to the first probe hit it reports, with a
    marker spawner already firing the probe every ~1 ms (so the figure is
    exact to ~1 ms). hacoboot-sampler: `-n 1` on the marker binary; the
    spawner's children are one-phase boots that end at once, and the first
    row of --events is the first hit seen. bpftrace: the reference script
    plus a marker probe attached last, which prints nsecs. Row 1 is an
    everyday start (kernel types from the BTF cache, filled by a first run
    beforehand); row 1b the first run on a new kernel (--btf-cache off:
    the whole kernel BTF is read). The previous revision's build, if given,
    as this one (goal: within 10 %)."""
    row = results.add(Row("1. launch -> all probes live", "ms", goal="<= 15 ms and >= 10x faster"
                          + (", <= 1.1x previous" if ctx.previous else "")))
    cold = results.add(Row("1b. launch, first run on a kernel (no BTF cache)", "ms"))
    fill_btf_cache(ctx, [])
    if ctx.previous:
        fill_btf_cache(ctx, [], PREV)
    for rep in range(ctx.sizes.reps):
        for tool in order(rep, ctx.tracers()):
            marker = Process(ctx, [ctx.marker, "spawn", "1000"], f"launch-marker-{rep}")
            try:
                time.sleep(0.05)
                if tool in (OURS, PREV):
                    tag, warm, first = ("ours", row.ours, cold.ours) if tool == OURS else ("prev", row.prev, cold.prev)
                    warm.append(launch_ours(ctx, f"launch-{tag}-{rep}", [], tool))
                    first.append(launch_ours(ctx, f"launch-cold-{tag}-{rep}", ["--btf-cache", "off"], tool))
                else:
                    p = Process(ctx, bpftrace_argv(ctx, [str(reference_with_readiness(ctx)), ctx.launcher,
                                                         ctx.app]), f"launch-ref-{rep}")
                    seen_ns = int(p.wait_for(r"BENCH-LIVE (\d+)", timeout=120).group(1))
                    row.ref.append((seen_ns - p.started_ns) / 1e6)
                    cold.ref.append(row.ref[-1])
                    end_run(p, results, f"1: bpftrace, repetition {rep}")
            finally:
                marker.kill()
    if row.ours:
        fast = statistics.median(row.ours) <= 15
        row.met = (fast and (not row.ref or statistics.median(row.ref) >= 10 * statistics.median(row.ours))
                   and within_previous(row))
    ready_after(ctx, results)


def ready_after(ctx: Context, results: Results) -> None:
    """From exec to the 'Tracing ...' line, printed once every probe is
    attached: with the default outputs, and with --format bpftrace alone,
    which reads no scheduler state and loads none of its hooks."""
    default = results.add(Row("1c. launch -> 'Tracing' line, default outputs", "ms"))
    lean = results.add(Row("1d. launch -> 'Tracing' line, --format bpftrace alone (no scheduler hooks)", "ms"))
    for rep in range(ctx.sizes.reps):
        for row, extra in order(rep, [(default, []), (lean, ["-f", "bpftrace"])]):
            p = Process(ctx, ctx.sampler_argv(OURS, ["--haconiwa", ctx.launcher, *extra, ctx.app]),
                        f"ready-{len(extra)}-{rep}")
            try:
                p.wait_for(r"Tracing Haconiwa boots in .*Hit Ctrl-C to end\.\n")
                row.ours.append((monotonic_ns() - p.started_ns) / 1e6)
                end_run(p, results, f"1c/1d: repetition {rep}")
            finally:
                p.kill()
