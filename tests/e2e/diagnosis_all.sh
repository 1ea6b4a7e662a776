#!/usr/bin/env bash
# With each emulation as the backend under test, over every built-in case,
# every failing job's diagnosis names that emulation (alone, or among the
# explanations the case cannot tell apart).
. "$(dirname "$0")/common.bash"
all_rules="c10d torch-nn gatherlayer diffdist torch-funcol horovod torch-xla megatron"
# under the sanitizers (CI's time) two of them: the diagnosis code is one for every rule set, and
# the plain build runs all eight
[ -n "${ASAN_OPTIONS:-}" ] && all_rules="c10d torch-nn"
for rules in $all_rules; do
  expect_exit 1 -- "$BIN" --rules "$rules" --timeout 120
  awk -v r="$rules" '
    /^ *[0-9]+\/[0-9]+ / { if (failing && !named) { print "not named: " name; missing++ }
                          name = $0; failing = /\*\*\*(Failed|Error)/; named = 0; next }
    /diagnosis:/ { if (index($0, r)) named = 1 }
    END { if (failing && !named) { print "not named: " name; missing++ }; exit missing > 0 }
  ' "$TMP/out" > "$TMP/missing" && ok || { bad "$rules: failing jobs without a diagnosis naming it"; head -5 "$TMP/missing"; }
done
finish
