#!/usr/bin/env bash
# Before anything launches (issue 11 items 2 and 3): an unknown transport,
# rule set or fault spec, a plugin path that cannot be read, and a selection
# that runs no case exit 2 at once, naming what is valid. A fake mpiexec that
# leaves a marker proves nothing was launched.
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_backward_total.case" # worlds 1, 2, 4
printf '#!/bin/sh\ntouch "%s"\nexit 99\n' "$TMP/launched" > "$TMP/fake-mpiexec"
chmod +x "$TMP/fake-mpiexec"

refused() { # PATTERN -- args...
    local pattern="$1"; shift; shift
    CG_MPIEXEC="$TMP/fake-mpiexec" expect_exit 2 -- "$BIN" "$@"
    expect_grep "$pattern" "$TMP/out"
    [ ! -e "$TMP/launched" ] && ok || { bad "launched for: $*"; rm -f "$TMP/launched"; }
}
refused "--transport foo: unknown transport; expected mpi, nccl or a plugin path" -- --transport foo "$CASE"
refused "unknown rule set 'nonexistent' \(built in: reference, c10d, torch-nn@1.13, gatherlayer, diffdist, torch-funcol@2.15, horovod, torch-xla, megatron, torch-nn@2.4, torch-funcol@2.4\)" \
    -- --rules nonexistent "$CASE"
refused "--rules $TMP/none.so: cannot read the plugin" -- --rules "$TMP/none.so" "$CASE"
refused "--transport ./none.so: cannot read the plugin" -- --transport ./none.so "$CASE"
refused "KIND one of hang, exit, wrong_sum, .*; got 'foo'" -- --inject foo "$CASE"
refused "got 'wrong_sum:x'" -- --inject wrong_sum:x "$CASE"
refused "no case runs at world size 5 \(--world\); the 1 case offers: 1 2 4$" -- --world 5 "$CASE"
refused "no case runs at world size 3 \(--world\); the 1 case offers: 1 2 4$" -- --oracle-only --world 3 "$CASE"

# ranks started by mpiexec in a world no case has: one message, exit 2
MPIEXEC="${CG_MPIEXEC:-mpiexec}"
expect_exit 2 -- "$MPIEXEC" -n 3 "$BIN" "$CASE"
expect_grep "no case runs at world size 3 \(the MPI world\); the 1 case offers: 1 2 4$" "$TMP/out"
[ "$(grep -c 'no case runs' "$TMP/out")" -eq 1 ] && ok || bad "the message was printed more than once"

# a valid spelling still runs
expect_exit 0 -- "$BIN" --world 2 --rules reference "$CASE"
finish
