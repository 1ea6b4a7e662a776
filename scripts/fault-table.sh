#!/usr/bin/env bash
# The fault table: every injected fault class against every case family it
# can affect, caught (exit 1 with a failing check, or exit 3 naming the rank)
# or missed. Reproducible with this one command; exits 1 if anything applicable
# is missed. Usage: scripts/fault-table.sh [path/to/collgrad-check [TOOL-ARGS...]]
# TOOL-ARGS go to every run (the GPU check: --transport nccl --device cpu, the
# data faults rewriting host buffers). CG_FAULT_JOBS=N runs N cells at once
# (default 1: each cell's ranks busy-poll).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$root/build/collgrad-check}"
shift || true
extra=("$@")
jobs="${CG_FAULT_JOBS:-1}"
C="$root/cases/collectives"
out="$(mktemp -d)"
trap 'wait; rm -rf "$out"' EXIT

families=(all_reduce all_gather reduce_scatter broadcast reduce gather scatter all_to_all send_recv)
declare -A case_of=(
  [all_reduce]=all_reduce_sum [all_gather]=all_gather_ragged [reduce_scatter]=reduce_scatter_sum
  [broadcast]=broadcast_last_root [reduce]=reduce_sum_avg [gather]=gather_ragged
  [scatter]=scatter_last_root [all_to_all]=all_to_all_even [send_recv]=send_recv_ring)
# which families each fault can affect (the others are "n/a")
declare -A applies=(
  [wrong_sum]="all_reduce reduce_scatter reduce"
  [scale_world]="all_reduce reduce_scatter reduce"
  [drop_rank]="all_reduce all_gather reduce_scatter reduce gather all_to_all send_recv"
  [swap_slices]="all_gather gather all_to_all"
  [bit_flip]="${families[*]}"
  [wrong_root]="broadcast reduce gather scatter"
  [wrong_dtype_size]="all_reduce all_gather reduce_scatter broadcast reduce gather scatter all_to_all"
  [hang]="${families[*]}"
  [exit]="${families[*]}")
faults=(wrong_sum drop_rank swap_slices bit_flip scale_world wrong_root wrong_dtype_size hang exit)

# cell FAULT FAMILY: one run; its verdict into $out/verdict.FAULT.FAMILY, how into $out/how.FAULT.FAMILY
cell() {
  local fault="$1" fam="$2" spec="$1:0" log="$out/$1.$2" rc how
  # data faults hit rank 0 (the root of the rooted cases' gathers and
  # reduces, a receiver everywhere else); rank 1 hangs or exits
  [[ $fault == hang || $fault == exit ]] && spec="$fault:1"
  "$BIN" --world 2 --timeout 3 --no-fd --inject "$spec" "${extra[@]}" "$C/${case_of[$fam]}.case" > "$log" 2>&1
  rc=$?
  how=$(grep -m1 -E "^ +(fail |diagnosis:|killed|the job ended)" "$log" | sed 's/^ *//' | cut -c1-110)
  if [ "$rc" -eq 1 ] || { [ "$rc" -eq 3 ] && grep -qE "rank 1 (stopped|exited early|finished)" "$log"; }; then
    echo "caught($rc)" > "$out/verdict.$fault.$fam"
  else
    echo "MISSED($rc)" > "$out/verdict.$fault.$fam"
  fi
  echo "$fault x $fam: exit $rc: $how" > "$out/how.$fault.$fam"
}

running=0
for fault in "${faults[@]}"; do
  for fam in "${families[@]}"; do
    [[ " ${applies[$fault]} " == *" $fam "* ]] || continue
    cell "$fault" "$fam" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n
      running=$((running - 1))
    fi
  done
done
wait

missed=0
printf '%-17s' "fault \\ family"
for f in "${families[@]}"; do printf ' %-14s' "$f"; done
printf '\n'
for fault in "${faults[@]}"; do
  printf '%-17s' "$fault"
  for fam in "${families[@]}"; do
    if [[ " ${applies[$fault]} " != *" $fam "* ]]; then printf ' %-14s' "n/a"; continue; fi
    v=$(cat "$out/verdict.$fault.$fam")
    printf ' %-14s' "$v"
    [[ $v == MISSED* ]] && missed=$((missed + 1))
    cat "$out/how.$fault.$fam" >> "$out/how"
  done
  printf '\n'
done
echo
echo "how each was caught (first failing line):"
sed 's/^/  /' "$out/how"
echo
if [ "$missed" -eq 0 ]; then echo "every applicable fault caught"; else echo "$missed applicable faults MISSED"; fi
[ "$missed" -eq 0 ]
