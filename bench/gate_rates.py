#!/usr/bin/env python3
"""How often the regression gate is right, quiet and on a busy runner.

Run through scripts/bench.sh (which installs packages and builds first):

    scripts/bench.sh --gate-rates [--runs N] [--boots N] [--work-ms MS]

One baseline of BOOTS demo boots is traced on a quiet machine, each boot
doing WORK_MS ms of CPU work before phase 13 (--burn 13:WORK_MS). Then RUNS
runs of BOOTS boots each are traced per condition, the conditions
interleaved so that drift hits them alike:

  same code     the baseline's work again: any REGRESSED is a false alarm;
  +20% CPU      the phase's work 20 % larger as CPU burn (--burn 13:1.2W);
  +20% sleep    the same work plus 20 % of it asleep (--sleep 13:0.2W);

first on a quiet machine, then while as many busy loops run as the machine
has CPUs (a shared CI runner). Every run's summary is judged against the
baseline with `compare`, once per gate figure (noise-free, the default, and
wall), at the default limit (+10 %) and alpha (0.05): the same verdict
--baseline gives. The table counts the verdicts; the goals: at most one
false REGRESSED in RUNS runs of the same code under load, and at least
RUNS - 1 REGRESSED of each slowdown, quiet and under load.

A benchmark, not a test: it reports, and exits 0 whether goals are met or
not. Needs root (it traces). Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FIGURES = ("noise-free", "wall")
VERDICTS = {0: "passed", 3: "REGRESSED", 5: "inconclusive"}


@dataclass
class Setup:
    sampler: str
    launcher: str
    app: str
    work: Path
    boots: int
    work_ms: int

    def trace(self, name: str, launcher_args: list[str]) -> Path:
        """BOOTS boots with these launcher arguments; their JSON summary."""
        out = self.work / f"{name}.json"
        run = shlex.join([self.launcher, "-n", str(self.boots), *launcher_args, "--", self.app])
        subprocess.run([self.sampler, "-q", "--haconiwa", self.launcher, "--btf-cache", str(self.work / "btf"),
                        "-f", "json", "-o", str(out), "--run", run, self.app], check=True, timeout=600)
        return out

    def judge(self, baseline: Path, summary: Path, figure: str) -> tuple[str, float | None]:
        """The gate's verdict and listen's estimated shift in %."""
        r = subprocess.run([self.sampler, "compare", str(baseline), str(summary), "--gate-on", figure],
                           capture_output=True, text=True, timeout=60)
        verdict = VERDICTS.get(r.returncode, f"exit {r.returncode}")
        shift = re.search(r"^listen\s+\S+\s+\S+ \S+\s+\S+ \S+\s+([-+][0-9.]+)%", r.stdout, re.M)
        return verdict, float(shift.group(1)) if shift else None


class BusyLoops:
    """As many CPU-bound loops as CPUs, for the duration of a `with`."""

    def __init__(self, count: int):
        self.count = count
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> BusyLoops:
        self.procs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]) for _ in range(self.count)]
        time.sleep(0.5)  # let the scheduler spread them
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


@dataclass
class Tally:
    verdicts: dict[str, int] = field(default_factory=dict)
    shifts: list[float] = field(default_factory=list)

    def add(self, verdict: str, shift: float | None) -> None:
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1
        if shift is not None:
            self.shifts.append(shift)


def finish(work: Path, began: float, keep: bool) -> None:
    """The run's last line; the summaries go unless kept."""
    print(f"\ntotal {time.monotonic() - began:.0f} s; summaries in {work}" + ("" if keep else " (removed)"))
    if not keep:
        shutil.rmtree(work, ignore_errors=True)


def conditions(work_ms: int) -> list[tuple[str, list[str], bool]]:
    """(name, launcher arguments, slower?) of each condition."""
    extra = max(1, round(work_ms * 0.2))
    return [
        ("same code", ["--burn", f"13:{work_ms}"], False),
        ("+20% CPU", ["--burn", f"13:{work_ms + extra}"], True),
        ("+20% sleep", ["--burn", f"13:{work_ms}", "--sleep", f"13:{extra}"], True),
    ]


def goal_of(slower: bool, load: str, figure: str, runs: int, tally: Tally) -> str:
    regressed = tally.verdicts.get("REGRESSED", 0)
    if slower:
        return f"REGRESSED >= {runs - 1}: {'met' if regressed >= runs - 1 else 'NOT met'}"
    if load == "busy" and figure == "noise-free":
        return f"REGRESSED <= 1: {'met' if regressed <= 1 else 'NOT met'}"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=20, help="runs per condition and load (default 20)")
    parser.add_argument("--boots", type=int, default=20, help="boots per run (default 20)")
    parser.add_argument("--work-ms", type=int, default=10, help="the phase's CPU work in the baseline (default 10)")
    parser.add_argument("--keep", action="store_true", help="keep the summaries")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("gate rates: tracing needs root (sudo scripts/bench.sh --gate-rates)", file=sys.stderr)
        return 0
    build = args.build_dir.resolve()
    work = Path(tempfile.mkdtemp(prefix="hacoboot-gate-rates."))
    setup = Setup(sampler=str(build / "hacoboot-sampler"), launcher=str(build / "demo" / "hacoboot-launcher"),
                  app=str(build / "demo" / "hacoboot-demo-app"), work=work, boots=args.boots, work_ms=args.work_ms)
    cpus = os.cpu_count() or 1
    began = time.monotonic()
    print(f"gate rates: {args.runs} runs of {args.boots} boots per condition, work {args.work_ms} ms before phase 13, "
          f"{cpus} busy loops under load, kernel {os.uname().release}", flush=True)

    baseline = setup.trace("baseline", conditions(args.work_ms)[0][1])
    tallies: dict[tuple[str, str, str], Tally] = {}
    for load in ("quiet", "busy"):
        with BusyLoops(cpus if load == "busy" else 0):
            for i in range(args.runs):
                for name, launcher_args, _ in conditions(args.work_ms):
                    summary = setup.trace(f"{load}-{name.replace(' ', '_').replace('%', '')}-{i}", launcher_args)
                    for figure in FIGURES:
                        tallies.setdefault((name, load, figure), Tally()).add(*setup.judge(baseline, summary, figure))
        print(f"  {load}: done at {time.monotonic() - began:.0f} s", flush=True)

    print(f"\n{'condition':<12} {'load':<6} {'gate on':<11} {'passed':>6} {'REGRESSED':>9} {'inconcl.':>8}  "
          f"{'listen shift, median [min-max]':<32} goal")
    for (name, load, figure), tally in tallies.items():
        slower = next(s for n, _, s in conditions(args.work_ms) if n == name)
        v = tally.verdicts
        shifts = (f"{statistics.median(tally.shifts):+.1f}% [{min(tally.shifts):+.1f}, {max(tally.shifts):+.1f}]"
                  if tally.shifts else "-")
        print(f"{name:<12} {load:<6} {figure:<11} {v.get('passed', 0):>6} {v.get('REGRESSED', 0):>9} "
              f"{v.get('inconclusive', 0):>8}  {shifts:<32} {goal_of(slower, load, figure, args.runs, tally)}")
    others = sorted({k for t in tallies.values() for k in t.verdicts if k not in VERDICTS.values()})
    if others:
        print(f"other exit statuses: {', '.join(others)}")
    finish(work, began, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
