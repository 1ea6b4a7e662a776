#!/usr/bin/env bash
# Memcheck over what runs in one process: the oracle on every built-in case
# (collgrad-check --oracle-only, finite differences included, plus the JSON
# report) and every Check unit test with CK_FORK=no, so the tests themselves
# run under valgrind rather than in forked children it would not follow.
# Fails on any memory error and on any definite or indirect leak.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${CG_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
if ! command -v valgrind >/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends valgrind
fi
"$root/scripts/build.sh"

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# tests/valgrind.supp: the dynamic loader's own over-read when cuBLAS loads (nothing of ours)
vg=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9
    --suppressions="$root/tests/valgrind.supp")
status=0

# run NAME -- command...: the tool's output is kept and shown only on failure. Each job
# runs in the background, as many at a time as there are cores (memcheck is one thread:
# one by one, CI's second core sat idle for the minute this takes); $logs/NAME.rc holds
# its exit status.
run() {
  local name="$1"; shift 2
  while [ "$(jobs -pr | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  (
    t0=$SECONDS rc=0
    "${vg[@]}" --log-file="$logs/$name.vg" "$@" >"$logs/$name.out" 2>&1 || rc=$?
    echo "$rc" >"$logs/$name.rc"
    if [ "$rc" -eq 0 ]; then
      echo "valgrind: $name OK ($((SECONDS - t0)) s)"
    else
      { echo "valgrind: $name FAILED (exit $rc)"; tail -n 40 "$logs/$name.out"; cat "$logs/$name.vg"; } >&2
    fi
  ) &
  names+=("$name")
}

names=()
run oracle_builtin -- "$build/collgrad-check" --oracle-only --json "$logs/report.json"
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  CK_FORK=no run "$(basename "$t")" -- "$t"
done
wait
for name in "${names[@]}"; do
  [ "$(cat "$logs/$name.rc" 2>/dev/null)" = 0 ] || { status=1; echo "valgrind: $name did not pass" >&2; }
done
exit "$status"
