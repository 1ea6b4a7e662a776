#!/usr/bin/env bash
# Every built-in case passes in the oracle (numbers from the documents and
# finite differences); the JSON report has the promised shape.
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$BIN" --oracle-only --json "$TMP/r.json"
expect_grep "^[0-9]+ passed, 0 failed, 0 errors, 0 skipped$" "$TMP/out"
expect_grep '"schema":[[:space:]]*"collgrad-check/report/1"' "$TMP/r.json"
expect_grep '"errors":[[:space:]]*0' "$TMP/r.json"
expect_grep '"finite_difference":[[:space:]]*\{' "$TMP/r.json"
# a wrong number in a case file is a failing check: exit 1, both numbers shown
expect_exit 1 -- "$BIN" --oracle-only --json "$TMP/w.json" "$SRC/tests/data/wrong_expectation.case"
expect_grep "expected \[41\] observed \[40\]" "$TMP/out"
expect_grep '"status":[[:space:]]*"fail"' "$TMP/w.json"
# a program that is wrong at run time is a bad case file: exit 2, file:line:col
expect_exit 2 -- "$BIN" --oracle-only "$SRC/tests/data/shape_mismatch.case"
expect_grep "shape_mismatch.case:7:7: expected matching shapes for add, got \[2\] and \[3\] \(rank 1, world 2\)" "$TMP/out"
finish
