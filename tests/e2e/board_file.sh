#!/usr/bin/env bash
# The internal `--worker --board FILE` path (issue 12 item 7): a truncated,
# foreign or device "board" is refused with a clear error and exit 2, never a
# SIGBUS; the launcher's own board still works (every distributed run uses it).
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_backward_total.case"
MPIEXEC="${CG_MPIEXEC:-mpiexec}"
head -c 10 /dev/zero > "$TMP/truncated"
head -c 352 /dev/urandom > "$TMP/foreign" # the right size for W=2, without the header
ln -s "$TMP/truncated" "$TMP/link"
for board in "$TMP/truncated" "$TMP/foreign" /dev/zero "$TMP/link" "$TMP/absent"; do
    expect_exit 2 -- timeout 60 "$MPIEXEC" -n 2 "$BIN" --worker --board "$board" "$CASE"
    expect_grep "collgrad-check: $board: (not a status board of this tool for world 2|cannot open the status board)" "$TMP/out"
    grep -qiE "signal|bus error|core dumped" "$TMP/out" && bad "a rank crashed on board $board" || ok
done
expect_exit 0 -- "$BIN" --world 2 "$CASE"
finish
