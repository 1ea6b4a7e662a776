#!/usr/bin/env bash
# Every injected fault class is caught on every case family it applies to
# (scripts/fault-table.sh prints the table).
. "$(dirname "$0")/common.bash"
expect_exit 0 -- bash "$SRC/scripts/fault-table.sh" "$BIN"
expect_grep "^every applicable fault caught$" "$TMP/out"
if grep -q "MISSED" "$TMP/out"; then bad "a fault was missed"; sed -n '1,12p' "$TMP/out"; else ok; fi
finish
