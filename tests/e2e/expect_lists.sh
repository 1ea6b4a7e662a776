#!/usr/bin/env bash
# Value lists after `on RANKS` (issue 11 item 12): one list per listed rank,
# in the order the ranks are listed, every one of them checked; a count that
# does not match is an error at file:line:col (today an extra list went
# unchecked: `on 0 [2] [2]` passed with rank 1's list never read).
. "$(dirname "$0")/common.bash"
# every rank's grad(x) is sum_k (k + 1) = 6 at world 3 (backward of y * (r + 1))
printf 'case order\nworlds 3\nx = param(ones(1) * (rank + 1))\ny = all_reduce(x, sum)\nbackward(y * (rank + 1))\nexpect grad(x) on 2, 0 [6] [7]\n' \
    > "$TMP/order.case"
expect_exit 1 -- "$BIN" --oracle-only --json "$TMP/order.json" "$TMP/order.case"
python3 - "$TMP/order.json" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "$(cat "$TMP/py.out")"
import json, sys
checks = json.load(open(sys.argv[1]))["cases"][0]["checks"]
mine = {k["rank"]: k for k in checks if k["expected"] in ([6], [7]) and k["tensor"] == "x" and k["against"] != "oracle"}
assert mine[2]["expected"] == [6] and mine[2]["status"] == "pass", mine
assert mine[0]["expected"] == [7] and mine[0]["observed"] == [6] and mine[0]["status"] == "fail", mine
assert 1 not in mine, mine
PY
printf 'case extra\nworlds 2\nx = param(ones(1))\ny = all_reduce(x, sum)\nbackward(y)\nexpect grad(x) on 0 [2] [2]\n' > "$TMP/extra.case"
expect_exit 2 -- "$BIN" --oracle-only "$TMP/extra.case"
expect_grep "extra.case:6:21: expected 1 value list \(one per rank after 'on'\), got 2" "$TMP/out"
finish
