#!/usr/bin/env bash
# Start-up cost against MPI's own floor (issue 24 item 5), as ratios:
#   collgrad-check --version          against an MPI hello world run alone
#                                     (MPI_Init, a rank, MPI_Finalize)
#   the smallest job (one case, W=2)  against `mpiexec -n 2` of that hello world
#                                     (collgrad-check starts its own mpiexec)
# Each command runs RUNS times, the two of a pair alternating so that a noisy
# machine slows both alike; the medians are compared. Nothing is asserted:
# the numbers are for the README and for whoever changes the start-up path.
#
# usage: scripts/startup.sh [BIN [RUNS]]   (BIN: build/collgrad-check; RUNS: 15)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/collgrad-check}"
runs="${2:-15}"
mpiexec="${CG_MPIEXEC:-mpiexec}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank = 0;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        return 1;
    if (rank == 0)
        printf("hello\n");
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
EOF
mpicc -O2 "$tmp/hello.c" -o "$tmp/hello"
case_file="$root/cases/collectives/all_reduce_sum.case"

# ms COMMAND...: the wall time of one run in milliseconds (it must succeed)
ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null 2>&1 || { echo "startup.sh: failed: $*" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# pair NAME_A NAME_B -- A... -- B...: RUNS alternating runs, then one line
pair() {
  local name_a="$1" name_b="$2"; shift 2
  local a=() b=() in_b=0
  shift # --
  for w in "$@"; do
    if [ "$w" = "--" ]; then in_b=1; continue; fi
    if [ "$in_b" = 0 ]; then a+=("$w"); else b+=("$w"); fi
  done
  : > "$tmp/a"; : > "$tmp/b"
  ms "${a[@]}" > /dev/null; ms "${b[@]}" > /dev/null   # one untimed run each: caches warm
  for _ in $(seq "$runs"); do
    ms "${a[@]}" >> "$tmp/a"
    ms "${b[@]}" >> "$tmp/b"
  done
  local ma mb
  ma=$(median < "$tmp/a"); mb=$(median < "$tmp/b")
  awk -v na="$name_a" -v nb="$name_b" -v a="$ma" -v b="$mb" \
    'BEGIN { printf "%-28s %8.1f ms   %-26s %8.1f ms   ratio %5.2f\n", na, a, nb, b, (b > 0 ? a / b : 0) }'
}

echo "# collgrad-check start-up, median of $runs runs each ($(nproc) cores, $(date -u +%Y-%m-%d))"
pair "collgrad-check --version" "MPI hello world" -- "$bin" --version -- "$tmp/hello"
pair "smallest job (W=2)" "mpiexec -n 2 hello world" -- "$bin" --world 2 "$case_file" -- \
  "$mpiexec" -n 2 "$tmp/hello"
