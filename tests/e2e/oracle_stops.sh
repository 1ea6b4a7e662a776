#!/usr/bin/env bash
# The oracle-only mode answers a stop in every phase (issue 26 item 7). On
# ae24178 `--timeout` did not apply to oracle-only runs (a 5,000-parameter
# case ran 200 s past `--timeout 5`), SIGINT waited for a slow matmul to end
# (44.9 s), and out of memory in backward was exit 2 ("backward: out of
# memory"). Now: the deadline and SIGINT/SIGTERM end the job within about a
# second (exit 3, the report written, the phase and case named), and out of
# memory is exit 3 "out of memory in <phase> of case <name>".
. "$(dirname "$0")/common.bash"
T="timeout -k 2 60"
# a 250x250 product: its forward pass takes about 0.1 s, its finite differences re-run the program
# tens of times (about 8 s idle). A 300x300 one spent the whole 2 s in the forward pass once, on a
# CI machine loaded by an 8-rank job beside it; this test also runs alone (RUN_SERIAL).
printf 'case slow_fd\nworlds 2\na = param(randn(250, 250))\nb = a @ a\nc = b @ a\nbackward(sum(c))\n' > "$TMP/fd.case"
t0=$(date +%s.%N)
expect_exit 3 -- $T "$BIN" --oracle-only --timeout 2 --json "$TMP/fd.json" "$TMP/fd.case"
t1=$(date +%s.%N)
# (the finite differences here; a slow build, ASan's, may still be in the backward pass)
expect_grep "deadline: the 2 s job limit \(--timeout\) passed in the (backward pass|finite differences) of case slow_fd" "$TMP/out"
python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 8 else 1)" && ok || bad "the 2 s deadline ended the run after $(python3 -c "print(round($t1 - $t0, 1))") s"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"][0]; assert c["status"]=="error" and c["error_class"]==3 and "deadline" in c["message"], c' \
  "$TMP/fd.json" && ok || bad "the deadline is not in the report"

# a 1500x1500 product (seconds per matmul), interrupted: answered within ~1 s
printf 'case slow_matmul\nworlds 2\na = param(randn(1500, 1500))\nb = a @ a\nc = b @ a\nbackward(sum(c))\n' > "$TMP/mm.case"
for sig in INT TERM; do
  rm -f "$TMP/mm.json"
  "$BIN" --oracle-only --no-fd --json "$TMP/mm.json" "$TMP/mm.case" > "$TMP/out" 2>&1 &
  pid=$!
  sleep 1.5
  t0=$(date +%s.%N)
  kill -$sig $pid
  wait $pid; rc=$?
  t1=$(date +%s.%N)
  [ "$rc" = 3 ] && ok || bad "SIG$sig: exit $rc (wanted 3)"
  python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 1.5 else 1)" && ok || bad "SIG$sig answered after $(python3 -c "print(round($t1 - $t0, 2))") s"
  expect_grep "interrupted by signal [0-9]+ in the (forward|backward) pass of case slow_matmul" "$TMP/out"
  [ -s "$TMP/mm.json" ] && ok || bad "SIG$sig: no report written"
done

# out of memory: the highest address-space limit (ulimit -v, in 100 MB steps between 0.3 and
# 4 GB) at which the case stops passing is just under its peak, the backward pass (not under
# ASan, which needs terabytes of address space). Found by bisection: passing runs take about a
# second each, and walking down from 4 GB took some 30 of them (most of this test's 70 s).
if [ -z "${ASAN_OPTIONS:-}" ]; then
  printf 'case oom_backward\nworlds 1\nx = param(ones(10000000))\ny = x * x\nz = y * y\nw = z * z\nbackward(sum(w))\n' > "$TMP/oom.case"
  under() { (ulimit -v "$(($1 * 100000))"; exec "$BIN" --oracle-only --no-fd "$TMP/oom.case") > "$TMP/oom.out" 2>&1; }
  lo=3 hi=40  # fails at lo, passes at hi (x 100 MB)
  if ! under "$hi"; then bad "the case does not pass under ulimit -v ${hi}00000"
  elif under "$lo"; then bad "the case never ran out of memory"
  else
    while [ $((hi - lo)) -gt 1 ]; do
      mid=$(((lo + hi) / 2))
      if under "$mid"; then hi=$mid; else lo=$mid; fi
    done
    under "$lo"; rc=$?
    [ "$rc" = 3 ] && ok || { bad "out of memory at ulimit -v ${lo}00000: exit $rc (wanted 3)"; tail -3 "$TMP/oom.out"; }
    expect_grep "out of memory in the backward pass of case oom_backward" "$TMP/oom.out"
  fi
fi
finish
