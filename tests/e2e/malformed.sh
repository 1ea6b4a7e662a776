#!/usr/bin/env bash
# Every malformed case file makes the tool exit 2 with one
# "file:line:col: expected ..." line on stderr and nothing else crashing
# (test_parser asserts each exact message; this asserts the CLI contract).
. "$(dirname "$0")/common.bash"
for f in "$SRC"/tests/malformed/*.case; do
  expect_exit 2 -- "$BIN" --oracle-only "$f"
  expect_grep "^$f:[0-9]+:[0-9]+: expected " "$TMP/out"
  # in the distributed mode too: the file is rejected before any mpiexec
  expect_exit 2 -- "$BIN" "$f"
done
# one bad file among good ones: still exit 2, the good ones are not run
expect_exit 2 -- "$BIN" --oracle-only "$SRC/cases/pytorch-58005" "$SRC/tests/malformed/unknown_op.case"
expect_grep "unknown_op.case:5:5: expected a known function, got 'al_reduce'" "$TMP/out"
finish
