"""8. A flood of phase events from no launch the tracer saw start."""

from __future__ import annotations

import json
import statistics
import time

from .context import Context, OURS, order
from .per_hit import marker_cpu_per_hit
from .running import Process, end_run, fill_btf_cache, start_ours, vm_hwm_mb
from .table import Results, Row, fmt


def measure_flood(ctx: Context, results: Results) -> None:
    """Phase events whose hpid is no launch the tracer saw start (a process
    passing made-up hpids, or launches begun before tracing). 8a: `marker
    flood N` fires the probe N times, each with a new such hpid; CPU per hit
    as in measurement 3 (least over blocks of 10,000), untraced, under
    hacoboot-sampler and under the reference script; the figure is what
    tracing adds to the untraced run of the same repetition. 8b/8c:
    `launcher --flood N` does the same in the demo launcher while `launcher
    -n BOOTS -j 2` boots the demo app, under hacoboot-sampler watching the
    launcher: its summary must show every real boot whole, no event lost and
    every flood hit counted, and its peak RSS (VmHWM before Ctrl-C) must stay
    small: the flood must not become boots."""
    n, boots = ctx.sizes.flood_hits, ctx.sizes.boots
    kinds = ["untraced", OURS] + (["reference"] if ctx.bpftrace else [])
    added: dict[str, list[float]] = {OURS: [], "reference": []}
    hwm: list[float] = []
    lost: list[float] = []
    whole = 0
    counted = 0
    # As everyday runs (row 2's memory, not a first run's), in a cache of its
    # own: a tool with another BPF object replaces the extract in the default one.
    cache = ctx.file("flood-btf-cache")
    cache.mkdir(mode=0o700, exist_ok=True)
    fill_btf_cache(ctx, ["--btf-cache", str(cache)])
    for rep in range(ctx.sizes.reps):
        summary = ctx.file(f"flood-{rep}.json")
        cpu = {kind: marker_cpu_per_hit(ctx, kind, "flood", n, summary) for kind in order(rep, kinds)}
        counted += json.loads(summary.read_text()).get("untracked_phase_events") == n
        for kind in added:
            if kind in cpu:
                added[kind].append(cpu[kind] - cpu["untraced"])

        p = start_ours(ctx, f"flood-ours-{rep}", ["--haconiwa", ctx.launcher, "--btf-cache", str(cache), "-f", "json",
                                                  "-o", str(summary), ctx.app])
        try:
            real = Process(ctx, [ctx.launcher, "-n", str(boots), "-j", "2", "--", ctx.app], f"flood-boots-{rep}")
            flood = Process(ctx, [ctx.launcher, "--flood", str(n)], f"flood-{rep}")
            flood.wait()
            real.wait()
            if real.proc.returncode != 0 or flood.proc.returncode != 0:
                raise RuntimeError(f"launcher exited {real.proc.returncode}, flood {flood.proc.returncode}")
            time.sleep(0.2)  # the last events reach the reader
            hwm.append(vm_hwm_mb(p.pid))
            end_run(p, results, f"9: hacoboot-sampler, repetition {rep}")
        finally:
            p.kill()
        s = json.loads(summary.read_text())
        lost.append(s["lost_events"])
        b = s["boots"]
        whole += b["started"] == b["listen"] == boots and b["incomplete"] == 0 and b["unstarted"] == 0
        counted += s.get("untracked_phase_events") == n
    reps = ctx.sizes.reps
    ours, ref = added[OURS], added["reference"]
    results.add(Row(f"9a. flood of {fmt(n, 0)} made-up hpids: CPU tracing adds per hit", "ns/hit", ours=ours,
                    ref=ref, goal="<= 1.15x bpftrace", decimals=0,
                    met=bool(ours) and (not ref or statistics.median(ours) <= 1.15 * statistics.median(ref))))
    results.add(Row(f"9b. events lost, {boots} real boots alongside the flood", "events", ours=lost,
                    ref_text="n/a (no count)", ratio=False, goal=f"0; boots whole: {whole}/{reps}",
                    met=whole == reps and not any(lost), decimals=0))
    results.add(Row("9c. peak RSS of the tracer under that flood (VmHWM at Ctrl-C)", "MB", ours=hwm,
                    ref_text="see row 2", ratio=False, goal="< 16 MB", met=bool(hwm) and max(hwm) < 16))
    results.notes.append(f"9: every flood hit counted in untracked_phase_events in {counted}/{2 * reps} runs")
