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

# Files under $TMP a script wrote broken on purpose (full paths): not validated.
SCHEMA_EXEMPT=()

# validate_reports: every JSON report and JUnit file the script left under $TMP
# must be valid. A JSON report (a file with a "schema": "collgrad-check/report/..."
# member) must be UTF-8 (iconv) and valid against reports/schema/report-1.schema.json
# (tests/tools/report_check, found through $CG_REPORT_CHECK, which ctest sets, or
# beside the binary); a JUnit file (a <testsuites> element) must be valid against
# the junit-10 XSD (xmllint) with no (classname, name) twice. Binary files (an
# installed executable holds both strings) are not reports: grep -I skips them;
# nor is Python source (the installed collgrad_torch's report writer).
validate_reports() {
  local schema="$SRC/reports/schema/report-1.schema.json" xsd="$SRC/reports/schema/junit-10.xsd"
  local checker="${CG_REPORT_CHECK:-$(dirname "$BIN")/tests/report_check}"
  local f x json=() junit=()
  while IFS= read -r -d '' f; do
    for x in "${SCHEMA_EXEMPT[@]}"; do [ "$f" = "$x" ] && continue 2; done
    case "$f" in *.py) continue ;; esac   # an installed report writer holds both strings too
    if grep -qIE '"schema"[[:space:]]*:[[:space:]]*"collgrad-check/report/' "$f"; then json+=("$f"); fi
    if grep -qI '<testsuites' "$f"; then junit+=("$f"); fi
  done < <(find "$TMP" -type f -print0 2>/dev/null)
  if [ "${#json[@]}" -gt 0 ]; then
    if [ ! -x "$checker" ]; then
      bad "cannot validate ${#json[@]} JSON reports: no report_check at $checker (set CG_REPORT_CHECK)"
    elif "$checker" "$schema" "${json[@]}" > "$TMP/.schema-check" 2>&1; then ok
    else bad "JSON reports that break $schema:"; sed 's/^/    /' "$TMP/.schema-check" | head -20; fi
    for f in "${json[@]}"; do
      if iconv -f UTF-8 -t UTF-8 "$f" > /dev/null 2>&1; then ok; else bad "$f: not valid UTF-8"; fi
    done
  fi
  for f in "${junit[@]}"; do
    if xmllint --noout --schema "$xsd" "$f" > "$TMP/.xsd-check" 2>&1; then ok
    else bad "$f: not valid against junit-10.xsd"; sed 's/^/    /' "$TMP/.xsd-check" | head -10; fi
    local twice
    twice=$(grep -oE '<testcase classname="[^"]*" name="[^"]*"' "$f" | sort | uniq -d | head -3)
    if [ -z "$twice" ]; then ok; else bad "$f: (classname, name) twice: $twice"; fi
  done
  echo "validated ${#json[@]} JSON reports, ${#junit[@]} JUnit files"
}

finish() {
  validate_reports
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}

# need_torch_findings: the interpreter of the real-torch tests in $PY ($COLLGRAD_PYTHON, default
# /usr/bin/python3), its torch MAJOR.MINOR in $ver, that version's measured findings list in
# $findings (tests/torch/findings-$ver-gloo.txt) and the real-torch APIs to measure in $apis
# (funcol with torch 2.x); exit 77 (skipped, with the reason) without torch or without the list.
need_torch_findings() {
  PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
  if ! "$PY" -c "import torch" > /dev/null 2>&1; then
    echo "skipped: $PY cannot import torch (Debian: apt-get install python3-torch)"
    exit 77
  fi
  ver=$("$PY" -c "import torch; print('.'.join(torch.__version__.split('.')[:2]))")
  findings="$SRC/tests/torch/findings-$ver-gloo.txt"
  if [ ! -f "$findings" ]; then
    echo "skipped: torch $ver has no measured findings list ($findings)"
    exit 77
  fi
  apis="nn c10d gatherlayer diffdist rpc listassign"
  case "$ver" in 1.*) ;; *) apis="$apis funcol" ;; esac
}

# torch_emulation API: the rule set that models pytorch:API at torch $ver (its version window)
torch_emulation() {
  case "$1:$ver" in
    nn:2.4) echo torch-nn@2.4 ;; nn:*) echo torch-nn ;;
    funcol:2.4) echo torch-funcol@2.4 ;; funcol:*) echo torch-funcol ;;
    rpc:*) echo reference ;; listassign:*) echo gatherlayer ;;
    *) echo "$1" ;;
  esac
}
