#!/usr/bin/env bash
# kill -9 of the launcher (issue 12 items 4 and 9): a W=4 run (one rank held in
# an injected hang, so the job is surely running) loses its launcher to
# SIGKILL; 5 s later no process of the run is left (mpiexec dies with the
# launcher, the ranks with mpiexec), and the next run removes the temporary
# directory the killed one could not. TMPDIR is the test's own, which also
# shows that it is honoured, and names every process of the run.
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_backward_total.case"
export TMPDIR="$TMP/tmp"
mkdir -p "$TMPDIR"
"$BIN" --world 4 --inject hang:1 --timeout 120 "$CASE" > "$TMP/run.out" 2>&1 &
launcher=$!
for _ in $(seq 1 100); do # up to 20 s for every rank to start
    [ "$(pgrep -fc "$TMPDIR/collgrad-" || true)" -ge 5 ] && break
    sleep 0.2
done
[ "$(pgrep -fc "$TMPDIR/collgrad-" || true)" -ge 5 ] && ok || bad "the run did not start (mpiexec and 4 ranks)"
ls -d "$TMPDIR"/collgrad-?????? > /dev/null 2>&1 && ok || bad "no temporary directory under TMPDIR"
kill -9 "$launcher"
wait "$launcher" 2> /dev/null
sleep 5
left=$(pgrep -fa "$TMPDIR/collgrad-" || true)
[ -z "$left" ] && ok || { bad "processes of the run survived the launcher: $left"; pkill -9 -f "$TMPDIR/collgrad-"; }
# the killed launcher's directory is still there; the next run reaps it
ls -d "$TMPDIR"/collgrad-?????? > /dev/null 2>&1 && ok || bad "expected the killed run's directory to remain"
expect_exit 0 -- "$BIN" --world 2 "$CASE"
ls -d "$TMPDIR"/collgrad-?????? > /dev/null 2>&1 && bad "a stale directory survived the next run: $(ls "$TMPDIR")" || ok
finish
