#!/usr/bin/env python3
"""How often the gate names the step that moved, and never one that did not.

Run through scripts/bench.sh (which installs packages and builds first):

    scripts/bench.sh --step-rates [--interleave] [--runs N] [--boots N]
                     [--conditions NAME,...] [--loads quiet,busy]

RUNS runs of BOOTS demo boots each are traced per condition, each after its
own baselines (the conditions in turn, so that drift hits them alike), and
judged against its baseline with `compare`
(noise-free figures, the default):

  same code     nothing added: any step called moved is a false call;
  CPU           1 ms of CPU before phase 14 (--burn 14:1): step 14, CPU;
  CPU 4 ms      the same, 4 ms (--burn 14:4): work larger than listen's
                drift between runs, which the 1 ms rows' shares carry
                (not a goal: it tells the drift from the attribution);
  sleep         1 ms asleep before phase 14 (--sleep 14:1): step 14, sleep;
  fsync         4 writes + fsync before phase 14 (--fsync 14:4): step 14, I/O
                (a filesystem that writes through; on tmpfs there is no I/O);
  mounts        200 tmpfs mounts before phase 17 (--mounts 17:200): step 17, CPU;
  moved work    1 ms of CPU moved from before phase 15 (a baseline of its
                own, --burn 15:1) to before phase 14 (--burn 14:1): steps 14
                and 15 named with opposite signs, listen neither REGRESSED
                nor improved.

first on a quiet machine, then while as many busy loops run as the machine has
CPUs, baselines and conditions alike.

--interleave traces each run and a baseline of its own at once instead: two
tracers, each on its own copy of the launcher, the two launchers' boots
alternated (baseline, new, new, baseline, ...), as docs/ci-gate.md's A/B
comparison of two builds does. The host's speed drifts over seconds (a boot's
time to listen by a millisecond and more between runs of the same code), and
runs traced one after the other carry that drift into every share; boots
alternated share it. Traced one after the other, one more row judges the busy
same-code runs against the last quiet baseline: a runner busier than the
baseline's, whose CPU contention stretches CPU time where the noise-free figure
cannot see it (reported, not a goal; the milestones' verdict on it is
gate-rates'). The goals: the step with the added work named first on listen's
path with at least 80 % of the shift as the gate shares it (of the moved
steps' total when that explains listen's shift; the script also prints the
step's shift over listen's own estimate), in the right state (among the states the
gate names: each that moved by a third of the largest), in at least RUNS - 1 of
RUNS runs; same code: a step called moved in at most 1 run of RUNS.

How many boots: a share needs listen's own shift measured as sharply as the
moved step's, and the demo service's start scatters listen by about 0.7 ms a
boot. With 20 boots a side listen's interval is about +-0.9 ms wide, and 1 ms
of work in a step is then not always told from the rest; the gate's own report
says how many boots would tell (BENCHMARKS.md: 80 a side).

A benchmark, not a test: it reports, and exits 0 whether goals are met or not.
Needs root (it traces). Standard library only.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from gate_rates import BusyLoops, Setup, finish


@dataclass
class Condition:
    name: str
    launcher_args: list[str]
    step: str | None = None  # the step expected first: "container 14 CONTAINER_RLIMIT_SETUP"
    state: str | None = None  # its state: "CPU", "sleep", "I/O"
    baseline: str = "plain"  # which baseline it is judged against


CONDITIONS = [
    Condition("same code", []),
    Condition("CPU", ["--burn", "14:1"], "container 14 CONTAINER_RLIMIT_SETUP", "CPU"),
    Condition("CPU 4 ms", ["--burn", "14:4"], "container 14 CONTAINER_RLIMIT_SETUP", "CPU"),
    Condition("sleep", ["--sleep", "14:1"], "container 14 CONTAINER_RLIMIT_SETUP", "sleep"),
    # main adds --io-dir: the benchmark's own directory, on a disk that writes through.
    Condition("fsync", ["--fsync", "14:4"], "container 14 CONTAINER_RLIMIT_SETUP", "I/O"),
    Condition("mounts", ["--mounts", "17:200"], "container 17 CONTAINER_UID_MAPPING_SETUP", "CPU"),
    Condition("moved work", ["--burn", "14:1"], None, None, baseline="burn15"),
]
BASELINES = {"plain": [], "burn15": ["--burn", "15:1"]}

MOVED = re.compile(r"moved: (.*)$", re.M)
_STATE = r"(?:CPU|run queue|sleep|I/O) [-+][0-9.]+ (?:s|ms|us|ns)"
STEP = re.compile(r"^(?P<step>.+?) (?P<shift>[-+][0-9.]+ \S+) \[[^]]*\](?: own time)?"
                  rf"(?: \((?P<share>-?\d+)% of the (?:shift|moved total)\))?(?:, (?P<states>{_STATE}(?: and {_STATE})*))?")
LISTEN_SHIFT = re.compile(r"^  listen: ([-+][0-9.]+) (s|ms|us|ns) \[")
MS_PER = {"s": 1e3, "ms": 1.0, "us": 1e-3, "ns": 1e-6}
STATE = re.compile(r"(CPU|run queue|sleep|I/O) [-+]")


def ms(value: str, unit: str) -> float:
    """A duration as the report prints it ("+1.25", "ms"), in ms."""
    return float(value) * MS_PER[unit]


class Interleaved:
    """Baseline and new boots alternated, each launcher traced by a tracer of its own."""

    def __init__(self, setup: Setup):
        self.setup = setup
        self.launchers = {side: setup.work / f"launcher-{side}" for side in ("baseline", "new")}
        for path in self.launchers.values():
            shutil.copy2(setup.launcher, path)  # a file of its own: a uprobe follows the inode
        self.ready = setup.work / "baseline-live"
        self.release = setup.work / "baseline-release"
        os.mkfifo(self.release)

    def tracer(self, side: str, out: Path, run: str) -> list[str]:
        return [self.setup.sampler, "-q", "--haconiwa", str(self.launchers[side]), "--btf-cache",
                str(self.setup.work / "btf"), "-f", "json", "-o", str(out), "--run", run, self.setup.app]

    def boot(self, side: str, launcher_args: list[str]) -> str:
        return shlex.join([str(self.launchers[side]), "-n", "1", *launcher_args, "--", self.setup.app])

    def release_baseline(self, waiting: subprocess.Popen) -> None:
        """Ends the baseline's run command, once it waits on the FIFO (unless its tracer is gone)."""
        deadline = time.monotonic() + 60
        while waiting.poll() is None and time.monotonic() < deadline:
            try:
                os.close(os.open(self.release, os.O_WRONLY | os.O_NONBLOCK))
                return
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: no reader yet
                    raise
            time.sleep(0.01)

    def trace(self, name: str, baseline_args: list[str], launcher_args: list[str]) -> tuple[Path, Path]:
        """BOOTS boots of each, alternated; the baseline's and the new run's summaries."""
        base, new = self.setup.work / f"{name}-baseline.json", self.setup.work / f"{name}.json"
        self.ready.unlink(missing_ok=True)
        # The baseline's tracer runs until released: a FIFO, so that no process polls meanwhile.
        waiting = subprocess.Popen(self.tracer("baseline", base, f"touch {shlex.quote(str(self.ready))} && "
                                                                 f": < {shlex.quote(str(self.release))}"))
        try:
            deadline = time.monotonic() + 60
            while not self.ready.exists():
                if waiting.poll() is not None:
                    raise RuntimeError(f"the baseline's tracer exited {waiting.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError("the baseline's tracer was not live within 60 s")
                time.sleep(0.01)
            pairs = (f"{self.boot('baseline', baseline_args)} && {self.boot('new', launcher_args)}",
                     f"{self.boot('new', launcher_args)} && {self.boot('baseline', baseline_args)}")
            boots = " && ".join(pairs[i % 2] for i in range(self.setup.boots))
            # A minute to start, and 5 s for each of the 2 x BOOTS boots (a boot takes tens of ms).
            subprocess.run(self.tracer("new", new, boots), check=True, timeout=60 + 2 * self.setup.boots * 5)
        finally:
            self.release_baseline(waiting)
            try:
                waiting.wait(timeout=60)
            except subprocess.TimeoutExpired:
                waiting.kill()  # never left attached behind a failed run
                waiting.wait()
        if waiting.returncode != 0:
            raise RuntimeError(f"the baseline's tracer exited {waiting.returncode}")
        return base, new


def judge(setup: Setup, baseline: Path, summary: Path) -> str:
    """The gate's report of `summary` against `baseline`."""
    return subprocess.run([setup.sampler, "compare", str(baseline), str(summary)], capture_output=True, text=True,
                          timeout=60).stdout


def steps_named(line: str) -> list[dict[str, str]]:
    """The moved steps of a "  listen: ..." line, in order."""
    moved = MOVED.search(line)
    if not moved:
        return []
    return [m.groupdict() for part in moved.group(1).split("; ") if (m := STEP.match(part))]


@dataclass
class Tally:
    runs: int = 0
    right: int = 0  # the goal's outcome
    shares: list[int] = field(default_factory=list)
    listen_shifts: list[float] = field(default_factory=list)  # ms, same code: listen's drift
    # The first step's shift over listen's own estimate, in %, whatever the gate shared it of.
    own_shares: list[float] = field(default_factory=list)
    firsts: dict[str, int] = field(default_factory=dict)
    misses: dict[str, int] = field(default_factory=dict)  # why a run was not right
    # Where the expected state stood among those named, in runs whose first step was right,
    # whatever their share: "first", "second", "absent".
    state_places: dict[str, int] = field(default_factory=dict)

    def missed(self, why: str) -> None:
        self.misses[why] = self.misses.get(why, 0) + 1


def judge_condition(condition: Condition, report: str, tally: Tally) -> None:
    tally.runs += 1
    lines = {m.group(1): m.group(0) for m in re.finditer(r"^  (listen|execve|off the paths): .*$", report, re.M)}
    named = steps_named(lines.get("listen", ""))
    if condition.name == "same code":
        if drift := LISTEN_SHIFT.search(lines.get("listen", "")):
            tally.listen_shifts.append(ms(drift.group(1), drift.group(2)))
        called = [s["step"] for line in lines.values() for s in steps_named(line)]
        off_path = re.findall(r"(?:: |; )([a-z]+ [^;]*?) [-+][0-9.]+ \S+ \[[^]]*\] own time", lines.get("off the paths", ""))
        named = called + off_path
        tally.right += 0 if named else 1
        if named:
            tally.firsts[named[0]] = tally.firsts.get(named[0], 0) + 1
        return
    if condition.name == "moved work":
        signs = {s["step"]: s["shift"][0] for s in named}
        listen_row = re.search(r"^listen\s.*$", report, re.M)
        calm = listen_row is not None and "REGRESSED" not in listen_row.group(0) and "improved" not in listen_row.group(0)
        both = signs.get("container 14 CONTAINER_RLIMIT_SETUP") == "+" and \
            signs.get("container 15 CONTAINER_CGROUP_SETUP") == "-"
        if not both:
            tally.missed("not both steps, opposite signs")
        elif not calm:
            tally.missed("listen moved")
        else:
            tally.right += 1
        return
    first = named[0] if named else None
    tally.firsts[first["step"] if first else "(none)"] = tally.firsts.get(first["step"] if first else "(none)", 0) + 1
    if first and first["share"] is not None:
        tally.shares.append(int(first["share"]))
    listen_shift = LISTEN_SHIFT.search(lines.get("listen", ""))
    if first and listen_shift and float(listen_shift.group(1)) != 0:
        tally.own_shares.append(100 * ms(*first["shift"].split()) / ms(listen_shift.group(1), listen_shift.group(2)))
    named_states = STATE.findall(first["states"] or "") if first else []
    if first and first["step"] == condition.step:
        place = "absent" if condition.state not in named_states else \
            "first" if named_states[0] == condition.state else "second"
        tally.state_places[place] = tally.state_places.get(place, 0) + 1
    if first is None or first["step"] != condition.step:
        tally.missed("another step first")
    elif first["share"] is None:
        tally.missed("no share")
    elif int(first["share"]) < 80:
        tally.missed("share < 80 %")
    elif condition.state not in named_states:
        tally.missed(f"state {' and '.join(named_states) or '-'}")
    else:
        tally.right += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=20, help="runs per condition and load (default 20)")
    parser.add_argument("--boots", type=int, default=20, help="boots per run (default 20)")
    parser.add_argument("--keep", action="store_true", help="keep the summaries")
    parser.add_argument("--interleave", action="store_true",
                        help="trace each run and its baseline at once, their boots alternated")
    parser.add_argument("--conditions", type=lambda text: text.split(","), default=[c.name for c in CONDITIONS],
                        metavar="NAME,...", help="only these conditions (default all: "
                        + ", ".join(c.name for c in CONDITIONS) + ")")
    parser.add_argument("--loads", type=lambda text: text.split(","), default=["quiet", "busy"], metavar="LOAD,...",
                        help="quiet, busy or both (default both)")
    args = parser.parse_args()
    if args.runs < 1 or args.boots < 1:
        parser.error("--runs and --boots take a whole number of at least 1")
    if unknown := set(args.conditions) - {c.name for c in CONDITIONS}:
        parser.error(f"no such condition: {', '.join(sorted(unknown))}")
    if not args.conditions or set(args.loads) - {"quiet", "busy"} or not args.loads:
        parser.error("--conditions and --loads each take at least one name of those listed")
    conditions = [c for c in CONDITIONS if c.name in args.conditions]
    loads = [load for load in ("quiet", "busy") if load in args.loads]  # quiet first, whatever the order given
    if os.geteuid() != 0:
        print("step rates: tracing needs root (sudo scripts/bench.sh --step-rates)", file=sys.stderr)
        return 0
    build = args.build_dir.resolve()
    work = Path(tempfile.mkdtemp(prefix="hacoboot-step-rates.", dir="/var/tmp"))
    setup = Setup(sampler=str(build / "hacoboot-sampler"), launcher=str(build / "demo" / "hacoboot-launcher"),
                  app=str(build / "demo" / "hacoboot-demo-app"), work=work, boots=args.boots, work_ms=0)
    for condition in conditions:
        if "--fsync" in condition.launcher_args:
            condition.launcher_args += ["--io-dir", str(work)]
    cpus = os.cpu_count() or 1
    began = time.monotonic()
    interleaved = Interleaved(setup) if args.interleave else None
    print(f"step rates: {args.runs} runs of {args.boots} boots per condition, {cpus} busy loops under load, "
          f"{'each run and its baseline interleaved' if interleaved else 'runs after their baselines'}, "
          f"kernel {os.uname().release}", flush=True)
    tallies: dict[tuple[str, str], Tally] = {}
    quiet_baseline: Path | None = None
    for load in loads:
        with BusyLoops(cpus if load == "busy" else 0):
            for i in range(args.runs):
                if interleaved:
                    for condition in conditions:
                        baseline, summary = interleaved.trace(f"{load}-{condition.name.replace(' ', '_')}-{i}",
                                                              BASELINES[condition.baseline], condition.launcher_args)
                        judge_condition(condition, judge(setup, baseline, summary),
                                        tallies.setdefault((condition.name, load), Tally()))
                    continue
                baselines = {name: setup.trace(f"{load}-baseline-{name}-{i}", launcher_args)
                             for name, launcher_args in BASELINES.items()
                             if any(c.baseline == name for c in conditions)}
                for condition in conditions:
                    summary = setup.trace(f"{load}-{condition.name.replace(' ', '_')}-{i}", condition.launcher_args)
                    report = judge(setup, baselines[condition.baseline], summary)
                    judge_condition(condition, report, tallies.setdefault((condition.name, load), Tally()))
                    if load == "busy" and condition.name == "same code" and quiet_baseline is not None:
                        judge_condition(condition, judge(setup, quiet_baseline, summary),
                                        tallies.setdefault((condition.name, "busy vs a quiet baseline"), Tally()))
                quiet_baseline = baselines.get("plain") if load == "quiet" else quiet_baseline
        print(f"  {load}: done at {time.monotonic() - began:.0f} s", flush=True)

    print(f"\n{'condition':<11} {'load':<24} {'right':>7}  {'share of first, min-median-max':<31} first step named; "
          "why the others missed")
    for (name, load), tally in tallies.items():
        shares = sorted(tally.shares)
        spread = f"{shares[0]}-{shares[len(shares) // 2]}-{shares[-1]} %" if shares else "-"
        firsts = ", ".join(f"{step} x{n}" for step, n in sorted(tally.firsts.items(), key=lambda kv: -kv[1]))
        misses = ", ".join(f"{why} x{n}" for why, n in sorted(tally.misses.items(), key=lambda kv: -kv[1]))
        places = ", ".join(f"{place} x{n}" for place, n in sorted(tally.state_places.items(), key=lambda kv: -kv[1]))
        print(f"{name:<11} {load:<24} {tally.right:>3}/{tally.runs:<3}  {spread:<31} {firsts or '-'}"
              + (f"; {misses}" if misses else "") + (f"; its state {places}" if places else ""))
    print("(same code: the first step called moved, in the runs with a call; its state: where the expected state "
          "stood among those the gate named, in the runs with the right first step)")
    for (name, load), tally in tallies.items():
        if tally.own_shares:
            own = sorted(tally.own_shares)
            print(f"{name}, {load}: the first step's shift over listen's own estimate, min-median-max "
                  f"{own[0]:.0f}-{own[len(own) // 2]:.0f}-{own[-1]:.0f} %, at least 80 % in "
                  f"{sum(1 for v in own if v >= 80)} of {tally.runs}")
    for (name, load), tally in tallies.items():
        if tally.listen_shifts:
            drift = sorted(tally.listen_shifts)
            print(f"same code, {load}: listen's shift between the run and its baseline, min-median-max "
                  f"{drift[0]:+.2f} {drift[len(drift) // 2]:+.2f} {drift[-1]:+.2f} ms")
    finish(work, began, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
