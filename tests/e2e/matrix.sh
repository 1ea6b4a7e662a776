#!/usr/bin/env bash
# collgrad-check matrix (issue 25 item 4): case x backend as Markdown, JSON and
# a self-contained HTML page that headless Chromium renders. Expected cells
# come from the cases' own derivations, not from a run:
#   pytorch-58005/allreduce_prod_scaled: truth 30 per rank at W=2 and 1680 at
#   W=4; torch-nn gives 6(r+2) at W=2 (12, 18) and 120(r+2) at W=4 (240..600);
#   c10d (r+2)^2 (4, 9 at W=2; 4 at W=4's rank 0): largest errors 18, 26, 1440
#   and 1676.
#   rpc-design/rpc_add: c10d's send/recv carry no gradient (wrong); pytorch:nn
#   has no send/recv (skipped); pytorch:rpc, dist_autograd, is correct.
#   rpc-design/rpc_unused_result: c10d's backward raises (nothing requires
#   grad on rank 1); real dist_autograd hangs (FAST mode, the design note).
. "$(dirname "$0")/common.bash"
PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
C="$SRC/cases"
PROD="$C/pytorch-58005/allreduce_prod_scaled.case"

# command lines refused before anything runs
expect_exit 2 -- "$BIN" matrix --backends reference,bogus "$PROD"
expect_grep "matrix: unknown backend 'bogus' \(expected a built-in rule set.* rpc or listassign, or jax:shard_map or jax:shard_map_novma\)" "$TMP/out"
expect_exit 2 -- "$BIN" matrix --frobnicate
expect_grep "unknown option '--frobnicate'" "$TMP/out"
# --world and --timeout are read before any column runs (once: a table of 18 refusals, exit 0)
expect_exit 2 -- "$BIN" matrix --backends reference --world 0 "$PROD"
expect_grep "expected a world size in 1\.\.64 after --world, got '0'" "$TMP/out"
expect_exit 2 -- "$BIN" matrix --backends reference --timeout nan "$PROD"
expect_exit 2 -- "$BIN" matrix "$PROD" --md x.md
expect_grep "options come before the cases" "$TMP/out"
expect_exit 0 -- "$BIN" matrix --help
expect_grep "^usage: collgrad-check matrix" "$TMP/out"
# a case path that cannot be read is refused before any column runs (was a table of
# "error: ...: cannot read" rows, exit 0); a file that does not parse stays a row of errors
expect_exit 2 -- "$BIN" matrix --backends reference "$TMP/no-such.case"
expect_grep "^collgrad-check: .*/no-such.case: cannot read: No such file or directory$" "$TMP/out"
grep -q "matrix: \[1/1\]" "$TMP/out" && bad "a column ran before the refusal" || ok
echo "x = bogus" > "$TMP/bad.case"
expect_exit 0 -- "$BIN" matrix --backends reference "$TMP/bad.case"
expect_grep "^\| bad \| 0 \| error: expected a defined tensor name, got 'bog" "$TMP/out"
# the table's targets are tried before any column runs (was exit 3 after them all)
expect_exit 2 -- "$BIN" matrix --backends reference --md /nonexistent/dir/m.md "$PROD"
expect_grep "/nonexistent/dir/m.md: cannot write: /nonexistent/dir is not a directory" "$TMP/out"
grep -q "matrix: \[1/1\]" "$TMP/out" && bad "a column ran before the refusal" || ok
expect_exit 2 -- "$BIN" matrix --backends reference --json "" "$PROD"
expect_grep "^collgrad-check matrix: --json '': expected a file name \(or - for standard output\)$" "$TMP/out"
expect_exit 2 -- "$BIN" matrix --backends reference --md - --json - "$PROD"
expect_grep "^collgrad-check matrix: --md and --json name the same target; give each its own$" "$TMP/out"
grep -q "matrix: \[1/1\]" "$TMP/out" && bad "a column ran before the refusal" || ok

# --no-diagnosis (what the emulation columns run with): the verdict, without naming the mistake
expect_exit 1 -- "$BIN" --rules torch-nn --no-fd --no-diagnosis "$PROD"
expect_grep "fail per_rank\(x\) rank 0 rules=torch-nn@1.13: expected \[30\] observed \[12\]" "$TMP/out"
grep -q "diagnosis:" "$TMP/out" && bad "--no-diagnosis still diagnosed" || ok
expect_exit 1 -- "$BIN" --rules torch-nn --no-fd --world 2 "$PROD"
expect_grep "diagnosis: .*torch-nn@1.13: all_reduce\(prod\) backward" "$TMP/out"

# the emulations (no torch needed)
expect_exit 0 -- "$BIN" matrix --backends reference,torch-nn,c10d --md "$TMP/m.md" --json "$TMP/m.json" \
  --html "$TMP/m.html" "$PROD" "$C/rpc-design"
expect_grep '^\| case \| W \| `reference` \| `torch-nn@1.13` \| `c10d` \|$' "$TMP/m.md"
expect_grep '^\| allreduce_prod_scaled \| 2 \| correct \| wrong \(18\) \| wrong \(26\) \|$' "$TMP/m.md"
expect_grep '^\| allreduce_prod_scaled \| 4 \| correct \| wrong \(1.4e\+03\) \| wrong \(1.7e\+03\) \|$' "$TMP/m.md"
expect_grep '^\| rpc_unused_result \| 2 \| correct \| correct \| refused: element 0 of tensors does not require' "$TMP/m.md"
python3 - "$TMP/m.json" <<'EOF' && ok || bad "the JSON matrix does not hold the derived cells"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["columns"] == ["reference", "torch-nn@1.13", "c10d"], m["columns"]
cells = {(r["case"], r["world"]): r["cells"] for r in m["rows"]}
ref, nn, c10d = zip(*[[c["kind"] for c in cells[k]] for k in sorted(cells)])
assert set(ref) == {"correct"}, ref
row = cells[("allreduce_prod_scaled", 2)]
assert row[1]["max_err"] == 18 and row[2]["max_err"] == 26, row
assert "expected [30] observed [12]" in row[1]["detail"] and "observed [18]" in row[1]["detail"], row[1]
row = cells[("allreduce_prod_scaled", 4)]
assert row[1]["max_err"] == 1680 - 240 and row[2]["max_err"] == 1680 - 4, row
assert cells[("rpc_add", 2)][2]["kind"] == "wrong" and cells[("rpc_add", 4)][2]["kind"] == "wrong"
assert cells[("rpc_unused_result", 2)][2]["kind"] == "refused"
# rows sorted by file, case, world: the 58005 case's two worlds first
assert [(r["case"], r["world"]) for r in m["rows"]][:2] == [("allreduce_prod_scaled", 2), ("allreduce_prod_scaled", 4)]
EOF

# the page in a real browser: the DOM Chromium builds from it, and a screenshot
# that shows the cells' colours (wrong #f6b9b9, correct #cdeccd, refused #fbdca8)
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$CHROMIUM" ]; then
  bad "no chromium to render the page (scripts/setup.sh installs Debian's chromium)"
else
  headless=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$TMP/chrome")
  timeout 120 "$CHROMIUM" "${headless[@]}" --dump-dom "file://$TMP/m.html" > "$TMP/dom.html" 2> "$TMP/chrome.err"
  python3 - "$TMP/dom.html" <<'EOF' && ok || bad "Chromium's DOM of the page lacks the expected cells"
import sys
from html.parser import HTMLParser

class Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.row, self.cell, self.cells, self.scripts = None, None, {}, 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-case" in a:
            self.row = (a["data-case"], int(a["data-world"]))
        elif tag == "td" and "data-col" in a:
            self.cell = [a.get("class"), a.get("title", ""), ""]
            self.cells[self.row + (a["data-col"],)] = self.cell
        elif tag in ("script", "link", "img", "iframe"):
            self.scripts += 1
    def handle_endtag(self, tag):
        if tag == "td":
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data

p = Cells()
p.feed(open(sys.argv[1]).read())
assert p.scripts == 0, "the page loads something"
cls, title, text = p.cells[("allreduce_prod_scaled", 2, "torch-nn@1.13")]
assert (cls, text) == ("wrong", "wrong (18)"), (cls, text)
assert "expected [30] observed [12]" in title, title  # the numbers on hover
assert p.cells[("allreduce_prod_scaled", 2, "reference")][:1] == ["correct"]
cls, title, text = p.cells[("rpc_unused_result", 2, "c10d")]
assert cls == "refused" and "does not require grad" in title, (cls, title)
assert len(p.cells) == 5 * 3, len(p.cells)  # 5 (case, world) rows x 3 columns
EOF
  timeout 120 "$CHROMIUM" "${headless[@]}" --window-size=1000,700 --screenshot="$TMP/m.png" "file://$TMP/m.html" \
    >> "$TMP/chrome.err" 2>&1
  if python3 "$SRC/tests/tools/png_colors.py" "$TMP/m.png" f6b9b9 cdeccd fbdca8 > "$TMP/png" 2>&1; then
    python3 - "$TMP/png" <<'EOF' && ok || { bad "the screenshot does not show the table"; cat "$TMP/png"; }
import sys
lines = open(sys.argv[1]).read().split("\n")
w, h, distinct = map(int, lines[0].split())
counts = dict(l.split() for l in lines[1:] if l)
assert (w, h) == (1000, 700) and distinct > 20
# 6 wrong cells, 8 correct ones, 1 refused, each about 100 x 24 pixels
assert int(counts["f6b9b9"]) > 6 * 1000 and int(counts["cdeccd"]) > 8 * 1000 and int(counts["fbdca8"]) > 1000
EOF
  else bad "Chromium wrote no readable screenshot: $(cat "$TMP/png")"; tail -3 "$TMP/chrome.err"; fi
fi

# real PyTorch beside its emulations (skipped without torch)
if "$PY" -c "import torch" > /dev/null 2>&1; then
  expect_exit 0 -- "$BIN" matrix --backends torch-nn,pytorch:nn,pytorch:rpc,pytorch:funcol --python "$PY" \
    --timeout 6 --md "$TMP/t.md" "$PROD" "$C/rpc-design"
  expect_grep '^\| allreduce_prod_scaled \| 2 \| wrong \(18\) \| wrong \(18\) \| skipped: pytorch:rpc covers send and recv' "$TMP/t.md"
  expect_grep '^\| rpc_add \| 2 \| correct \| skipped: torch.distributed.nn has no differentiab\.\.\. \| correct \|$' "$TMP/t.md"
  expect_grep '^\| rpc_add \| 4 \| correct \| skipped: .* \| correct \|$' "$TMP/t.md"
  expect_grep '^\| rpc_unused_result \| 2 \| correct \| skipped: .* \| hangs: rank 0 timed out at backward' "$TMP/t.md"
  expect_grep '^`pytorch:nn`: torch [0-9.]+.* over gloo' "$TMP/t.md"
  case "$("$PY" -c 'import torch; print(torch.__version__)')" in
    1.*) expect_grep '^pytorch:funcol left out: every case skipped: torch .* has no torch.distributed._functional_collectives' "$TMP/t.md" ;;
  esac
fi
validate_reports
finish
