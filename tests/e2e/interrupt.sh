#!/usr/bin/env bash
# SIGTERM in the middle of a run: the jobs are stopped, and the report still
# says what finished and what did not (atomically written, valid JSON).
. "$(dirname "$0")/common.bash"
"$BIN" --json "$TMP/r.json" > "$TMP/out" 2>&1 &
pid=$!
sleep 1.5
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 3 ] && ok || bad "exit $rc after SIGTERM (wanted 3)"
expect_grep '"summary":' "$TMP/r.json"
expect_grep '"status":[[:space:]]*"pass"' "$TMP/r.json"
expect_grep '"message":[[:space:]]*"not run: interrupted by signal 15"' "$TMP/r.json"
ls "$TMP"/r.json.tmp.* > /dev/null 2>&1 && bad "a temporary report was left behind" || ok
finish
