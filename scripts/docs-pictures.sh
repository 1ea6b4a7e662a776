#!/usr/bin/env bash
# The docs' pictures (issue 63 item 7), made by the tool itself:
#   OUT/matrix.png  the matrix page (docs/matrix.md's command) as headless
#                   Chromium renders it
#   OUT/bench.svg   `collgrad-check bench` for every collective, its bus
#                   bandwidth and ratio against size (scripts/bench-plot.py)
# docs/images/ holds the copies the docs show, made with
#   scripts/docs-pictures.sh docs/images
# (bench: -b 1M -e 64M -f 4 -n 5 -W 4, the sizes of docs/bench.md's tables);
# e2e_docs_pictures runs it with small sizes (BENCH_ARGS) and checks both.
# Needs the built tool (BUILD, default build/), MPICH and Chromium
# (scripts/setup.sh installs both). Exit 0 made; 1 a step failed (said).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: scripts/docs-pictures.sh OUT_DIR}"
bin="${BUILD:-$root/build}/collgrad-check"
read -r -a bench_args <<< "${BENCH_ARGS:--b 1M -e 64M -f 4 -n 5 -W 4}"
chromium="$(command -v chromium || command -v chromium-browser || true)"
[ -x "$bin" ] || { echo "docs-pictures: no $bin (scripts/build.sh builds it)" >&2; exit 1; }
[ -n "$chromium" ] || { echo "docs-pictures: no chromium (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# the matrix: docs/matrix.md's example, rendered at a size that shows every row
"$bin" matrix --backends reference,torch-nn,c10d --html "$work/matrix.html" "$root/cases/pytorch-58005" \
  > "$work/matrix.log" 2>&1 || { echo "docs-pictures: matrix failed:" >&2; tail -5 "$work/matrix.log" >&2; exit 1; }
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$work/chrome" --window-size=1000,700 --screenshot="$out/matrix.png" \
  "file://$work/matrix.html" > "$work/chrome.log" 2>&1 \
  || { echo "docs-pictures: chromium failed:" >&2; tail -5 "$work/chrome.log" >&2; exit 1; }

# the bench: one run per collective, one plot of all
for c in all_reduce all_gather reduce_scatter broadcast all_to_all; do
  "$bin" bench -c "$c" "${bench_args[@]}" --json "$work/$c.json" > "$work/$c.log" 2>&1 \
    || { echo "docs-pictures: bench -c $c failed:" >&2; tail -5 "$work/$c.log" >&2; exit 1; }
done
python3 "$root/scripts/bench-plot.py" "$out/bench.svg" "$work"/{all_reduce,all_gather,reduce_scatter,broadcast,all_to_all}.json
echo "docs-pictures: wrote $out/matrix.png and $out/bench.svg"
