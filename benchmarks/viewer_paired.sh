#!/usr/bin/env bash
# The trace viewer's open and scrub times, paired: checkouts measured in turn, each in a fresh JupyterLab, by the
# same JavaScript (benchmarks/viewer_paired_bench.py), both measures (audit, side), the order rotating each round.
#
#   benchmarks/viewer_paired.sh ROUNDS OUT.jsonl NAME=CHECKOUT [NAME=CHECKOUT ...]
#
# Each checkout is tested as itself without touching the environment's links (ARCANA_LAB_NO_LINK=1, see
# tests/browser/conftest.py; a checkout from before that option needs its conftest patched the same way) and must have
# its extension built (scripts/build-labextension.sh --no-link). Summarise: benchmarks/viewer_paired.sh --summary OUT.jsonl
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${ARCANA_PYTHON:-$HERE/../.venv/bin/python}
if [ "${1:-}" = --summary ]; then
  exec "$PY" - "$2" <<'PYEOF'
import json, statistics as st, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for variant in dict.fromkeys(r["variant"] for r in rows):
    print(f"== {variant}")
    for tree in dict.fromkeys(r["tree"] for r in rows):
        rs = [r for r in rows if r["tree"] == tree and r["variant"] == variant]
        print(f"{tree}: n={len(rs)}, load {', '.join('%.1f' % r['load'][0] for r in rs)}")
        for k in ("open_ms", "fetch_ms", "scrub_ms", "scrub_label_ms", "step_ms"):
            xs = [r[k] for r in rs]
            print(f"   {k:15s} {', '.join('%.0f' % x for x in xs)} | median {st.median(xs):.0f}")
PYEOF
fi
rounds=$1; out=$2; shift 2
names=(); dirs=()
for arg in "$@"; do names+=("${arg%%=*}"); dirs+=("$(cd "${arg#*=}" && pwd)"); done
n=${#names[@]}
for i in $(seq 1 "$rounds"); do
  for variant in audit side; do
    for k in $(seq 0 $((n - 1))); do
      j=$(( (i + k) % n )); dir=${dirs[$j]}; tree=${names[$j]}
      cp "$HERE/viewer_paired_bench.py" "$dir/tests/browser/test_zz_viewer_paired.py"
      (cd "$dir" && BENCH_TREE=$tree BENCH_VARIANT=$variant BENCH_OUT=$out ARCANA_LAB_NO_LINK=1 PYTHONPATH=$dir \
        timeout 600 "$PY" -m pytest -q -p no:cacheprovider tests/browser/test_zz_viewer_paired.py >"$out.$tree.log" 2>&1) \
        || echo "failed: $tree $variant round $i (see $out.$tree.log)" >>"$out.err"
      rm -f "$dir/tests/browser/test_zz_viewer_paired.py"
    done
  done
done
