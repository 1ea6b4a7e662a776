#!/usr/bin/env bash
# The main job: every built-in case over MPI at each of its world sizes, with
# reference rules and the emulations its rules= expectations name.
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$BIN" --json "$TMP/r.json" --junit "$TMP/r.xml"
expect_grep "^[0-9]+ passed, 0 failed, 0 errors, 0 skipped$" "$TMP/out"
expect_grep "allreduce_prod_scaled \(W=2, rules=torch-nn@1.13\) \.+ Passed" "$TMP/out"
expect_grep "allgather_product_mean \(W=2, rules=gatherlayer\) \.+ Passed" "$TMP/out"
expect_grep "linear_allgather \(W=8\) \.+ Passed" "$TMP/out"
expect_grep '"transport":[[:space:]]*"mpi"' "$TMP/r.json"
expect_grep '"mode":[[:space:]]*"distributed"' "$TMP/r.json"
expect_grep '<testsuite name="collgrad-check" tests="[0-9]+" failures="0" errors="0"' "$TMP/r.xml"
# inside mpiexec the tool runs the cases on those ranks itself
expect_exit 0 -- mpiexec -n 2 "$BIN" --json "$TMP/d.json" "$SRC/cases/pytorch-58005"
expect_grep "allreduce_sum_square \(W=2\) \.+ Passed" "$TMP/out"
expect_grep '"world":[[:space:]]*2' "$TMP/d.json"
finish
