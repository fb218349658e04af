"""Set-up: the tools compared, the run's sizes, the run-wide context."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

OURS = "hacoboot-sampler"
REF = "bpftrace"
PREV = "previous revision"  # another build of hacoboot-sampler (--previous-sampler)


@dataclass
class Sizes:
    reps: int  # repetitions of each A/B measurement
    session_reps: int  # repetitions of the long ones (accuracy, idle)
    hits: int  # USDT hits per loop
    forks: int  # fork+exec+listen iterations of the host load
    syscalls: int  # getppid() calls of the host load
    round_trips: int  # pipe ping-pong round trips on one CPU
    capacity_hits: int  # events per producer in the capacity runs (USDT hits, listen calls)
    boots: int  # launcher boots per accuracy run
    idle_s: float  # idle window for CPU use
    pipeline_min_time: float  # Google Benchmark --benchmark_min_time
    flood_hits: int  # probe hits with made-up hpids in the flood runs
    observer_reps: int  # repetitions of the observer-effect measurement
    observer_boots: int  # launcher boots per tracer there
    observer_pairs: int  # traced/untraced pairs of boots per tracer run (10e)


FULL = Sizes(reps=5, session_reps=3, hits=1_000_000, forks=500, syscalls=1_000_000, round_trips=200_000,
             capacity_hits=300_000,
             boots=100, idle_s=10.0, pipeline_min_time=1.0, flood_hits=1_600_000, observer_reps=9, observer_boots=40,
             observer_pairs=60)
QUICK = Sizes(reps=1, session_reps=1, hits=100_000, forks=200, syscalls=200_000, round_trips=50_000,
              capacity_hits=100_000,
              boots=10, idle_s=2.0, pipeline_min_time=0.1, flood_hits=200_000, observer_reps=1, observer_boots=10,
              observer_pairs=3)


@dataclass
class Context:
    source: Path
    build: Path
    work: Path
    sizes: Sizes
    root: bool
    bpftrace: str | None
    previous: Path | None  # the previous revision's hacoboot-sampler, compared where given
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.work / "bench.log"

    @property
    def sampler(self) -> str:
        return str(self.build / "hacoboot-sampler")

    @property
    def launcher(self) -> str:
        return str(self.build / "demo" / "hacoboot-launcher")

    @property
    def app(self) -> str:
        return str(self.build / "demo" / "hacoboot-demo-app")

    @property
    def marker(self) -> str:
        return str(self.build / "bench" / "hacoboot-bench-marker")

    @property
    def hostload(self) -> str:
        return str(self.build / "bench" / "hacoboot-bench-hostload")

    @property
    def schedfloor(self) -> str:
        return str(self.build / "bench" / "hacoboot-bench-schedfloor")

    @property
    def capacity(self) -> str:
        return str(self.build / "bench" / "hacoboot-bench-capacity")

    @property
    def pipeline(self) -> str:
        return str(self.build / "bench" / "hacoboot-pipeline-bench")

    @property
    def reference(self) -> Path:
        return self.source / "bench" / "reference.bt"

    def file(self, name: str) -> Path:
        return self.work / name

    def sampler_argv(self, tool: str, args: list[str]) -> list[str]:
        """hacoboot-sampler ARGS, of this revision or of the previous one;
        that one with a BTF cache of its own unless ARGS choose one (each
        build's BPF object replaces the other's extract in a shared one)."""
        if tool != PREV:
            return [self.sampler, *args]
        if "--btf-cache" in args:
            return [str(self.previous), *args]
        cache = self.file("previous-btf-cache")
        cache.mkdir(mode=0o700, exist_ok=True)
        return [str(self.previous), "--btf-cache", str(cache), *args]

    def tracers(self) -> list[str]:
        """The tracers compared: this tool, the previous revision's build if
        given, bpftrace if installed."""
        return [OURS] + ([PREV] if self.previous else []) + ([REF] if self.bpftrace else [])

    def note(self, text: str) -> None:
        with self.log.open("a") as f:
            f.write(text + "\n")


def order(rep: int, tools: list[str]) -> list[str]:
    """A B C for even repetitions, rotated for odd ones: alternating A/B."""
    shift = rep % len(tools)
    return tools[shift:] + tools[:shift]


def monotonic_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)
