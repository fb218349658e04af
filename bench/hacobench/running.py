"""Running tracers and the programs they watch: processes, their output and their end."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from .context import Context, OURS, monotonic_ns
from .table import Results


def bpftrace_argv(ctx: Context, args: list[str]) -> list[str]:
    """bpftrace, as it is where the host has tracefs mounted; else in a
    private mount namespace with a tracefs of its own (the syscalls:*
    tracepoints need it; the host's mounts are left alone)."""
    assert ctx.bpftrace
    base = [ctx.bpftrace, "-B", "none", "--no-warnings", *args]
    if Path("/sys/kernel/tracing/events").is_dir():
        return base
    return [str(ctx.source / "scripts" / "tracefs-state.sh"), "mounted", *base]


def clock_first(script: str) -> str:
    """The reference script with every clock read moved to the top of its
    probe: each probe whose action reads `nsecs` behind a predicate reads it
    first, into $now, and tests the predicate in an `if` after. Its figures
    against the script's own tell how late the script reads its clock (the
    predicate's map lookups, the filename's copy and compare at execve)."""
    probe = re.compile(r"^(?P<head>[^\n]+)\n/(?P<predicate>[^\n]+)/\n\{\n(?P<body>(?:\t[^\n]*\n)+)\}$",
                       re.MULTILINE)
    moved = 0

    def rewrite(m: re.Match[str]) -> str:
        nonlocal moved
        body = m.group("body")
        if "nsecs" not in body:
            return m.group(0)
        moved += 1
        inner = "".join(f"\t{line}\n" for line in body.replace("nsecs", "$now").splitlines())
        return f"{m.group('head')}\n{{\n\t$now = nsecs;\n\tif ({m.group('predicate')}) {{\n{inner}\t}}\n}}"

    rewritten = probe.sub(rewrite, script)
    if moved != 3:  # START_SV, execve, listen
        raise RuntimeError(f"clock_first: {moved} probes of the reference script read the clock, 3 expected")
    return rewritten


def reference_with_readiness(ctx: Context, clock_first_copy: bool = False) -> Path:
    """The reference script (or its clock-first copy) plus one probe on the
    marker binary, appended so that bpftrace attaches it last: it prints once
    when the marker fires, so its first line tells that every probe is live,
    and when."""
    path = ctx.file("reference-clock-first-bench.bt" if clock_first_copy else "reference-bench.bt")
    if not path.exists():
        script = ctx.reference.read_text()
        path.write_text((clock_first(script) if clock_first_copy else script) + f"""
/* added by bench/hacobench: the first marker hit after every probe is live */
usdt:{ctx.marker}:haconiwa:bootstrap_phase_pass
/@bench_live == 0/
{{
	@bench_live = 1;
	printf("BENCH-LIVE %llu\\n", nsecs);
}}
""")
    return path


class Process:
    """A background process whose output goes to a file, stopped by pid."""

    def __init__(self, ctx: Context, argv: list[str], name: str):
        self.output = ctx.file(f"{name}.out")
        ctx.note(f"$ {' '.join(argv)}    > {self.output}")
        with self.output.open("wb") as out:
            self.started_ns = monotonic_ns()
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        self.pid = self.proc.pid
        self.rusage = None
        self.status = None

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match:
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            if m := regex.search(self.text()):
                return m
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited ({self.proc.returncode}) before printing /{pattern}/: "
                                   f"{self.text()[-300:]!r}")
            time.sleep(0.001)
        raise RuntimeError(f"no /{pattern}/ within {timeout:.0f}s")

    def wait(self, timeout: float = 600.0) -> None:
        """Reap the process, keeping its rusage (peak RSS, CPU time)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status, self.rusage = status, rusage
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                return
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"pid {self.pid} did not exit within {timeout:.0f}s")
            time.sleep(0.0005)

    def interrupt(self) -> tuple[float, float]:
        """SIGINT, as Ctrl-C. Returns (ms until its output grew: the summary
        is out, ms until it has exited)."""
        size = self.output.stat().st_size
        sent = monotonic_ns()
        os.kill(self.pid, signal.SIGINT)
        printed = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if printed is None and self.output.stat().st_size > size:
                printed = monotonic_ns()
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                exited = monotonic_ns()
                self.status, self.rusage = status, rusage
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                if printed is None and self.output.stat().st_size > size:
                    printed = exited
                return ((printed or exited) - sent) / 1e6, (exited - sent) / 1e6
            time.sleep(0.0002)
        self.kill()
        raise RuntimeError(f"pid {self.pid} still running 60 s after SIGINT")

    def kill(self) -> None:
        if self.proc.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.wait4(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.proc.returncode = -9

    @property
    def peak_rss_mb(self) -> float:
        return self.rusage.ru_maxrss / 1024 if self.rusage else float("nan")


def vm_hwm_mb(pid: int) -> float:
    """Peak RSS so far of the process itself (wait4's ru_maxrss also covers
    the children it reaped)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(ctx: Context, argv: list[str], timeout: float = 600.0) -> str:
    """Runs to completion; returns stdout+stderr."""
    ctx.note(f"$ {' '.join(argv)}")
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
    ctx.note(result.stdout[-2000:])
    if result.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {result.returncode}: {result.stdout[-300:]!r}")
    return result.stdout


def start_ours(ctx: Context, name: str, extra: list[str], tool: str = OURS, wrapper: tuple[str, ...] = ()) -> Process:
    """hacoboot-sampler (of this revision, or PREV) until SIGINT, returned
    once every probe is live: it prints 'Tracing ...' after its last attach
    (not with -q). WRAPPER runs it (it must exec it, keeping the pid)."""
    p = Process(ctx, [*wrapper, *ctx.sampler_argv(tool, extra)], name)
    p.wait_for(r"Tracing Haconiwa boots in .*Hit Ctrl-C to end\.\n")
    return p


def start_reference(ctx: Context, name: str, clock_first_copy: bool = False) -> Process:
    """The reference script (or its clock-first copy) on the demo launcher,
    returned once live: a marker spawner fires the marker probe until
    bpftrace prints it."""
    script = reference_with_readiness(ctx, clock_first_copy)
    p = Process(ctx, bpftrace_argv(ctx, [str(script), ctx.launcher, ctx.app]), name)
    marker = Process(ctx, [ctx.marker, "spawn", "1000"], f"{name}-marker")
    try:
        p.wait_for(r"BENCH-LIVE (\d+)")
    finally:
        marker.kill()
    return p


def value(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    if not m:
        raise RuntimeError(f"no /{pattern}/ in output: {text[-300:]!r}")
    return float(m.group(1))


def end_run(p: Process, results: Results, what: str) -> bool:
    """Ends a tracer with SIGINT, as Ctrl-C. One that ignores it is killed and
    noted with the end of its output, and the measurement goes on: returns
    whether it exited by itself (only then has it printed its summary)."""
    try:
        p.interrupt()
        return True
    except RuntimeError as e:
        results.notes.append(f"{what}: {e}; killed; its output ended with {p.text()[-200:]!r}")
        results.keep_log = True
        return False


def launch_ours(ctx: Context, name: str, extra: list[str], tool: str = OURS) -> float:
    """ms from exec of hacoboot-sampler (or PREV) to the first marker hit it reports."""
    events = ctx.file(f"{name}.tsv")
    p = Process(ctx, ctx.sampler_argv(tool, ["-q", "-n", "1", "--haconiwa", ctx.marker, "--events", str(events),
                                             "-o", "/dev/null", *extra]), name)
    p.wait(timeout=60)
    first = events.read_text().splitlines()[1].split("\t")
    seen_ns = int(first[8])  # t_ns
    return (seen_ns - p.started_ns) / 1e6


def fill_btf_cache(ctx: Context, extra: list[str], tool: str = OURS) -> None:
    """A first run on the marker: it fills the BTF cache (kernel types) that
    every later start of hacoboot-sampler reads instead of the whole BTF."""
    marker = Process(ctx, [ctx.marker, "spawn", "1000"], "marker-fill-cache")
    try:
        launch_ours(ctx, "fill-cache", extra, tool)
    finally:
        marker.kill()
