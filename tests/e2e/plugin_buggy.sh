#!/usr/bin/env bash
# A user's transport as a plugin (examples/buggy_transport): its reduce_scatter
# hands every rank the wrong rank's slice, and the tool must say so; its
# all_reduce is right and must pass; a plugin of another ABI version is
# refused before anything runs. CG_EXAMPLES_DIR comes from tests/CMakeLists.txt.
. "$(dirname "$0")/common.bash"
EXAMPLES="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}"
BUGGY="$EXAMPLES/libbuggy_transport.so"
BAD_ABI="$EXAMPLES/libbad_abi.so"
COLL="$SRC/cases/collectives"

# the example wraps the built-in transport through the public ABI: it holds
# no MPI code of its own (issue 23 item 5: not a copy of transport_mpi.c)
if grep -q "MPI_\|mpi\.h" "$SRC/examples/buggy_transport/buggy_transport.c"; then
  bad "buggy_transport.c calls MPI itself instead of wrapping collgrad_builtin_transport(\"mpi\")"
else ok; fi

# the bug: rank r gets rank W-1-r's block of y (W=1 cannot show it)
expect_exit 1 -- "$BIN" --transport "$BUGGY" --json "$TMP/rs.json" "$COLL/reduce_scatter_sum.case"
expect_grep "reduce_scatter_sum \(W=1\) \.+ Passed" "$TMP/out"
expect_grep "reduce_scatter_sum \(W=2\) \.+ \*\*\*Failed" "$TMP/out"
expect_grep "fail value\(y\) rank 0 rules=reference: expected \[1, 3\] observed \[5, 7\]" "$TMP/out"
expect_grep "fail value\(y\) rank 3 rules=reference: expected \[30, 34\] observed \[6, 10\]" "$TMP/out"
expect_grep "\"transport\":[[:space:]]*\".*libbuggy_transport.so\"" "$TMP/rs.json"
# ... and the diagnosis names the problem
expect_grep "diagnosis: the transport's reduce_scatter delivers results in the wrong rank order: rank 0 holds rank 1's value of y" "$TMP/out"
expect_grep '"matches":[[:space:]]*\[[[:space:]]*"wrong_rank_order"' "$TMP/rs.json"

# its gradient face: all_gather's backward is a reduce_scatter, so the forward values are right
# and the gradients land on the wrong ranks. x_r = r + 1 (2 elements), loss_r = (r + 1) sum(y * y):
# dx_k = 2 x_k (1 + 2 + 3) = 12 (k + 1), so [12, 24, 36] by rank; rank r gets rank 2 - r's
cat > "$TMP/gather_face.case" <<'CASE'
case gather_face
world 3
x = param(full(rank + 1, 2))
y = all_gather(x)
backward(sum(y * y) * (rank + 1))
CASE
expect_exit 1 -- "$BIN" --transport "$BUGGY" --json "$TMP/face.json" "$TMP/gather_face.case"
expect_grep "fail per_rank\(x\) rank 0 rules=reference: expected \[12, 12\] observed \[36, 36\]" "$TMP/out"
expect_grep "diagnosis: gradients arrive in the wrong rank order: rank 0 holds rank 2's gradient of x \(the forward values are right" "$TMP/out"
expect_grep '"matches":[[:space:]]*\[[[:space:]]*"wrong_rank_order"' "$TMP/face.json"
# the same numbers, right, over the built-in transport
expect_exit 0 -- "$BIN" "$TMP/gather_face.case"
# with a local term besides (explore's shrunk s1_p2): no permutation of the truth [8, 20] is the
# observed [14, 14] (gathered part [6, 12] swapped, plus 2 x_r (r + 1) = [2, 8]), but a re-run over
# a transport whose reduce_scatter reverses the blocks gives it
cat > "$TMP/mixed_face.case" <<'CASE'
case mixed_face
world 2
x = param(full(rank + 1, 1))
y = all_gather(x)
backward(sum(y * y) * (rank + 1))
backward(sum(x * x) * (rank + 1))
CASE
expect_exit 1 -- "$BIN" --transport "$BUGGY" --json "$TMP/mixed.json" "$TMP/mixed_face.case"
expect_grep "fail per_rank\(x\) rank 0 rules=reference: expected \[8\] observed \[14\]" "$TMP/out"
expect_grep "fail per_rank\(x\) rank 1 rules=reference: expected \[20\] observed \[14\]" "$TMP/out"
expect_grep "diagnosis: matches wrong_rank_order: the transport delivers a collective's blocks to the wrong ranks" "$TMP/out"

# confined to reduce_scatter: all_reduce through the same plugin passes
expect_exit 0 -- "$BIN" --transport "$BUGGY" "$COLL/all_reduce_sum.case"
expect_grep "100% cases passed" "$TMP/out"

# a table of another ABI version: refused once, exit 3, nothing launched
expect_exit 3 -- "$BIN" --transport "$BAD_ABI" "$COLL/all_reduce_sum.case"
expect_grep "libbad_abi.so: transport ABI version 1, this collgrad-check needs 3: rebuild it against this collgrad_transport.h \(ABI 3 replaces the entry per collective with one entry, call, taking a cgt_call; ABI 2 added split, for process groups" "$TMP/out"
if grep -q "Passed\|Failed\|Error " "$TMP/out"; then bad "no job should run with a refused transport"; else ok; fi
# a file that is not there: the same refusal, with the loader's reason
# a plugin path that cannot be read is a usage error, found before any launch (preflight.c)
expect_exit 2 -- "$BIN" --transport "$TMP/no-such-plugin.so" "$COLL/all_reduce_sum.case"
expect_grep "no-such-plugin.so: cannot read the plugin: No such file or directory" "$TMP/out"
finish
