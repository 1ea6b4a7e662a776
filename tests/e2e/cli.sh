#!/usr/bin/env bash
# The CLI contract: help, version, list, usage errors exit 2.
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$BIN" --help
expect_grep "usage: collgrad-check" "$TMP/out"
expect_exit 0 -- "$BIN" --version
expect_grep "^collgrad-check [0-9]+\.[0-9]+\.[0-9]+$" "$TMP/out"
expect_exit 0 -- "$BIN" --list
expect_grep "allreduce_sum_square +W=1,2,4" "$TMP/out"
expect_exit 2 -- "$BIN" --frobnicate
expect_grep "expected an option \(see --help\), got '--frobnicate'" "$TMP/out"
expect_exit 2 -- "$BIN" --world 0
expect_grep "expected a world size in 1..64 after --world, got '0'" "$TMP/out"
expect_exit 2 -- "$BIN" --json
expect_exit 2 -- "$BIN" "$TMP/no-such-file.case"
expect_grep "no-such-file.case: cannot read" "$TMP/out"
finish
