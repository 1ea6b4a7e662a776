#!/usr/bin/env bash
# The built-in cases through real JAX (issue 54 item 3): --backend jax:shard_map and
# jax:shard_map_novma run each case as one shard_map over W host devices, and the tool
# judges the devices' values and gradients against the oracle as it judges PyTorch
# ranks. What JAX 0.10 does, as its documentation and source say: psum, pmean,
# all_gather, psum_scatter, all_to_all and ppermute have transposes, right with
# check_vma on and off (the cases pass); pmax and pmin have no differentiation rule
# (NotImplementedError at backward); lax has no product reduction (the case is skipped
# with that reason); one SPMD program has one shape per value (ragged blocks skipped).
. "$(dirname "$0")/common.bash"
PY="${CG_JAX_PYTHON:-/opt/venv-jax/bin/python}"
if [ ! -x "$PY" ] || ! "$PY" -c "import jax" > /dev/null 2>&1; then
  echo "no jax at $PY (scripts/jax-venv.sh makes it)"
  [ "${CG_REQUIRE_JAX:-0}" = 1 ] && exit 1
  exit 77
fi
export COLLGRAD_JAX_PYTHON="$PY"
C="$SRC/cases/collectives"
CASES=("$C/all_reduce_sum.case" "$C/all_reduce_avg.case" "$C/all_reduce_max_ties.case" "$C/all_reduce_prod_zeros.case"
       "$C/all_to_all_even.case" "$C/broadcast_last_root.case" "$C/reduce_scatter_sum.case" "$C/reduce_sum_avg.case"
       "$C/scatter_last_root.case" "$C/send_recv_ring.case" "$C/gather_ragged.case" "$SRC/cases/allgather-blog")
for api in shard_map shard_map_novma; do
  for w in 2 4; do
    expect_exit 1 -- timeout -k 5 300 "$BIN" --backend "jax:$api" --world "$w" --json "$TMP/$api-$w.json" "${CASES[@]}"
    cp "$TMP/out" "$TMP/$api-$w.out"
    for c in all_reduce_sum all_reduce_avg all_to_all_even broadcast_last_root reduce_scatter_sum reduce_sum_avg \
             scatter_last_root send_recv_ring linear_allgather; do
      expect_grep "^ *[0-9]+/[0-9]+ $c \(W=$w, rules=jax:$api\) \.+ Passed" "$TMP/$api-$w.out"
    done
    expect_grep "all_reduce_max_ties \(W=$w, rules=jax:$api\) \.+ \*\*\*Failed" "$TMP/$api-$w.out"
    expect_grep "NotImplementedError at backward: Differentiation rule for 'pmax' not implemented" "$TMP/$api-$w.out"
    expect_grep "skipped: no product reduction in JAX \(lax has psum, pmean, pmax, pmin\): all_reduce with prod \(shard_map cannot express it; .*all_reduce_prod_zeros.case:[0-9]+:[0-9]+\)" \
      "$TMP/$api-$w.out"
    expect_grep "skipped: one SPMD program, one shape: a size differs between devices .*gather_ragged.case:[0-9:]+\)" \
      "$TMP/$api-$w.out"
    expect_grep "^jax:$api: jax [0-9.]+, cpu, check_vma=$([ $api = shard_map ] && echo True || echo False), W=$w host devices" \
      "$TMP/$api-$w.out"
  done
done
python3 - "$TMP/shard_map-2.json" > "$TMP/fw" 2>&1 <<'PY' && ok || bad "report framework: $(cat "$TMP/fw")"
import json, sys
r = json.load(open(sys.argv[1]))
fw = r["framework"]
assert fw["name"] == "jax" and fw["api"] == "shard_map" and fw["version"], fw
PY
# the matrix's JAX columns: the same facts as cells, and the version each column ran
expect_exit 0 -- timeout -k 5 300 "$BIN" matrix --backends reference,jax:shard_map,jax:shard_map_novma --world 2 \
  --md "$TMP/m.md" "$C/all_reduce_sum.case" "$C/all_reduce_max_ties.case" "$C/all_reduce_prod_zeros.case"
expect_grep '^\| all_reduce_sum \| 2 \| correct \| correct \| correct \|$' "$TMP/m.md"
expect_grep '^\| all_reduce_max_ties \| 2 \| correct \| refused: NotImplementedError at backward: .* \| refused: NotImplementedError at backward: .*\|$' "$TMP/m.md"
expect_grep '^\| all_reduce_prod_zeros \| 2 \| correct \| skipped: no product reduction in JAX .* \| skipped: no product reduction in JAX .*\|$' "$TMP/m.md"
expect_grep '^`jax:shard_map`: jax [0-9.]+ over cpu, check_vma=True\.' "$TMP/m.md"
expect_grep '^`jax:shard_map_novma`: jax [0-9.]+ over cpu, check_vma=False\.' "$TMP/m.md"
expect_exit 2 -- "$BIN" matrix --backends jax:pmap "$C/all_reduce_sum.case"
expect_grep "or jax:shard_map or jax:shard_map_novma\)" "$TMP/out"
expect_exit 2 -- "$BIN" --backend jax:pmap "$C/all_reduce_sum.case"
expect_grep "or jax:shard_map or jax:shard_map_novma, got 'jax:pmap'" "$TMP/out"
COLLGRAD_JAX_PYTHON=/nonexistent/python expect_exit 3 -- "$BIN" --backend jax:shard_map "$C/all_reduce_sum.case"
expect_grep "cannot import jax" "$TMP/out"
validate_reports
echo "jax_backend: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
