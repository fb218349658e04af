"""The benchmarks of scripts/bench.sh: a module per measurement, run by main."""
