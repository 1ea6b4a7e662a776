#!/usr/bin/env bash
# The run under test on the device: built-in cases over `--transport nccl`
# (tensors on the GPU, --device cuda implied) at W = 1 and 2, against the
# oracle on the CPU. Every job must pass, the emulations' rules= expectations
# included (c10d 20/30 and 4/9 for issue 58005, torch-nn 12/18, gatherlayer
# 6/9), and the report must say "device": "cuda". send and recv move over
# MPI (transport_nccl_p2p.c), so rpc-design's ping-pongs and a ring where every
# rank sends first both complete; over NCCL's grouped point to point
# (COLLGRAD_NCCL_P2P=nccl) the ping-pong waits, in the emulation as on NCCL
# 2.28.3. Runs wherever a CUDA device is usable: a GPU, or the emulated build
# (tests/cuda_emu); elsewhere it exits 77 (ctest: skipped).
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

# send and recv (transport_nccl_p2p.c): over MPI by default, the ping-pong and
# rpc_add's two sends pass at W = 2 and 4; over NCCL's grouped point to point,
# rank 0's group {send to 1, recv from 1} against rank 1's recv, then send
# waits (NVIDIA/nccl#1279; seen on NCCL 2.28.3 and modelled by the emulation)
P2P="$SRC/tests/data/nccl_p2p"
for w in 2 4; do
  expect_exit 0 -- env COLLGRAD_NCCL_SHARE_GPU=1 "$BIN" --transport nccl --world "$w" --timeout 60 "$P2P"
  expect_grep "^100% cases passed \(2 of 2\)" "$TMP/out"
done
expect_exit 3 -- env COLLGRAD_NCCL_SHARE_GPU=1 COLLGRAD_NCCL_P2P=nccl "$BIN" --transport nccl --world 2 \
  --timeout 5 "$P2P/pingpong.case"
expect_grep "killed after the 5 s deadline: .*0.* waits? in recv #3 \(forward\)" "$TMP/out"
expect_exit 3 -- env COLLGRAD_NCCL_SHARE_GPU=1 COLLGRAD_NCCL_P2P=bogus "$BIN" --transport nccl --world 2 --timeout 60 \
  "$P2P/pingpong.case"
expect_grep "COLLGRAD_NCCL_P2P: expected mpi or nccl, got 'bogus'" "$TMP/out"
# what a rank says before it exits is part of its end (board.h: cg_board_say), never
# left to mpiexec's forwarding of its stderr, which an MPI_Abort may cut short (one
# loss in 8 runs under load): an mpiexec that forwards nothing still lets both ranks'
# refusal reach the report, once, with the ranks that said it (rank 0 or 1 first: its
# MPI_Abort may kill the other before it speaks)
printf '#!/bin/sh\nexec "%s" "$@" 2>/dev/null\n' "$(command -v "${CG_MPIEXEC:-mpiexec}")" > "$TMP/mute-mpiexec"
chmod +x "$TMP/mute-mpiexec"
expect_exit 3 -- env COLLGRAD_NCCL_SHARE_GPU=1 COLLGRAD_NCCL_P2P=bogus CG_MPIEXEC="$TMP/mute-mpiexec" \
  "$BIN" --transport nccl --world 2 --timeout 60 "$P2P/pingpong.case"
expect_grep "ranks? [01](,1)? said: nccl: COLLGRAD_NCCL_P2P: expected mpi or nccl, got 'bogus'" "$TMP/out"

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
finish
