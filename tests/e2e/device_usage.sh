#!/usr/bin/env bash
# --device: what cannot work on the device is refused before anything runs,
# with exit 2 and the reason, on any machine (these checks need no GPU); a
# missing GPU or CUDA is exit 3. No report is written and no job runs.
. "$(dirname "$0")/common.bash"
C="$SRC/cases/collectives/all_reduce_sum.case"

# a bad value
expect_exit 2 -- "$BIN" --device gpu "$C"
expect_grep "^collgrad-check: expected cpu or cuda after --device, got 'gpu'$" "$TMP/out"

# the mpi transport takes host buffers only
expect_exit 2 -- "$BIN" --device cuda --json "$TMP/r.json" "$C"
expect_grep "^collgrad-check: --device cuda: transport 'mpi' takes host buffers only; use --transport nccl \(or a plugin with CGT_CAP_CUDA\), or --device cpu$" "$TMP/out"
# the run is refused before it starts; the report says so (issue 26 item 3)
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"]; assert [(k["name"], k["status"]) for k in c]==[("refused","error")] and "host buffers only" in c[0]["message"], c' \
  "$TMP/r.json" && ok || bad "the refusal is not in the report"
if grep -q "Passed\|Failed" "$TMP/out"; then bad "no job should run"; else ok; fi

# started by hand under mpiexec, the ranks refuse alike (rank 0 says it once)
expect_exit 2 -- mpiexec -n 2 "$BIN" --device cuda "$C"
if [ "$(grep -c "takes host buffers only" "$TMP/out")" -eq 1 ]; then ok; else bad "said once"; fi

# with nccl: rule-set plugins and data faults work on host buffers. In a
# build without CUDA the transport itself is refused first (exit 3).
if "$BIN" --transport nccl --oracle-only "$C" >/dev/null 2>&1 &&
   ! "$BIN" --transport nccl --device cuda --rules ./none.so "$C" 2>&1 | grep -q "built without"; then
  expect_exit 2 -- "$BIN" --transport nccl --rules ./librules.so "$C"
  expect_grep "^collgrad-check: --device cuda: rule-set plugins receive host tensors \(rules ABI 6\); run ./librules.so with --device cpu$" "$TMP/out"
  expect_exit 2 -- "$BIN" --transport nccl --inject wrong_sum "$C"
  expect_grep "^collgrad-check: --device cuda: --inject wrong_sum rewrites host buffers; use --device cpu$" "$TMP/out"
else
  expect_exit 3 -- "$BIN" --transport nccl --device cuda "$C"
  expect_grep "built without CUDA" "$TMP/out"
fi

# the oracle never moves: --oracle-only ignores --device
expect_exit 0 -- "$BIN" --device cuda --oracle-only "$C"
finish
