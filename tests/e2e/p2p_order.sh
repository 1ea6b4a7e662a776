#!/usr/bin/env bash
# Issue 60 item 5: the hang-hazard warnings are true, and a program the tool's
# own ranks could not run is refused before it runs.
# - split_blocks: rank 0 sends and calls backward, rank 1 receives and calls
#   backward, each statement in its own `on` block: rank 1's recv is used by
#   its own backward call (no warning), and MPI ranks give the oracle's numbers.
# - joined_blocks: the same with each rank's statements in one block: rank 0's
#   backward runs its send's backward before rank 1 has received, so MPI ranks
#   would wait forever; refused (exit 2) with both places named, on the
#   oracle and on MPI alike, in well under the hang timeout.
# - docs/running.md's list of built-in cases that warn is what a run of every
#   case says.
. "$(dirname "$0")/common.bash"
D="$SRC/tests/p2p_order"

expect_exit 0 -- "$BIN" --oracle-only --world 2 "$D/split_blocks.case"
if grep -q "warning" "$TMP/out"; then bad "split_blocks warns: $(grep warning "$TMP/out")"; else ok; fi
expect_exit 0 -- timeout -k 5 120 "$BIN" --world 2 -v "$D/split_blocks.case"
expect_grep "pass per_rank\(x\) rank 0 rules=reference: expected \[2, 4, 6, 8\] observed \[2, 4, 6, 8\]" "$TMP/out"
if grep -q "warning" "$TMP/out"; then bad "split_blocks warns on MPI"; else ok; fi

send_line="$(grep -n 'send(' "$D/joined_blocks.case" | cut -d: -f1)"
recv_line="$(grep -n 'recv(' "$D/joined_blocks.case" | cut -d: -f1)"
for mode in --oracle-only ""; do
  t0=$(date +%s)
  # shellcheck disable=SC2086 # mode is one word or none
  expect_exit 2 -- timeout -k 5 120 "$BIN" $mode --world 2 "$D/joined_blocks.case"
  expect_grep "rank 0's backward call #0 runs the backward of its send #0 to rank 1 \(.*joined_blocks.case:$send_line\), which waits for the gradient of rank 1's recv \(.*joined_blocks.case:$recv_line\)" "$TMP/out"
  if [ $(( $(date +%s) - t0 )) -lt 30 ]; then ok; else bad "joined_blocks took $(( $(date +%s) - t0 )) s ($mode)"; fi
done

# the docs' list of warning cases against a run of every built-in case
"$BIN" --oracle-only --json "$TMP/all.json" > /dev/null 2>&1
python3 - "$TMP/all.json" "$SRC/docs/running.md" > "$TMP/lists" 2>&1 <<'PY'
import json, re, sys
report, doc = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
warned = sorted({c["name"] for c in json.load(open(report))["cases"] if c.get("warnings")})
para = doc[doc.index("The built-in cases that warn"):]
para = para[:para.index("\n\n")]
listed = sorted(set(re.findall(r"`([a-z0-9_]+)`", para)) - {"reduce", "gather"})
print("warned:", " ".join(warned))
print("listed:", " ".join(listed))
sys.exit(0 if warned == listed else 1)
PY
if [ $? -eq 0 ]; then ok; else bad "docs/running.md's warning cases differ from the run's:"; cat "$TMP/lists"; fi
finish
