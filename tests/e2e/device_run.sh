#!/usr/bin/env bash
# The run under test on the device: built-in cases over `--transport nccl`
# (tensors on the GPU, --device cuda implied) at W = 1 and 2, against the
# oracle on the CPU. Every job must pass, the emulations' rules= expectations
# included (c10d 20/30 and 4/9 for issue 58005, torch-nn 12/18, gatherlayer
# 6/9), and the report must say "device": "cuda". send_recv_ring is in: the
# transport holds sends back until the next recv, so a ring where every rank
# sends first completes over NCCL as it does in PyTorch (README). Runs wherever a CUDA device is usable: a GPU, or the emulated
# build (tests/cuda_emu); elsewhere it exits 77 (ctest: skipped).
. "$(dirname "$0")/common.bash"

C="$SRC/cases"
probe="$C/collectives/all_reduce_sum.case"
if ! "$BIN" --transport nccl --world 1 --timeout 60 "$probe" > "$TMP/probe" 2>&1; then
  if grep -qE "no CUDA device is visible|built without CUDA" "$TMP/probe"; then
    echo "SKIP: no usable CUDA device ($(head -n 1 "$TMP/probe"))"
    exit 77
  fi
fi

cases=("$C/pytorch-58005" "$C/diffdist-forum" "$C/allgather-blog" "$C/losses"
       "$C/rpc-design" "$C/collectives" "$C/half/collectives_bf16.case")
for w in 1 2; do
  expect_exit 0 -- "$BIN" --transport nccl --world "$w" --timeout 120 \
    --json "$TMP/w$w.json" "${cases[@]}"
  expect_grep "^100% cases passed \([0-9]+ of [0-9]+\); 0 failed, 0 errors" "$TMP/out"
  expect_grep '"device":[[:space:]]*"cuda"' "$TMP/w$w.json"
  expect_grep '"transport":[[:space:]]*"nccl"' "$TMP/w$w.json"
done
# process groups (issue 14): each group an ncclCommSplit, made once and
# reused; the subgroup cases at W = 3 and 4, their torch-nn versions included
# (ranks share the device as NCCL_HOSTID-distinct hosts on a one-GPU machine)
for w in 3 4; do
  expect_exit 0 -- env COLLGRAD_NCCL_SHARE_GPU=1 "$BIN" --transport nccl --world "$w" --timeout 120 \
    "$C/subgroups"
  expect_grep "^100% cases passed \([0-9]+ of [0-9]+\); 0 failed, 0 errors" "$TMP/out"
  expect_grep "subgroup_broadcast_130515 \(W=$w, rules=torch-nn@2.4\) .*Passed" "$TMP/out"
done
# the emulations reproduce the documents' numbers on the device too (W = 2)
expect_exit 0 -- "$BIN" --transport nccl --world 2 --verbose --timeout 120 \
  "$C/pytorch-58005/allreduce_sum_square.case"
expect_grep "pass per_rank\(x\) rank 1 rules=c10d: expected \[30\] observed \[30\]" "$TMP/out"
# and a wrong backend is still caught there, named by the diagnosis
expect_exit 1 -- "$BIN" --transport nccl --world 2 --rules c10d --timeout 120 \
  "$C/pytorch-58005/allreduce_sum_square.case"
expect_grep "fail per_rank\(x\) rank 0 rules=c10d: expected \[40\] observed \[20\]" "$TMP/out"
expect_grep "diagnosis: .*c10d" "$TMP/out"
finish

# the bench on the device (issue 37 item 1): x, y, the gradients and the raw
# buffers live in device memory, so its peak device bytes per rank are the
# tensors' (all_gather at W=2, n bytes out: x n/2, y n, x.grad n/2, the seed
# written over y: 2n; the backward's reduce_scatter output n/2 more at most),
# and the check downloads what it compares; --device cpu reports none
for dev in cuda cpu; do
  expect_exit 0 -- env COLLGRAD_NCCL_SHARE_GPU=1 "$BIN" bench -t nccl --device "$dev" -W 2 -b 1M -e 1M \
    -n 1 -w 0 -c all_gather --json "$TMP/bench-$dev.json"
  expect_grep "^# collgrad-check bench: all_gather .*transport nccl, device $dev" "$TMP/out"
  python3 - "$TMP/bench-$dev.json" "$dev" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "bench $dev: $(cat "$TMP/py.out")"
import json, sys
(r,) = json.load(open(sys.argv[1]))["rows"]
n = r["bytes"]
assert n == 1 << 20 and r["check_ok"] is True and r["device"] == sys.argv[2], r
if sys.argv[2] == "cuda":
    assert 2 * n <= r["peak_device_bytes"] <= 2.5 * n, (r["peak_device_bytes"], n)
else:
    assert r["peak_device_bytes"] is None, r
PY
done
