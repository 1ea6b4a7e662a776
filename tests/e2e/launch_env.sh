#!/usr/bin/env bash
# Launcher environment (issue 11 item 5): rank variables without a launcher
# behind them are ignored with a warning, and the whole selection runs (they
# made a silent world-of-one partial pass); srun's tasks without an MPI
# plugin are refused with exit 3 and the fix (they each started an mpiexec
# and hung); a real mpiexec still makes ranks, whose summary is printed once.
. "$(dirname "$0")/common.bash"
DIR="$SRC/cases/pytorch-58005"
want=$("$BIN" --list --world 2 "$DIR" | tail -1 | cut -d' ' -f1) # cases that run at W=2
for stray in "PMI_RANK=0 PMI_SIZE=3" "OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0" "PMIX_RANK=1"; do
    expect_exit 0 -- env $stray "$BIN" --world 2 --no-fd --json "$TMP/stray.json" "$DIR"
    expect_grep "warning: (PMI_RANK|PMI_SIZE|PMIX_RANK|OMPI_COMM_WORLD_RANK|OMPI_COMM_WORLD_SIZE) is set but no MPI launcher is connected" "$TMP/out"
    python3 -c "
import json,sys; r=json.load(open('$TMP/stray.json'))
sys.exit(0 if r['mode'] == 'distributed' and len({c['name'] for c in r['cases']}) == $want else 1)" \
        && ok || bad "with $stray: not the whole W=2 selection"
done
expect_exit 3 -- env SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=4 timeout 20 "$BIN" "$DIR"
expect_grep "one of 4 tasks of srun without an MPI plugin.*srun --mpi=pmi2" "$TMP/out"
MPIEXEC="${CG_MPIEXEC:-mpiexec}"
expect_exit 0 -- "$MPIEXEC" -n 2 "$BIN" --no-fd "$DIR/allreduce_backward_total.case"
[ "$(grep -c 'cases passed' "$TMP/out")" -eq 1 ] && ok || bad "the summary was not printed exactly once"
finish
