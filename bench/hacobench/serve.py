"""8. The metrics endpoint (--serve)."""

from __future__ import annotations

import socket
import statistics
import threading
import time

from .context import Context, monotonic_ns
from .running import Process, vm_hwm_mb
from .table import Results, Row


SLOW_CLIENTS = 50


def scrape_ms(port: int) -> float:
    """One GET /metrics on a new connection, as Prometheus scrapes; ms until
    the whole answer is in. Raises past Prometheus' default timeout, 10 s."""
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"scrape answered {answer[:100]!r}")
    return (time.monotonic() - began) * 1e3


class SlowClients:
    """`count` connections to `port` that never complete a request: half
    send nothing, half trickle a request line a byte every 100 ms. One the
    server closes is opened again, so that `count` are always pending."""

    def __init__(self, port: int, count: int):
        self.port = port
        self.sockets: list[socket.socket | None] = [None] * count
        self.running = True
        self.reopened = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while self.running:
            for i, s in enumerate(self.sockets):
                try:
                    if s is None:
                        s = self.sockets[i] = socket.create_connection(("127.0.0.1", self.port), timeout=1)
                    elif i % 2:
                        s.send(b"G")
                    else:
                        s.setblocking(False)
                        if s.recv(1) == b"":  # closed by the server
                            raise ConnectionError
                except BlockingIOError:
                    pass
                except OSError:
                    if s is not None:
                        s.close()
                        self.reopened += 1
                    self.sockets[i] = None
            time.sleep(0.1)

    def stop(self) -> None:
        self.running = False
        self.thread.join()
        for s in self.sockets:
            if s is not None:
                s.close()


def serve_figures(ctx: Context, sampler: str, name: str, scrapes: int) -> dict[str, float]:
    """`sampler --serve`, watching the demo launcher: ms from exec to the
    first scrape answered, scrape latency (median) without and with
    SLOW_CLIENTS slow clients, and the tool's peak RSS after them."""
    p = Process(ctx, [sampler, "--serve", "127.0.0.1:0", "--haconiwa", ctx.launcher, ctx.app], name)
    try:
        port = int(p.wait_for(r"Serving Prometheus metrics at http://127\.0\.0\.1:(\d+)/metrics").group(1))
        scrape_ms(port)
        started_ms = (monotonic_ns() - p.started_ns) / 1e6
        alone = []
        for _ in range(scrapes):
            alone.append(scrape_ms(port))
            time.sleep(0.05)
        slow = SlowClients(port, SLOW_CLIENTS)
        try:
            time.sleep(1.0)  # all connected and waited on
            crowded = []
            for _ in range(scrapes):
                crowded.append(scrape_ms(port))
                time.sleep(0.2)
        finally:
            slow.stop()
        ctx.note(f"{name}: slow clients reopened {slow.reopened} times")
        rss = vm_hwm_mb(p.pid)
        p.interrupt()
    finally:
        p.kill()
    return {"start": started_ms, "alone": statistics.median(alone), "crowded": statistics.median(crowded),
            "crowded_max": max(crowded), "rss": rss}


def measure_serve(ctx: Context, results: Results) -> None:
    """The exporter: start-up to the first scrape, scrape latency with no
    other client and with SLOW_CLIENTS that hold connections without ever
    completing a request (Prometheus gives up on a scrape after 10 s)."""
    runs = [serve_figures(ctx, ctx.sampler, f"serve-{rep}", 20) for rep in range(ctx.sizes.reps)]
    crowded = [r["crowded"] for r in runs]
    results.add(Row("8a. --serve: launch -> first scrape answered", "ms", ours=[r["start"] for r in runs],
                    ref_text="n/a (no exporter)", ratio=False))
    results.add(Row("8b. scrape latency, no other client (median of 20)", "ms", ours=[r["alone"] for r in runs],
                    ref_text="n/a", ratio=False, decimals=2))
    results.add(Row(f"8c. scrape latency, {SLOW_CLIENTS} slow clients connected (median of 20)", "ms",
                    ours=crowded, ref_text="n/a", ratio=False, decimals=2, goal="< 1000 ms",
                    met=max(r["crowded_max"] for r in runs) < 1000))
    results.add(Row(f"8d. slowest of those scrapes, {SLOW_CLIENTS} slow clients", "ms",
                    ours=[r["crowded_max"] for r in runs], ref_text="n/a", ratio=False, decimals=2))
    results.add(Row("8e. peak RSS with --serve (VmHWM after the scrapes)", "MB", ours=[r["rss"] for r in runs],
                    ref_text="n/a", ratio=False))
