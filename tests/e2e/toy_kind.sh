#!/usr/bin/env bash
# A new collective kind through docs/architecture.md's list alone (issue 63):
# the toy kind of tests/toy_kind (reduce_bcast: a sum given to every rank, as a
# reduce to rank 0 and a broadcast from it) is one C file, handed to a build of
# this tree with -DCG_EXTRA_KINDS, one Python file, named by COLLGRAD_KINDS, and
# one case whose numbers come from the math (W (W+1) / 2). Nothing in the tree
# is edited. It must then run as a built-in kind does: on the oracle, on MPI
# ranks, on the threads transport (every case against the oracle, the toy's
# among them), and on real PyTorch ranks, where pytorch:nn is right and
# pytorch:c10d (no autograd: identity through both in-place calls) is not.
. "$(dirname "$0")/common.bash"
CMAKE="${CG_CMAKE:-cmake}"
TOY="$SRC/tests/toy_kind"

# the toy is exactly its three files, and the page lists what it uses
expect_exit 0 -- sh -c "cd '$TOY' && ls | sort | tr '\n' ' '"
expect_grep "^reduce_bcast.c reduce_bcast.case reduce_bcast.py $" "$TMP/out"
expect_grep "CG_EXTRA_KINDS" "$SRC/docs/architecture.md"
expect_grep "COLLGRAD_KINDS" "$SRC/docs/architecture.md"
tree_before=$(git -C "$SRC" status --porcelain 2>/dev/null || true)

expect_exit 0 -- "$CMAKE" -S "$SRC" -B "$TMP/build" -DCG_EXTRA_KINDS="$TOY/reduce_bcast.c" -DCG_WERROR=ON -DCMAKE_BUILD_TYPE=None  # unoptimised: it builds faster
expect_exit 0 -- "$CMAKE" --build "$TMP/build" -j2 --target collgrad-check test_threads_run test_plan
TBIN="$TMP/build/collgrad-check"

# its row in the table: its own kind, named by its words, its transpose's transpose itself
expect_exit 0 -- "$TMP/build/tests/test_plan"
CASE="$TOY/reduce_bcast.case"

# the language knows its word; a built-in tool does not
expect_exit 2 -- "$BIN" --oracle-only "$CASE"
expect_grep "reduce_bcast" "$TMP/out"

# the oracle, then MPI ranks under the reference rules, W = 1..4
for mode in --oracle-only ""; do
  expect_exit 0 -- "$TBIN" $mode "$CASE"
  expect_grep "^4 passed, 0 failed, 0 errors, 0 skipped" "$TMP/out"
done
# a transport whose sums are wrong is caught in the toy's forward
expect_exit 1 -- "$TBIN" --world 2 --inject wrong_sum "$CASE"
expect_grep "the transport's reduce_bcast computes a wrong forward value of y" "$TMP/out"

# explore's generator draws it from its row and words: programs the language
# takes (none rejected: no op= on a kind whose words have none), in f16 too,
# where the oracle and finite differences agree on every one
expect_exit 0 -- "$TBIN" explore --halves --no-mpi --count 150 --seed 3 --out "$TMP/explore"
expect_grep ": 0 disagreements of the tool \(oracle, finite differences\), 0 rejected programs" "$TMP/out"
expect_exit 0 -- sh -c "grep -l 'reduce_bcast(' '$TMP/explore/programs/'*.case | wc -l"
expect_grep "^([1-9][0-9]+)$" "$TMP/out"

# the threads transport: test_threads_run's reference-against-oracle check
# over the built-in cases and the toy's
mkdir -p "$TMP/cases/toy_kind" && cp -r "$SRC/cases/." "$TMP/cases/" && cp "$CASE" "$TMP/cases/toy_kind/"
expect_exit 0 -- env COLLGRAD_CASES_DIR="$TMP/cases" "$TMP/build/tests/test_threads_run"
expect_grep "100%: Checks: [0-9]+, Failures: 0, Errors: 0" "$TMP/out"

# real PyTorch ranks: the Python side named, as a kind from outside the tree
export COLLGRAD_KINDS="$TOY/reduce_bcast.py"
expect_exit 0 -- "$TBIN" --backend pytorch:nn --world 2 "$CASE"
expect_grep "reduce_bcast \(W=2, rules=pytorch:nn\) \.+ Passed" "$TMP/out"
expect_exit 1 -- "$TBIN" --backend pytorch:c10d --world 2 "$CASE"
expect_grep "fail per_rank\(x\) rank 0 rules=pytorch:c10d: expected \[3, 3\] observed \[1, 1\]" "$TMP/out"
expect_grep "fail per_rank\(x\) rank 1 rules=pytorch:c10d: expected \[3, 3\] observed \[2, 2\]" "$TMP/out"
# an API that lacks a kind the toy is made of refuses it, as it refuses that kind
expect_exit 0 -- "$TBIN" --backend pytorch:gatherlayer --world 2 "$CASE"
expect_grep "skipped: .*reduce" "$TMP/out"
# a kind's file that does not load is the user's input, refused by name (exit 2, not
# infrastructure), at every world size the case lists (the ranks refuse once)
printf 'NAME = "reduce_bcast"\nUSES = ("reduce",\n' > "$TMP/broken_kind.py"
for bad in "$TMP/no_such_kind.py:no such Python file" "$TMP/broken_kind.py:SyntaxError"; do
  expect_exit 2 -- env COLLGRAD_KINDS="${bad%%:*}" "$TBIN" --backend pytorch:nn "$CASE"
  expect_grep "^0 passed, 0 failed, 4 errors, 0 skipped" "$TMP/out"
  [ "$(grep -cE "^ +COLLGRAD_KINDS: ${bad%%:*}: ${bad#*:}" "$TMP/out")" = 4 ] && ok || bad "not refused at W=1..4"
done
unset COLLGRAD_KINDS
expect_exit 0 -- "$TBIN" --backend pytorch:nn --world 2 "$CASE"
expect_grep "skipped: .*no reduce_bcast" "$TMP/out"

# and nothing in the tree was touched
[ "$(git -C "$SRC" status --porcelain 2>/dev/null || true)" = "$tree_before" ] && ok || bad "the tree changed"
finish
