#!/usr/bin/env python3
"""Benchmarks of hacoboot-sampler against the reference bpftrace script.

The command line of scripts/bench.sh; the measurements are in hacobench/,
a module each (see hacobench/main.py).
"""

import sys

from hacobench.main import main

if __name__ == "__main__":
    sys.exit(main())
