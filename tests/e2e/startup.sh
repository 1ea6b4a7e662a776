#!/usr/bin/env bash
# scripts/startup.sh measures the start-up ratios (issue 24 item 5): it builds
# its MPI hello world, times both pairs and prints one line per pair with both
# medians and their ratio. No time is asserted: this machine is noisy.
. "$(dirname "$0")/common.bash"
expect_exit 0 -- "$SRC/scripts/startup.sh" "$BIN" 1
expect_grep "^collgrad-check --version +[0-9.]+ ms +MPI hello world +[0-9.]+ ms +ratio +[0-9]+\.[0-9]{2}$" "$TMP/out"
expect_grep "^smallest job \(W=2\) +[0-9.]+ ms +mpiexec -n 2 hello world +[0-9.]+ ms +ratio +[0-9]+\.[0-9]{2}$" "$TMP/out"
# a binary that cannot run is a failure, not a ratio
printf '#!/bin/sh\nexit 1\n' > "$TMP/broken" && chmod +x "$TMP/broken"
expect_exit 1 -- "$SRC/scripts/startup.sh" "$TMP/broken" 1
expect_grep "startup.sh: failed: $TMP/broken --version" "$TMP/out"
finish
