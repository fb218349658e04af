"""7. Idle CPU and Ctrl-C -> exit."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from .accuracy import read_truth
from .context import Context, OURS, PREV, REF, monotonic_ns, order
from .running import Process, start_ours, start_reference
from .table import Results, Row, within_previous


def cpu_sample(pid: int) -> tuple[float, float, int]:
    """(utime+stime ms from /proc/PID/stat, on-CPU ms of all threads from
    schedstat, voluntary context switches of all threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    run_ns, switches = 0, 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            run_ns += int((task / "schedstat").read_text().split()[0])
            status = (task / "status").read_text()
            switches += int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        except (FileNotFoundError, AttributeError):
            pass
    return ticks * 1000 / os.sysconf("SC_CLK_TCK"), run_ns / 1e6, switches


def measure_idle_and_interrupt(ctx: Context, results: Results) -> None:
    """Each tracer, live and with nothing to trace, for IDLE seconds: CPU
    used (utime+stime; schedstat for sub-tick resolution) and wakeups; then
    SIGINT, and the time until its summary is out and until it has exited
    (the rest is detaching probes and freeing maps)."""
    idle = ctx.sizes.idle_s
    stat_ms = {OURS: [], REF: [], PREV: []}
    sched_ms = {OURS: [], REF: [], PREV: []}
    wakeups = {OURS: [], REF: [], PREV: []}
    printed_ms = {OURS: [], REF: [], PREV: []}
    exit_ms = {OURS: [], REF: [], PREV: []}
    for rep in range(ctx.sizes.session_reps):
        for tool in order(rep, ctx.tracers()):
            if tool in (OURS, PREV):
                p = start_ours(ctx, f"idle-{tool[:4]}-{rep}", ["--haconiwa", ctx.launcher, ctx.app], tool)
            else:
                p = start_reference(ctx, f"idle-ref-{rep}")
            try:
                time.sleep(0.5)  # past start-up work
                before = cpu_sample(p.pid)
                time.sleep(idle)
                after = cpu_sample(p.pid)
                printed, exited = p.interrupt()
                printed_ms[tool].append(printed)
                exit_ms[tool].append(exited)
            except RuntimeError as e:  # one tracer that hangs at exit must not void the others' figures
                results.notes.append(f"7: {tool}, repetition {rep}: {e}; killed")
                results.keep_log = True
                continue
            finally:
                p.kill()
            stat_ms[tool].append(after[0] - before[0])
            sched_ms[tool].append(after[1] - before[1])
            wakeups[tool].append((after[2] - before[2]) / idle)
    exited = results.add(Row("7a. Ctrl-C (SIGINT) -> exited", "ms", ours=exit_ms[OURS], ref=exit_ms[REF],
                             prev=exit_ms[PREV]))
    if ctx.previous:
        exited.goal, exited.met = "<= 1.1x previous", within_previous(exited)
    results.add(Row("7b. Ctrl-C (SIGINT) -> summary printed", "ms", ours=printed_ms[OURS], ref=printed_ms[REF],
                    prev=printed_ms[PREV]))
    results.add(Row(f"7c. idle CPU over {idle:.0f} s, utime+stime", "ms", ours=stat_ms[OURS], ref=stat_ms[REF],
                    prev=stat_ms[PREV], ratio=False, decimals=0))
    results.add(Row(f"7d. idle on-CPU time over {idle:.0f} s, schedstat", "ms", ours=sched_ms[OURS],
                    ref=sched_ms[REF], prev=sched_ms[PREV], decimals=2))
    results.add(Row("7e. idle wakeups (voluntary context switches)", "/s", ours=wakeups[OURS], ref=wakeups[REF],
                    prev=wakeups[PREV]))


def measure_count_stop(ctx: Context, results: Results) -> None:
    """`-n 1`: from the boot's listen(2) call (the event that settles it; the
    bracket's low edge, read just before the call: the woken tool may print
    before the app reads the clock after it) until the summary is out. The
    container lives on for a second after its listen, so its exit is not
    what ends the run."""
    lag_ms = []
    for rep in range(2 * ctx.sizes.reps):
        truth_path = ctx.file(f"count-truth-{rep}.tsv")
        truth_path.unlink(missing_ok=True)
        p = start_ours(ctx, f"count-ours-{rep}", ["-n", "1", "--haconiwa", ctx.launcher, ctx.app])
        size = p.output.stat().st_size
        boot = Process(ctx, [ctx.launcher, "--truth", str(truth_path), "--", ctx.app, "--hold-ms", "1000"],
                       f"count-boot-{rep}")
        try:
            deadline = time.monotonic() + 60
            while p.output.stat().st_size == size:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no summary 60 s after the boot: {p.text()[-300:]!r}")
                time.sleep(0.0002)
            printed_ns = monotonic_ns()
            p.wait(timeout=60)
            boot.wait(timeout=60)
        finally:
            p.kill()
            boot.kill()
        (listened_ns,) = [t["listen_lo"] for t in read_truth(truth_path).values()]
        lag_ms.append((printed_ns - listened_ns) / 1e6)
    results.add(Row("7f. -n 1: the boot's listen(2) call -> summary printed", "ms", ours=lag_ms,
                    ref_text="n/a (no -n)", ratio=False, decimals=2))
