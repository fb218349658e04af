"""Results and the table: medians and [min-max] over the repetitions, ratios, goals."""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass, field

from .context import OURS, PREV, REF


@dataclass
class Row:
    name: str
    unit: str
    ours: list[float] = field(default_factory=list)
    ref: list[float] = field(default_factory=list)
    prev: list[float] = field(default_factory=list)  # the previous revision's build
    goal: str = "report"
    met: bool | None = None  # None: no goal
    ratio: bool = True  # print bpftrace / hacoboot-sampler
    ref_text: str | None = None  # instead of bpftrace's median [min-max]
    decimals: int = 1


class Results:
    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.notes: list[str] = []
        self.errors: list[str] = []
        self.keep_log = False  # something went wrong: the work directory says what
        self.tool_lost: list[int] = []  # lost_events the tool reported in measurement 3
        self.tool_lost_hits = 0  # USDT hits per run there

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row


def fmt(v: float, decimals: int) -> str:
    if v != v:  # nan
        return "n/a"
    if abs(v) >= 1e6:
        return f"{v / 1e6:.2f}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:.1f}k"
    return f"{v:.{decimals}f}"


def cell(values: list[float], decimals: int) -> str:
    if not values:
        return "-"
    med = fmt(statistics.median(values), decimals)
    if len(values) == 1:
        return med
    return f"{med} [{fmt(min(values), decimals)}-{fmt(max(values), decimals)}]"


def ratio_of(numerator: list[float], denominator: list[float]) -> str:
    if not numerator or not denominator or statistics.median(numerator) <= 0 or statistics.median(denominator) <= 0:
        return "-"
    return f"{statistics.median(numerator) / statistics.median(denominator):.2f}x"


def print_table(results: Results, out=sys.stdout) -> None:
    """The previous revision's columns only where some row measured it."""
    with_prev = any(r.prev for r in results.rows)
    header = ["measurement", f"{OURS} median [min-max]", f"{REF} median [min-max]", "ratio", "goal", "met?"]
    if with_prev:
        header[2:2] = [f"{PREV} median [min-max]", "vs previous"]
    lines = []
    # By measurement number ("1.", "3b.", ...), in the order they were added within one.
    for r in sorted(results.rows, key=lambda row: int(re.match(r"\d+", row.name).group())):
        ours = cell(r.ours, r.decimals)
        ref = r.ref_text if r.ref_text is not None else cell(r.ref, r.decimals)
        ratio = ratio_of(r.ref, r.ours) if r.ratio else "-"
        met = "-" if r.met is None else ("yes" if r.met else "NO")
        line = [f"{r.name} ({r.unit})", ours, ref, ratio, r.goal, met]
        if with_prev:
            line[2:2] = [cell(r.prev, r.decimals), ratio_of(r.ours, r.prev) if r.ratio else "-"]
        lines.append(line)
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]

    def show(row: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"

    print(show(header), file=out)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|", file=out)
    for row in lines:
        print(show(row), file=out)
    if with_prev:
        print(f"\nvs previous = {OURS} median / {PREV} median", file=out)
    if results.notes:
        print(file=out)
        for n in results.notes:
            print(f"- {n}", file=out)
    if results.errors:
        print(file=out)
        for e in results.errors:
            print(f"! {e}", file=out)


def within_previous(row: Row) -> bool:
    """The goal against the previous revision: no more than 10 % slower
    (true where it was not measured)."""
    return not row.prev or statistics.median(row.ours) <= 1.1 * statistics.median(row.prev)
