"""Benchmarks: `python -m benchmarks.<name>`; results are written to benchmarks/results/."""
