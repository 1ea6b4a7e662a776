#!/usr/bin/env bash
# A case cannot ask for more memory than the limits allow (issue 26 item 5):
# on ae24178 `zeros(300000000)` grew to 23.7 GB until the OOM killer ended the
# run. Each limit is checked before the allocation, is a bad case (exit 2),
# and its message names the option that raises it. Every command runs under
# `timeout` and a 4 GB address-space cap: an allocation attempt of the
# refused size would fail the run instead of passing it.
. "$(dirname "$0")/common.bash"
T="timeout -k 2 60"
# (not under ASan, which reserves terabytes of address space for its shadow)
capped() { if [ -n "${ASAN_OPTIONS:-}" ]; then "$@"; else (ulimit -v 4000000; "$@"); fi; }

printf 'case huge\nworlds 2\nx = param(zeros(300000000))\ny = all_reduce(x, sum)\nbackward(sum(y))\n' > "$TMP/huge.case"
for mode in --oracle-only --check-sync; do
  expect_exit 2 -- capped $T "$BIN" $mode --no-fd --json "$TMP/huge$mode.json" "$TMP/huge.case"
  expect_grep "huge.case:3:11: expected a tensor of at most 16777216 elements \(the limit; raise it with --max-elements\), got 300000000" "$TMP/out"
done
# the per-value limit, lowered and raised
printf 'case ten\nworlds 2\nx = param(ones(10))\ny = all_reduce(x, sum)\nbackward(sum(y))\n' > "$TMP/ten.case"
expect_exit 2 -- $T "$BIN" --oracle-only --max-elements 9 "$TMP/ten.case"
expect_grep "expected a tensor of at most 9 elements" "$TMP/out"
expect_exit 0 -- $T "$BIN" --oracle-only --max-elements 10 "$TMP/ten.case"
expect_exit 2 -- $T "$BIN" --max-elements 9 "$TMP/ten.case"   # the ranks run under it too
expect_grep "expected a tensor of at most 9 elements" "$TMP/out"
# all of a rank's tensors together: 9 values of 10M elements stay under 16M
# each but total 90M (plus their gradients) over a lowered 50M
{ printf 'case many\nworlds 1\n'; for i in 1 2 3 4 5 6 7 8 9; do printf 'x%d = param(zeros(10000000))\n' $i; done
  printf 'backward(sum(x1))\n'; } > "$TMP/many.case"
expect_exit 2 -- capped $T "$BIN" --oracle-only --no-fd --max-case-elements 50M "$TMP/many.case"
expect_grep "expected the tensors of a rank to total at most 52428800 elements \(the limit; raise it with --max-case-elements\)" "$TMP/out"
expect_exit 2 -- $T "$BIN" --oracle-only --max-elements 1.5 "$TMP/ten.case"
expect_grep "expected an element count \(digits, optionally K, M or G\) after --max-elements, got '1.5'" "$TMP/out"
expect_exit 0 -- $T "$BIN" --help
expect_grep "--max-elements N .*default" "$TMP/out"
finish
