#!/usr/bin/env bash
# How the check's cost grows with W inside a launcher (issue 62 item 5): the same
# check spawned (--world W), under mpiexec -n W and under torchrun --nproc-per-node W
# (--world launched), at W = 2, 4, 8, on examples/user_code/sized.py (64 input
# elements per rank: 2 x 64 x W finite-difference points, each one forward on every
# rank in lockstep). Prints one row per W: the wall time of each, start-up included,
# and the verdicts (all three must agree). Not a test: a measurement, for docs/launchers.md.
#   scripts/launched-time.sh [WORLDS]      (default "2 4 8")
# As root it runs inside a private network namespace (the launchers bind loopback ports).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$(id -u)" = 0 ] && [ -z "${CG_IN_NETNS:-}" ] && command -v unshare >/dev/null; then
  exec env CG_IN_NETNS=1 unshare -n sh -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi
PY="${COLLGRAD_PYTHON:-/opt/venv-torch2/bin/python}"
[ -x "$PY" ] || PY=/usr/bin/python3
worlds="${1:-2 4 8}"
ex="$root/examples/user_code/sized.py"
args=(check "$ex:gather_matmul" --inputs "$ex:make_inputs" --timeout 120)
export PYTHONPATH="$root/python" OMP_NUM_THREADS=1
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# timed NAME CMD...: its wall time in seconds, its last line (the count of checks passed)
timed() {
  local name="$1" t0 rc=0
  shift
  t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1 || rc=$?
  local ds=$((($(date +%s%N) - t0) / 100000000))
  printf '%d.%d' $((ds / 10)) $((ds % 10))
  echo " $(grep -m1 -oE '[0-9]+ of [0-9]+ checks passed' "$out/$name.log" || echo "exit $rc")"
}
echo "$("$PY" -c 'import torch; print("torch", torch.__version__)'), $(getconf _NPROCESSORS_ONLN) CPUs, $(date -u +%F)"
printf '%2s  %9s  %-28s  %-28s  %-28s\n' W "fd points" "spawned s" "mpiexec -n W s" "torchrun --nproc-per-node W s"
port=29620
for w in $worlds; do
  s=$(timed "spawned$w" "$PY" -m collgrad_torch "${args[@]}" --world "$w")
  m=$(timed "mpiexec$w" mpiexec -n "$w" "$PY" -m collgrad_torch "${args[@]}" --world launched)
  t=$(timed "torchrun$w" "$PY" -m torch.distributed.run --nproc-per-node "$w" --master-addr 127.0.0.1 \
      --master-port $((port++)) -m collgrad_torch "${args[@]}" --world launched)
  printf '%2s  %9s  %-28s  %-28s  %-28s\n' "$w" "$((2 * 64 * w + 2))" "$s" "$m" "$t"
done
