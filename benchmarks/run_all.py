"""Run every benchmark in turn (``make bench``); each writes its own file in benchmarks/results/."""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = [
    ["benchmarks.bench_builder"],
    ["benchmarks.retention.run"],
    ["benchmarks.bench_trace"],
    ["benchmarks.bench_runtime"],
    ["benchmarks.bench_adaptive"],
    ["benchmarks.bench_memory"],
    ["benchmarks.bench_markdown"],
    ["benchmarks.bench_otel"],
]


def main() -> int:
    failed = []
    for module in BENCHMARKS:
        print(f"== python -m {' '.join(module)}", flush=True)
        if subprocess.run([sys.executable, "-m", *module]).returncode != 0:
            failed.append(module[0])
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
