#!/usr/bin/env bash
# Finding case files never blocks, never loops and never reads without bound
# (issue 26 items 5 and 6). On ae24178 each of these hung, ran a case many
# times or read until memory ran out: a FIFO among the cases or named on the
# command line (open blocked), two symbolic-link loops (one ran the same case
# 41 times), /dev/zero or a link to it (read whole), a 200 MB case (read whole).
# Every command runs under `timeout`: a hang is exit 124, a failure here.
. "$(dirname "$0")/common.bash"
T="timeout -k 2 20"
good="$SRC/cases/pytorch-58005/allreduce_backward_total.case"

mkdir -p "$TMP/tree/sub"
cp "$good" "$TMP/tree/a.case"
mkfifo "$TMP/tree/fifo.case"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$TMP/tree/sock.case"
ln -s /dev/zero "$TMP/tree/zero.case"
ln -s .. "$TMP/tree/sub/up"           # a loop through the parent
ln -s loop2 "$TMP/tree/loop1"          # two links naming each other
ln -s loop1 "$TMP/tree/loop2"
ln -s ../a.case "$TMP/tree/sub/again.case" # the same file by a second path

# the tree runs its one good case exactly once (at W=2), each odd entry noted
expect_exit 0 -- $T "$BIN" --oracle-only --no-fd --world 2 --json "$TMP/tree.json" "$TMP/tree"
expect_grep "100% cases passed \(1 of 1\)" "$TMP/out"
expect_grep "note: $TMP/tree/fifo.case: a FIFO, not a case file, skipped" "$TMP/out"
expect_grep "note: $TMP/tree/sock.case: a socket, not a case file, skipped" "$TMP/out"
expect_grep "note: $TMP/tree/zero.case: a character device, not a case file, skipped" "$TMP/out"
expect_grep "note: $TMP/tree/loop1: a symbolic link that does not resolve \(Too many levels" "$TMP/out"
expect_grep "note: $TMP/tree/sub/up: a directory already walked" "$TMP/out"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$TMP/tree.json")
[ "$n" = 1 ] && ok || bad "the tree ran $n cases, wanted 1"
# --list sees the same selection, in the distributed mode too
expect_exit 0 -- $T "$BIN" --list "$TMP/tree"
expect_grep "^1 cases, [0-9]+ jobs, 0 errors$" "$TMP/out"
[ "$(grep -c "again.case" "$TMP/out")" = 0 ] && ok || bad "a second path to a.case was listed"

# named on the command line, a FIFO, socket or device is a usage error, at once
for p in "$TMP/tree/fifo.case" "$TMP/tree/sock.case" /dev/zero "$TMP/tree/zero.case"; do
  expect_exit 2 -- $T "$BIN" --oracle-only "$p"
  expect_grep "^collgrad-check: $p: expected a case file or a directory, got a" "$TMP/out"
done

# the size limit: checked before reading, named with how to raise it
head -c $((5 << 20)) /dev/zero | tr '\0' '#' > "$TMP/big.case"
expect_exit 2 -- $T "$BIN" --oracle-only "$TMP/big.case"
expect_grep "$TMP/big.case: expected a case file of at most 4194304 bytes \(the limit; raise it with --max-case-bytes\), got more" "$TMP/out"
expect_exit 2 -- $T "$BIN" --oracle-only --max-case-bytes 100 "$good"
expect_grep "at most 100 bytes" "$TMP/out"
expect_exit 0 -- $T "$BIN" --oracle-only --no-fd --max-case-bytes 1M "$good"
expect_exit 2 -- $T "$BIN" --oracle-only --max-case-bytes 12Q "$good"
expect_grep "expected a byte count" "$TMP/out"
# distributed: the ranks read the same file under the same limit
expect_exit 0 -- $T "$BIN" --no-fd --max-case-bytes 64K "$good"
finish
