# Helpers shared by the end-to-end scripts (sourced). $1 of each script is the
# collgrad-check binary, $2 the source tree.
set -u
BIN="$1"
SRC="$2"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
failures=0
passes=0

ok()   { passes=$((passes + 1)); }
bad()  { failures=$((failures + 1)); echo "FAIL: $*"; }

# expect_exit CODE -- command...: run, keep stdout+stderr in $TMP/out
expect_exit() {
  local want="$1"; shift; [ "$1" = "--" ] && shift
  "$@" > "$TMP/out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "exit $got (wanted $want): $*"; sed 's/^/    /' "$TMP/out" | tail -20; fi
}

# expect_grep PATTERN FILE
expect_grep() {
  if grep -qE -- "$1" "$2"; then ok; else bad "no match for '$1' in $2"; sed 's/^/    /' "$2" | tail -20; fi
}

finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}
