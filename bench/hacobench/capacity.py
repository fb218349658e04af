"""5. Event capacity: BPF side and user-side pipeline."""

from __future__ import annotations

import json
import os
import statistics

from .context import Context
from .running import run, value
from .table import Results, Row


def measure_capacity(ctx: Context, results: Results) -> None:
    """BPF side: hacoboot-bench-capacity loads the tool's BPF object through
    its Tracer, runs one producer per CPU and counts every record received;
    received + lost (counted in BPF) must equal produced. Two producers: the
    USDT probe (`marker hits N`), whose uprobe trap (~5 us here, measurement
    3) bounds any USDT tracer, and a container calling listen(2) N times
    (`marker listens N`), each call an event through the syscall tracepoint.
    The rate is received events over the producers' wall time, so it is
    bounded by how fast the producers run and by their share of the CPUs;
    per second of the producers' CPU time is the figure that does not depend
    on the host's other load. Each run also runs the producers untraced
    first: the CPU tracing adds to them, per event, is the kernel side's own
    cost (hook, program, ring buffer), and one core spent on it alone
    delivers 1e9 / that events a second."""
    producers = os.cpu_count() or 1
    for mode, producer, name in (("usdt", "USDT", "5a"), ("listen", "listen(2)", "5f")):
        rate: list[float] = []
        per_cpu: list[float] = []
        tool_ns: list[float] = []
        balanced = 0
        lost_total = 0
        for rep in range(ctx.sizes.reps):
            out = run(ctx, [ctx.capacity, ctx.marker, str(producers), str(ctx.sizes.capacity_hits), mode])
            rate.append(value(r"events_per_s=([\d.]+)", out))
            per_cpu.append(value(r"events_per_producer_cpu_s=([\d.]+)", out))
            tool_ns.append(value(r"tool_ns_per_event=([-\d.]+)", out))
            balanced += int(value(r"balanced=(\d)", out))
            lost_total += int(value(r"lost=(\d+)", out))
        ok = balanced == ctx.sizes.reps
        results.add(Row(f"{name}. BPF side delivered, {producers} {producer} producers, wall", "events/s", ours=rate,
                        ratio=False, goal="received+lost = produced", met=ok, decimals=0))
        results.add(Row(f"{name}'. BPF side delivered, {producer} producers, per producer CPU-second", "events/s",
                        ours=per_cpu, ratio=False, decimals=0))
        if mode == "listen":
            results.add(Row(f"{name}''. tracing's CPU per event, {producer} producers (traced - untraced)", "ns",
                            ours=tool_ns, ratio=False, decimals=0))
            per_core = [1e9 / ns for ns in tool_ns if ns > 0]
            results.add(Row(f"{name}'''. events one core of that work delivers (1e9 / {name}'')", "events/s",
                            ours=per_core, ratio=False, goal=">= 1 M/s",
                            met=bool(per_core) and statistics.median(per_core) >= 1e6, decimals=0))
        results.notes.append(
            f"{name}: received + lost == produced in {balanced}/{ctx.sizes.reps} runs of {producers} x "
            f"{ctx.sizes.capacity_hits} {producer} events; {lost_total} lost in total.")
    results.notes.append(
        f"In measurement 3, the tool itself reported lost_events = "
        f"{', '.join(map(str, results.tool_lost)) or 'n/a'} for {results.tool_lost_hits} hits per run.")


def measure_pipeline(ctx: Context, results: Results) -> None:
    """User side: Google Benchmark over the tool's Pipeline (decode_event ->
    BootTracker -> Summary) on synthetic records of realistic boots (bench/pipeline_bench.cpp);
    one value per Google Benchmark repetition."""
    out_json = ctx.file("pipeline.json")
    run(ctx, [ctx.pipeline, f"--benchmark_min_time={ctx.sizes.pipeline_min_time}",
              f"--benchmark_repetitions={ctx.sizes.reps}", "--benchmark_report_aggregates_only=false",
              f"--benchmark_out={out_json}", "--benchmark_out_format=json"])
    runs: dict[str, list[float]] = {}
    for b in json.loads(out_json.read_text())["benchmarks"]:
        if b.get("run_type") == "iteration" and "items_per_second" in b:
            runs.setdefault(b["run_name"], []).append(b["items_per_second"])
    labels = {
        "BM_Pipeline/inflight:1": "5b. pipeline decode->track->summary, 1 boot in flight",
        "BM_Pipeline/inflight:64": "5c. pipeline, 64 boots in flight",
        "BM_PipelineWithRows/inflight:1": "5d. pipeline + --events TSV rows",
        "BM_Decode": "5e. decode_event alone",
    }
    for name, label in labels.items():
        if name in runs:
            goal = ">= 5 M/s" if name.startswith("BM_Pipeline/") else "report"
            met = statistics.median(runs[name]) >= 5e6 if goal != "report" else None
            results.add(Row(label, "events/s", ours=runs[name], ratio=False, goal=goal, met=met, decimals=0))
