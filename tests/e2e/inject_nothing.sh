#!/usr/bin/env bash
# A fault injection that injects nothing fails the run (issue 26 item 1). On
# ae24178 each of these exited 0 with every check "passed": a self-test that
# tested nothing passed. Now each exits 2 with "injected nothing" and the
# reason, and the JSON report's "injection" says the same; a spec that does
# inject is counted there and still fails its checks (exit 1).
. "$(dirname "$0")/common.bash"
C="$SRC/cases/collectives"
T="timeout -k 2 60"

nothing() { # nothing "REASON REGEX" -- ARGS...: exit 2, the message, the report
  local why="$1"; shift; [ "$1" = "--" ] && shift
  rm -f "$TMP/r.json"
  expect_exit 2 -- $T "$BIN" --no-fd --timeout 5 --json "$TMP/r.json" "$@"
  expect_grep "^collgrad-check: --inject [^ ]+ injected nothing: $why" "$TMP/out"
  python3 - "$TMP/r.json" <<'PY' > "$TMP/py.out" 2>&1 && ok || bad "report: $(cat "$TMP/py.out")"
import json, sys
inj = json.load(open(sys.argv[1]))["injection"]
assert inj["status"] == "injected nothing" and inj["count"] == 0 and inj["reason"], inj
PY
}

# rank out of range, a filter no case matches, a hang on a rank that never runs
nothing "rank 9 is in no world this run ran \(the largest was W=2\)" -- --world 2 --inject wrong_sum:9 "$C/all_reduce_sum.case"
nothing "no case this run ran has 'nomatch' in its name" -- --world 2 --inject wrong_sum:0:nomatch "$C/all_reduce_sum.case"
nothing "rank 99 is in no world" -- --world 2 --inject hang:99 "$C/all_reduce_sum.case"
nothing "rank 3 is in no world" -- --world 2 --inject exit:3 "$C/all_reduce_sum.case"
# W=1: no second block to swap with
nothing "every call it applies to kept its values" -- --world 1 --inject swap_slices:0 "$C/all_gather_ragged.case"
# a bit flipped in 0.0 (a subnormal: inside every tolerance), forward and backward
cat > "$TMP/zeros.case" <<'EOF'
case zeros_only
worlds 2
x = param(zeros(3))
y = all_reduce(x, sum)
backward(y * y)
EOF
nothing "every call it applies to kept its values" -- --inject bit_flip:0 "$TMP/zeros.case"
# a wrong_sum of 1 on 2e10 rounds away in f32 (its spacing there is 2048) and
# hides inside f64's default rtol (1e-9 * 2e10 = 20)
cat > "$TMP/big_f32.case" <<'EOF'
case big_f32
worlds 2
dtype f32
x = param(ones(2) * 1e10)
y = all_reduce(x, sum)
backward(y * 1e10)
EOF
nothing "every call it applies to kept its values" -- --inject wrong_sum:0 "$TMP/big_f32.case"
sed 's/dtype f32/dtype f64/; s/big_f32/big_f64/' "$TMP/big_f32.case" > "$TMP/big_f64.case"
nothing "every call it applies to kept its values" -- --inject wrong_sum:0 "$TMP/big_f64.case"
# at 1e3 it shows (1 > 1e-9 * 2e3 + 1e-12): counted, and caught
sed 's/1e10/1e3/g; s/big_f64/small_f64/' "$TMP/big_f64.case" > "$TMP/small_f64.case"
expect_exit 1 -- $T "$BIN" --no-fd --json "$TMP/f64.json" --inject wrong_sum:0 "$TMP/small_f64.case"
python3 - "$TMP/f64.json" <<'PY' > "$TMP/py.out" 2>&1 && ok || bad "f64 report: $(cat "$TMP/py.out")"
import json, sys
r = json.load(open(sys.argv[1]))
# rank 0's forward all_reduce and its backward all_reduce: one call each
assert r["injection"] == {"spec": "wrong_sum:0", "count": 2, "status": "injected", "reason": None}, r["injection"]
assert [c["injected"] for c in r["cases"]] == [2], [c.get("injected") for c in r["cases"]]
PY
# a hang that fires is counted (the run still ends at the deadline, exit 3)
expect_exit 3 -- $T "$BIN" --world 2 --no-fd --timeout 3 --json "$TMP/hang.json" --inject hang:1 "$C/all_reduce_sum.case"
python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["injection"]; assert i["count"]==1 and i["status"]=="injected", i' \
  "$TMP/hang.json" && ok || bad "hang:1 not counted"
# --oracle-only has no transport to inject into
nothing "--oracle-only runs no transport to inject into" -- --oracle-only --inject wrong_sum:0 "$C/all_reduce_sum.case"
# a spec that is not KIND[:RANK[:CASE]] is refused before anything runs (each of these ran:
# "hang:1x" and "wrong_sum:1x" as rank 1, "hang:0:" as every case, a 20-digit rank overflowed)
for spec in hang:1x wrong_sum:1x hang:0: wrong_sum:1: hang:99999999999999999999 exit:-1 hang exit: bit_flip:0x1; do
  expect_exit 2 -- "$BIN" --world 2 --inject "$spec" "$C/all_reduce_avg.case"
  expect_grep "^collgrad-check: expected --inject KIND\[:RANK\[:CASE\]\] with KIND one of hang, exit, .*; got '$spec'$" "$TMP/out"
  grep -q "passed" "$TMP/out" && bad "--inject $spec ran" || ok
done
finish
