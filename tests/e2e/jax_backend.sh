#!/usr/bin/env bash
# The built-in cases through real JAX (issue 54 item 3): --backend jax:shard_map and
# jax:shard_map_novma run each case as one shard_map over W host devices, and the tool
# judges the devices' values and gradients against the oracle as it judges PyTorch
# ranks. What JAX 0.10 does, as its documentation and source say: psum, pmean,
# all_gather, psum_scatter, all_to_all and ppermute have transposes, right with
# check_vma on and off (the cases pass); pmax and pmin have no differentiation rule
# (NotImplementedError at backward); lax has no product reduction, so a product runs as the
# product of the all_gather's blocks (differentiable, zeros included: the case passes);
# pbroadcast has no CPU lowering in jax 0.10.2, so broadcast runs as its documented
# equivalent, psum of the root's block; one SPMD program has one shape per value (ragged
# blocks skipped). Each job's report names the primitives it ran ("ran"), each matrix
# cell too ("via"). The three cases/jax programs, whose case `jax` line picks a spelling
# whose gradients depend on check_vma: the cells show what JAX does, per column.
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
             scatter_last_root send_recv_ring linear_allgather all_reduce_prod_zeros; do
      expect_grep "^ *[0-9]+/[0-9]+ $c \(W=$w, rules=jax:$api\) \.+ Passed" "$TMP/$api-$w.out"
    done
    expect_grep "all_reduce_max_ties \(W=$w, rules=jax:$api\) \.+ \*\*\*Failed" "$TMP/$api-$w.out"
    expect_grep "NotImplementedError at backward: Differentiation rule for 'pmax' not implemented" "$TMP/$api-$w.out"
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
# what each job ran, from the math of each spelling (collectives.py's table)
python3 - "$TMP/shard_map-4.json" > "$TMP/ran" 2>&1 <<'PY' && ok || bad "ran: $(cat "$TMP/ran")"
import json, sys
ran = {c["name"]: c.get("ran") for c in json.load(open(sys.argv[1]))["cases"]}
want = {"all_reduce_sum": "psum", "all_reduce_avg": "pmean", "all_reduce_max_ties": "pmax",
        "all_reduce_prod_zeros": "all_gather+prod", "all_to_all_even": "all_to_all",
        "broadcast_last_root": "psum(root's block)", "reduce_scatter_sum": "psum_scatter",
        "reduce_sum_avg": "psum, where(root), pmean", "scatter_last_root": "psum_scatter(root's block)",
        "send_recv_ring": "ppermute", "linear_allgather": "all_gather", "gather_ragged": None}
for name, w in want.items():
    assert ran[name] == w, (name, ran[name], w)
PY
# the three check_vma-dependent programs: each cell from the case's own arithmetic
expect_exit 0 -- timeout -k 5 300 "$BIN" matrix --backends reference,jax:shard_map,jax:shard_map_novma --world 2 \
  --md "$TMP/vma.md" "$SRC/cases/jax"
expect_grep '^\| all_gather_invarying \| 2 \| correct \| correct via all_gather\(to=.invarying.\) \| wrong \(8\) via all_gather\(to=.invarying.\) \|$' "$TMP/vma.md"
expect_grep '^\| per_device_loss_replicated \| 2 \| correct \| refused via out_specs=P\(\): ValueError at forward: .* \| wrong \(1\) via out_specs=P\(\) \|$' "$TMP/vma.md"
expect_grep '^\| psum_vjp_in_body \| 2 \| correct \| wrong \(8\) via jax.vjp in the body, psum \| correct via jax.vjp in the body, psum \|$' "$TMP/vma.md"
# the matrix's JAX columns: the same facts as cells, and the version each column ran
expect_exit 0 -- timeout -k 5 300 "$BIN" matrix --backends reference,jax:shard_map,jax:shard_map_novma --world 2 \
  --md "$TMP/m.md" "$C/all_reduce_sum.case" "$C/all_reduce_max_ties.case" "$C/all_reduce_prod_zeros.case"
expect_grep '^\| all_reduce_sum \| 2 \| correct \| correct via psum \| correct via psum \|$' "$TMP/m.md"
expect_grep '^\| all_reduce_max_ties \| 2 \| correct \| refused via pmax: NotImplementedError at backward: .* \| refused via pmax: NotImplementedError at backward: .*\|$' "$TMP/m.md"
expect_grep '^\| all_reduce_prod_zeros \| 2 \| correct \| correct via all_gather\+prod \| correct via all_gather\+prod \|$' "$TMP/m.md"
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
