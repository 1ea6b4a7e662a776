#!/usr/bin/env bash
# The docs' pictures are made by the tool (issue 63 item 7): scripts/docs-pictures.sh,
# with small bench sizes, writes the matrix page's screenshot and the bench plot.
# The screenshot shows the table's colours: pytorch-58005 under reference,
# torch-nn and c10d has wrong cells (c10d's backward of an all_reduce inside
# autograd gives no gradient across ranks, design.md section 12) and correct
# ones (reference is the truth); the plot has, per collective, its bus
# bandwidth, its raw floor and its ratio, one point per size the bench ran.
# docs/matrix.md and docs/bench.md show the committed copies.
. "$(dirname "$0")/common.bash"
if ! command -v chromium > /dev/null && ! command -v chromium-browser > /dev/null; then
  bad "no chromium (scripts/setup.sh installs Debian's chromium)"; finish; exit 1
fi
BUILD="$(dirname "$BIN")" BENCH_ARGS="-b 64K -e 256K -f 4 -n 1 -W 2" \
  expect_exit 0 -- "$SRC/scripts/docs-pictures.sh" "$TMP/pics"
expect_grep "^docs-pictures: wrote .*/matrix.png and .*/bench.svg$" "$TMP/out"

if python3 "$SRC/tests/tools/png_colors.py" "$TMP/pics/matrix.png" f6b9b9 cdeccd > "$TMP/png" 2>&1; then
  python3 - "$TMP/png" <<'EOF' && ok || { bad "the matrix screenshot does not show the table"; cat "$TMP/png"; }
import sys
lines = open(sys.argv[1]).read().split("\n")
w, h, distinct = map(int, lines[0].split())
counts = dict(l.split() for l in lines[1:] if l)
assert (w, h) == (1000, 700) and distinct > 20, (w, h, distinct)
# cells of about 100 x 24 pixels: c10d is wrong on most rows, reference correct on every row
assert int(counts["f6b9b9"]) > 10 * 1000 and int(counts["cdeccd"]) > 10 * 1000, counts
EOF
else bad "no readable screenshot: $(cat "$TMP/png")"; fi

python3 - "$TMP/pics/bench.svg" <<'EOF' && ok || bad "the bench plot lacks its lines"
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
lines = {p.get("data-series"): p.get("points").split() for p in root.iter(ns + "polyline")}
collectives = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all")
want = {f"{c} {s}" for c in collectives for s in ("busbw", "raw busbw", "ratio")}
assert set(lines) == want, sorted(lines)
for name, points in lines.items():
    xs = [float(p.split(",")[0]) for p in points]
    assert len(xs) == 2 and xs[0] < xs[1], (name, points)  # 64K and 256K, left to right
legend = " ".join(t.text or "" for t in root.iter(ns + "text"))
assert all(c in legend for c in collectives) and "W=2" in legend, legend
EOF

# the plot refuses what is not a bench report, in one line
echo '{"cases": []}' > "$TMP/not-bench.json"
expect_exit 2 -- python3 "$SRC/scripts/bench-plot.py" "$TMP/x.svg" "$TMP/not-bench.json"
expect_grep "not-bench.json: no rows" "$TMP/out"
finish
