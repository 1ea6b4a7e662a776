#!/usr/bin/env bash
# Nothing assumes one machine (issue 24 item 6): a W=4 job whose ranks 1..3
# each run as on a node of their own: their own host name (a UTS namespace),
# their own TMPDIR, and the launcher's temporary directory hidden under an
# empty tmpfs (a mount namespace), so they cannot open a single launcher
# file. Rank 0 shares the launcher's host (it reads the job bundle) but has
# a TMPDIR of its own too. The run must pass with every job reported, and a
# hang on a hidden rank must still be caught by the deadline and name the
# ranks the board could not see. Needs root for unshare -m -u (skips, 77).
. "$(dirname "$0")/common.bash"
MPIEXEC_REAL="${CG_MPIEXEC:-mpiexec}"
if ! unshare -m -u true 2>/dev/null; then
    echo "SKIP: unshare -m -u is not permitted here (needs root)"
    exit 77
fi
mkdir -p "$TMP/launcher" "$TMP/ranks"

# Each rank's command goes through this: rank r > 0 gets node r.
cat > "$TMP/isolate.sh" <<'EOF'
#!/usr/bin/env bash
rank="${PMI_RANK:?not started by MPICH}"
export TMPDIR="$RANKS_DIR/rank$rank"
mkdir -p "$TMPDIR" || exit 96
[ "$rank" -eq 0 ] && exec "$@"
exec unshare -m -u bash -c '
    rank=$1 hidden=$2; shift 2
    hostname "node$rank" && mount -t tmpfs tmpfs "$hidden" || exit 97
    if ls "$hidden" | grep -q .; then echo "rank $rank still sees the launcher files" >&2; exit 98; fi
    echo "isolated: rank $rank on $(hostname), TMPDIR=$TMPDIR, no launcher files" >&2
    exec "$@"' _ "$rank" "$LAUNCHER_TMP" "$@"
EOF
# The launcher's mpiexec: -n W, then each rank's command wrapped.
cat > "$TMP/mpiexec.sh" <<EOF
#!/usr/bin/env bash
[ "\$1" = -n ] || exit 95
n=\$2; shift 2
exec "$MPIEXEC_REAL" -n "\$n" "$TMP/isolate.sh" "\$@"
EOF
chmod +x "$TMP/isolate.sh" "$TMP/mpiexec.sh"
export RANKS_DIR="$TMP/ranks" LAUNCHER_TMP="$TMP/launcher"

CASES=("$SRC/cases/pytorch-58005/allreduce_backward_total.case" "$SRC/cases/collectives")
expect_exit 0 -- env TMPDIR="$TMP/launcher" CG_MPIEXEC="$TMP/mpiexec.sh" "$BIN" --world 4 \
    --json "$TMP/run.json" "${CASES[@]}"
# every job ran at W=4 and came back through mpiexec's stdout: at least one
# per listed case, all passed, and the JSON report holds each
ncases=$("$BIN" --list --world 4 "${CASES[@]}" | grep -c " W=4 ")
jobs=$(sed -nE 's/^100% cases passed \(([0-9]+) of \1\).*/\1/p' "$TMP/out")
[ -n "$jobs" ] && [ "$ncases" -gt 5 ] && [ "$jobs" -ge "$ncases" ] && ok ||
    bad "expected every job of the $ncases cases to pass, the summary says: $(grep -E '% cases' "$TMP/out")"
passed=$(tr -d ' \t\n' < "$TMP/run.json" | grep -oE '"summary":\{"passed":[0-9]+' | grep -oE '[0-9]+$')
[ "$passed" -eq "${jobs:-0}" ] && ok || bad "the JSON report holds $passed passed jobs, expected ${jobs:-?}"

# A hang on hidden rank 2: caught at the deadline, the hidden ranks named.
expect_exit 3 -- env TMPDIR="$TMP/launcher" CG_MPIEXEC="$TMP/mpiexec.sh" "$BIN" --world 4 \
    --timeout 3 --inject hang:2 "$SRC/cases/pytorch-58005/allreduce_backward_total.case"
expect_grep "killed after the 3 s deadline" "$TMP/out"
expect_grep "unseen on other nodes: rank 1,2,3" "$TMP/out"

# The isolation is real: through the same wrapper, each hidden rank finds
# the launcher's directory empty (else the wrapper exits 98).
env TMPDIR="$TMP/launcher" CG_MPIEXEC="$TMP/mpiexec.sh" "$TMP/mpiexec.sh" -n 4 /bin/true 2> "$TMP/iso"
for r in 1 2 3; do expect_grep "isolated: rank $r on node$r, TMPDIR=$TMP/ranks/rank$r, no launcher files" "$TMP/iso"; done
finish
