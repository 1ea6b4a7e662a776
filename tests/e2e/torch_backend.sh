#!/usr/bin/env bash
# --backend pytorch:API as a user drives it: options, a third-party process
# group registered with torch.distributed.Backend.register_backend that is
# deliberately wrong (tests/torch/drop_rank_backend.py: rank 1's all_reduce
# contribution is dropped) and is failed with the right diagnosis, a backend
# that cannot be imported, a rank that hangs past the deadline, and the
# reports. Exit 77 (skipped) where $COLLGRAD_PYTHON (default
# /usr/bin/python3) has no torch.
. "$(dirname "$0")/common.bash"
PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
C="$SRC/cases"
SUM="$C/pytorch-58005/allreduce_sum_square.case"
TOTAL="$C/pytorch-58005/allreduce_backward_total.case"

# options, checked before anything starts (no torch needed)
expect_exit 2 -- "$BIN" --backend pytorch:bogus "$SUM"
expect_grep "expected --backend pytorch:API with API nn, c10d, funcol, gatherlayer, diffdist, rpc or listassign, or jax:shard_map or jax:shard_map_novma, got 'pytorch:bogus'" "$TMP/out"
expect_exit 2 -- "$BIN" --torch-backend gloo "$SUM"
expect_grep "applies to --backend pytorch:API only" "$TMP/out"
expect_exit 2 -- "$BIN" --backend pytorch:nn --rules torch-nn "$SUM"
expect_grep "\-\-rules does not apply to --backend" "$TMP/out"
expect_exit 3 -- "$BIN" --backend pytorch:nn --python /nonexistent/python3 "$SUM"
expect_grep "/nonexistent/python3 \(chosen by --python\) cannot import torch" "$TMP/out"

if ! "$PY" -c "import torch" > /dev/null 2>&1; then
  echo "skipped: $PY cannot import torch (Debian: apt-get install python3-torch)"
  exit 77
fi

# gloo computes these right: every check passes
expect_exit 0 -- "$BIN" --backend pytorch:nn --python "$PY" --world 2 --json "$TMP/gloo.json" \
  --junit "$TMP/gloo.xml" "$SUM" "$TOTAL"
expect_grep "allreduce_sum_square \(W=2, rules=pytorch:nn\) .*Passed" "$TMP/out"
expect_grep "$PY \(Python [0-9.]+; --python\)" "$TMP/out"
if command -v xmllint > /dev/null; then
  xmllint --noout "$TMP/gloo.xml" && ok || bad "the JUnit report is not well-formed XML"
fi
if [ "$(id -u)" = 0 ]; then
  expect_grep "ranks on a private network namespace with only loopback" "$TMP/out"
  expect_grep '"isolation":[[:space:]]*"a private network namespace' "$TMP/gloo.json"
  COLLGRAD_NETNS=0 "$BIN" --backend pytorch:nn --python "$PY" --world 2 "$TOTAL" > "$TMP/out" 2>&1
  expect_grep "ranks on 127.0.0.1 only: FileStore rendezvous, GLOO_SOCKET_IFNAME=lo" "$TMP/out"
fi

# the deliberately wrong backend: all_reduce loses rank 1's contribution
DROP="$SRC/tests/torch/drop_rank_backend.py:droprank"
expect_exit 1 -- "$BIN" --backend pytorch:nn --python "$PY" --torch-backend "$DROP" --world 2 \
  --json "$TMP/drop.json" "$SUM" "$TOTAL"
expect_grep "process group droprank" "$TMP/out"
expect_grep "diagnosis: pytorch:nn at torch .* over droprank: the transport's all_reduce computes a wrong forward value of S on rank 0" "$TMP/out"
expect_grep "fail value\(S\) rank 0 rules=pytorch:nn: expected \[5\] observed \[2\]" "$TMP/out"
expect_grep '"backend":[[:space:]]*"droprank"' "$TMP/drop.json"
expect_grep '"matches":[[:space:]]*\[[[:space:]]*"wrong_forward_value"' "$TMP/drop.json"
# the same jobs under both backends line up in compare: two regressions
expect_exit 1 -- "$BIN" compare "$TMP/gloo.json" "$TMP/drop.json"
expect_grep "allreduce_sum_square W=2 rules=pytorch:nn.*pass -> fail" "$TMP/out"

# a backend module that cannot be imported: every job says why, exit 3
printf 'raise RuntimeError("broken on purpose")\n' > "$TMP/broken_backend.py"
expect_exit 3 -- "$BIN" --backend pytorch:nn --python "$PY" --torch-backend "$TMP/broken_backend.py:broken" \
  --world 2 "$TOTAL"
expect_grep "importing $TMP/broken_backend.py for backend broken failed: RuntimeError: broken on purpose" "$TMP/out"

# rank 1 of this backend misbehaves as FAULT says: "sleep" never returns from
# all_reduce, "kill_join" is killed (SIGKILL, as the OOM killer does) while
# joining the group, "kill_allreduce" inside all_reduce
cat > "$TMP/faulty_backend.py" <<'PY'
import os
import signal
import time
import torch.distributed as dist
from torch._C import _distributed_c10d as c10d

FAULT = os.environ.get("FAULT", "")

class Faulty(c10d.ProcessGroup):
    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self.inner = c10d.ProcessGroupGloo(store, rank, size, timeout)
        if rank == 1 and FAULT == "kill_join":
            os.kill(os.getpid(), signal.SIGKILL)
    def allreduce(self, tensors, opts=None):
        if self.rank() == 1 and FAULT == "sleep":
            time.sleep(3600)
        if self.rank() == 1 and FAULT == "kill_allreduce":
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.allreduce(tensors, opts)
    def broadcast(self, *args):
        return self.inner.broadcast(*args)
    def reduce(self, *args):
        return self.inner.reduce(*args)
    def getBackendName(self):
        return "faulty"

dist.Backend.register_backend("faulty", lambda store, rank, size, timeout: Faulty(store, rank, size, timeout))
PY
FAULTY="$TMP/faulty_backend.py:faulty"
if "$PY" -c "import torch; import sys; sys.exit(not torch.__version__.startswith('1.'))"; then
  # a rank stuck outside any collective timeout: the deadline kills the ranks, the job
  # says where each rank was, and new ranks run the next job
  expect_exit 3 -- env FAULT=sleep "$BIN" --backend pytorch:nn --python "$PY" --torch-backend "$FAULTY" \
    --world 2 --timeout 4 --json "$TMP/stuck.json" "$TOTAL" "$C/collectives/broadcast_last_root.case"
  expect_grep "allreduce_backward_total \(W=2, rules=pytorch:nn\) .*Error" "$TMP/out"
  expect_grep "killed after the 4 s deadline: rank 1 was at forward at .*allreduce_backward_total.case:[0-9]+:[0-9]+ \(job 0\)" "$TMP/out"
  expect_grep "broadcast_last_root \(W=2, rules=pytorch:nn\) .*Passed" "$TMP/out"
  expect_grep '"error_class":[[:space:]]*3' "$TMP/stuck.json"
  # a rank that dies is named at once, with how it died: joining the group (once: the
  # 180 s start-up allowance, then "the ranks did not start" with an empty head), or
  # inside a collective; the next job runs on new ranks
  SECONDS=0
  expect_exit 3 -- env FAULT=kill_join "$BIN" --backend pytorch:nn --python "$PY" --torch-backend "$FAULTY" \
    --world 2 "$TOTAL"
  expect_grep "rank 1's process was killed by signal 9 \(Killed\) before its jobs were done: rank 0 was joining" "$TMP/out"
  [ "$SECONDS" -lt 60 ] && ok || bad "a rank killed while joining took $SECONDS s to be named"
  expect_exit 3 -- env FAULT=kill_allreduce "$BIN" --backend pytorch:nn --python "$PY" --torch-backend "$FAULTY" \
    --world 2 "$TOTAL" "$C/collectives/broadcast_last_root.case"
  expect_grep "rank 1's process was killed by signal 9 \(Killed\) before its jobs were done: .*rank 1 was at forward at .*allreduce_backward_total.case:[0-9]+:[0-9]+ \(job 0\)" "$TMP/out"
  expect_grep "broadcast_last_root \(W=2, rules=pytorch:nn\) .*Passed" "$TMP/out"
fi
# several emulations give torch's numbers (prod with zeros): the API's own,
# torch-nn, is named first and explained; the skipped case (no differentiable
# send/recv in torch.distributed.nn) counts apart: 1 of the 2 that ran passed
expect_exit 1 -- "$BIN" --backend pytorch:nn --python "$PY" --world 2 "$C/collectives/all_reduce_prod_zeros.case" \
  "$C/collectives/send_recv_ring.case" "$SUM"
expect_grep "diagnosis: pytorch:nn at torch .* over gloo: this case cannot tell apart torch-nn@1.13, .*; torch-nn@1.13: all_reduce\(prod\) backward is " "$TMP/out"
expect_grep "^50% cases passed \(1 of 2\); 1 failed, 0 errors, 1 skipped;" "$TMP/out"
# process groups through the real module (pytorch:nn makes them with
# new_group): its broadcast zeroes the non-member's gradient, the torch-nn
# version of this torch is named (torch-nn@1.13 for 1.13 and 2.15, torch-nn@2.4
# for pytorch#130515's window); the c10d API skips group programs, saying so
ver=$("$PY" -c "import torch; print('.'.join(torch.__version__.split('.')[:2]))")
want=torch-nn@1.13; [ "$ver" = 2.4 ] && want=torch-nn@2.4
expect_exit 1 -- "$BIN" --backend pytorch:nn --python "$PY" --world 3 --timeout 30 "$C/subgroups/broadcast_130515.case"
expect_grep "diagnosis: pytorch:nn at torch .* over gloo: matches rule set $want: broadcast backward is " "$TMP/out"
expect_grep "fail per_rank\(x\) rank 0 rules=pytorch:nn: expected \[1, 1\] observed \[0, 0\]" "$TMP/out"
# issue 39 item 1: gather and scatter to global rank 0 on [0, 2], the members only, are right in
# real torch.distributed.nn (the numbers by hand in the case files; torch-nn now models them so)
expect_exit 0 -- "$BIN" --backend pytorch:nn --python "$PY" --world 3 "$SRC/tests/data/subgroup_root0"
expect_grep "^100% cases passed \(2 of 2\)" "$TMP/out"
# a gather to a renumbered root: the root raises at forward (it passes no gather_list), the other
# member waits; torch-nn refuses the call and its refusal quotes that error, so the hang is named
expect_exit 3 -- "$BIN" --backend pytorch:nn --python "$PY" --world 3 --timeout 3 "$C/subgroups/gather_subgroup.case"
expect_grep "fail error\(\) rank 2 rules=pytorch:nn: .*gather_subgroup.case:13:1: ValueError at forward: Argument ..gather_list.. must be specified on destination rank" "$TMP/out"
expect_grep "diagnosis: pytorch:nn at torch .* over gloo matches rule set torch-nn@1.13 \(and others raising there too\): it raises the same error at the same statement \(ValueError at .*gather_subgroup.case:13:1\)" "$TMP/out"
# explore --seed 42's finding: torch.distributed.nn.scatter run off its group returns one chunk
# of torch.empty_like, not its input (the case language's non-member call): 3 elements for
# 6 / 2, a value no emulation has; the members' chunks are right
expect_exit 1 -- "$BIN" --backend pytorch:nn --python "$PY" --world 3 "$SRC/tests/data/nonmember_scatter.case"
expect_grep "fail value\(y\) rank 1 rules=pytorch:nn: the distributed run's value has shape \[3\] \(3 elements\), the oracle's \[6\] \(6\): its value and gradient cannot be compared" "$TMP/out"
if grep -qE "fail .* rank [02] " "$TMP/out"; then bad "a member's scatter differs"; else ok; fi
# explore --seed 47's hangs: c10d's gather output is detached off the root, so rank 1's backward
# raises while rank 0 waits in the next collective; the report keeps rank 1's error beside the hang
expect_exit 3 -- "$BIN" --backend pytorch:c10d --python "$PY" --timeout 3 --json "$TMP/hang.json" \
  "$SRC/tests/data/raise_then_hang.case"
expect_grep "^        hang: rank 0 timed out at forward .*; rank 1 raised at backward " "$TMP/out"
expect_grep "fail error\(\) rank 1 rules=pytorch:c10d: .*raise_then_hang.case:13:3: RuntimeError at backward: element 0 of tensors does not require grad" "$TMP/out"
# and the c10d emulation raises the same there (its detached gather output): the hang is what it models
expect_grep "diagnosis: pytorch:c10d at torch .* over gloo matches rule set c10d: it raises the same error at the same statement \(RuntimeError at .*raise_then_hang.case:13:3\)" "$TMP/out"
expect_exit 0 -- "$BIN" --backend pytorch:c10d --python "$PY" --world 3 "$C/subgroups/broadcast_130515.case"
expect_grep "skipped: process groups \(group\(\), mesh\(\)\) are not in pytorch:c10d yet \(pytorch:nn has them\)" "$TMP/out"
finish
