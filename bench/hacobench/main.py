"""Benchmarks of hacoboot-sampler against the reference bpftrace script.

Run through scripts/bench.sh (which installs packages and builds first):

    scripts/bench.sh [--quick]

Each measurement is a function in a module of this package named for it.
Within a repetition the tools run one after the other, in alternating order
(A B, then B A, ...), so slow drift of a noisy host hits both alike; the
table shows medians and [min-max] over the repetitions. Nothing here asserts
on time: goals are reported, and the exit status is 0 whether they are met
or not.

Standard library only. Needs root for everything that loads BPF; without it
only the user-side pipeline benchmark runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from .accuracy import measure_accuracy, measure_parity
from .capacity import measure_capacity, measure_pipeline
from .context import Context, FULL, QUICK
from .flood import measure_flood
from .host_overhead import measure_host_overhead, measure_sched_hooks
from .idle import measure_count_stop, measure_idle_and_interrupt
from .observer_effect import measure_observer_effect, measure_observer_pairs
from .per_hit import measure_usdt_hits
from .serve import measure_serve
from .startup import measure_launch
from .syscall_cost import measure_syscall_cost
from .table import Results, print_table


def foreign_tracers() -> str:
    """Tracers not started by this run: another hacoboot-sampler or bpftrace
    (an integration test, say) adds its own BPF programs to every figure."""
    mine = os.getpid()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            comm = (proc / "comm").read_text().strip()
            if comm in ("bpftrace", "hacoboot-sample"):  # comm: 15 characters
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid != mine:
                    found.append(f"{comm}[{proc.name}]")
        except (OSError, ValueError):
            pass
    return ", ".join(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one short repetition of each (CI smoke run)")
    parser.add_argument("--build-dir", type=Path, required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory (outputs, bench.log)")
    parser.add_argument("--only", metavar="MEASURE,...", help="only these measurements (e.g. measure_flood)")
    parser.add_argument("--previous-sampler", type=Path, metavar="BINARY",
                        help="the previous revision's hacoboot-sampler, compared in rows 1, 4, 7, 10 and 11")
    args = parser.parse_args()

    source = Path(__file__).resolve().parents[2]
    ctx = Context(source=source, build=args.build_dir.resolve(), work=Path(tempfile.mkdtemp(prefix="hacoboot-bench.")),
                  sizes=QUICK if args.quick else FULL, root=os.geteuid() == 0, bpftrace=shutil.which("bpftrace"),
                  previous=args.previous_sampler.resolve() if args.previous_sampler else None)
    results = Results()
    began = time.monotonic()
    print(f"hacoboot bench: {'quick' if args.quick else 'full'} run, {ctx.sizes.reps} repetitions "
          f"({ctx.sizes.session_reps} for accuracy/idle), nproc {os.cpu_count()}, kernel {os.uname().release}, "
          f"work dir {ctx.work}", flush=True)

    measurements = [measure_pipeline]
    if ctx.root:
        measurements = [measure_launch, measure_usdt_hits, measure_host_overhead, measure_sched_hooks, measure_capacity,
                        measure_pipeline, measure_accuracy, measure_parity, measure_idle_and_interrupt, measure_count_stop,
                        measure_serve, measure_flood, measure_observer_effect, measure_observer_pairs,
                        measure_syscall_cost]
    else:
        results.errors.append("not root: BPF measurements skipped (run scripts/bench.sh with sudo)")
    if args.only:
        wanted = args.only.split(",")
        measurements = [m for m in measurements if m.__name__ in wanted]
    if ctx.root and not ctx.bpftrace:
        results.errors.append("bpftrace not found: its column is empty")

    for measure in measurements:
        if others := foreign_tracers():
            results.errors.append(f"while {measure.__name__} started, other tracers ran on the host (figures may be "
                                  f"disturbed): {others}")
        t0 = time.monotonic()
        print(f"  {measure.__name__} ...", end="", flush=True)
        try:
            measure(ctx, results)
            print(f" {time.monotonic() - t0:.0f} s", flush=True)
        except Exception as e:  # a benchmark reports; it does not stop the others
            print(" failed", flush=True)
            results.errors.append(f"{measure.__name__}: {type(e).__name__}: {e}")
            results.keep_log = True

    print()
    results.notes.append("ratio = bpftrace median / hacoboot-sampler median")
    print_table(results)
    keep = args.keep or results.keep_log
    why = "" if args.keep else " (kept: something went wrong)" if keep else " (removed; --keep keeps it)"
    print(f"\ntotal {time.monotonic() - began:.0f} s; log of every command: {ctx.log}{why}")
    if not keep:
        shutil.rmtree(ctx.work, ignore_errors=True)
    return 0
