#!/usr/bin/env bash
# A rule set as a plugin (examples/rules_plugin): GatherLayer's all_gather
# backward under the name example-own-slice must reproduce gatherlayer's
# numbers on the allgather-zh case (6 where the truth is 12, 9 for 18); a
# plugin of another ABI version or without the entry symbol is refused.
. "$(dirname "$0")/common.bash"
EXAMPLES="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}"
expect_pair() {
  if grep -A1 -E "\"expected\":[[:space:]]*\[$2\]," "$1" | grep -qE "\"observed\":[[:space:]]*\[$3\]"; then ok
  else bad "no check with expected [$2] and observed [$3] in $1"; fi
}
# A short path: a job carries its rule set's name in a fixed-size field.
cp "$EXAMPLES/libown_slice_rules.so" "$TMP/libown_slice_rules.so"
expect_exit 1 -- "$BIN" --rules "$TMP/libown_slice_rules.so" --json "$TMP/own.json" "$SRC/cases/allgather-zh"
expect_grep "fail per_rank\(x\) rank 0 rules=.*libown_slice_rules.so: expected \[12, 12, 12, 12\] observed \[6, 6, 6, 6\]" "$TMP/out"
expect_pair "$TMP/own.json" "12, 12, 12, 12" "6, 6, 6, 6"
expect_pair "$TMP/own.json" "18, 18, 18, 18" "9, 9, 9, 9"

# a case's rules=NAME resolves to the plugin's registered name (issue 26 item
# 9): on ae24178 it was never matched, so these expectations went unchecked.
# The case expects GatherLayer's numbers under the plugin's name: they pass;
# a wrong expectation under that name fails.
own="$SRC/cases/allgather-zh/allgather_product_mean.case"
sed -n '/^case/,/^backward/p' "$own" > "$TMP/own_named.case"
sed -i 's/^case .*/case own_named/' "$TMP/own_named.case"
printf 'expect grad(y) rules=example-own-slice [6] [9]
' >> "$TMP/own_named.case"
expect_exit 1 -- "$BIN" --rules "$TMP/libown_slice_rules.so" --json "$TMP/named.json" "$TMP/own_named.case"
python3 - "$TMP/named.json" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "rules=example-own-slice: $(cat "$TMP/py.out")"
import json, sys
checks = json.load(open(sys.argv[1]))["cases"][0]["checks"]
named = [k for k in checks if k["rules"] == "example-own-slice" and k["tensor"] == "y"]
assert [(k["rank"], k["status"]) for k in named] == [(0, "pass"), (1, "pass")], named
PY
sed 's/rules=example-own-slice \[6\] \[9\]/rules=example-own-slice [12] [18]/' "$TMP/own_named.case" > "$TMP/own_wrong.case"
expect_exit 1 -- "$BIN" --rules "$TMP/libown_slice_rules.so" "$TMP/own_wrong.case"
expect_grep "fail per_rank\(y\) rank 0 rules=example-own-slice: expected \[12, 12, 12, 12\] observed \[6, 6, 6, 6\]" "$TMP/out"
# without the plugin the name is unknown: a parse error in every mode
for mode in --oracle-only --list "--world 2"; do
  expect_exit 2 -- "$BIN" $mode "$TMP/own_named.case"
  expect_grep "own_named.case:[0-9]+:22: expected a registered rule set \(reference, c10d, .*megatron, torch-nn@2.4, torch-funcol@2.4\), got 'example-own-slice'" "$TMP/out"
done

# refusals: exit 2 (the rule set named is unusable), with the reason
cat > "$TMP/abi99.c" <<'C'
#include "rules.h"
static const cg_rules r = {.abi_version = 99, .name = "abi99"};
const cg_rules *collgrad_rules(void);
const cg_rules *collgrad_rules(void) { return &r; }
C
if "${CG_CC:-cc}" -std=c11 -shared -fPIC -I "$SRC/harness/rules" -I "$SRC/harness/lang" -I "$(dirname "$BIN")/generated" -I "$SRC/harness/autograd" -I "$SRC/harness/collectives" -I "$SRC/harness/transports" -o "$TMP/libabi99.so" "$TMP/abi99.c"; then ok; else bad "cannot compile abi99.c"; fi
expect_exit 2 -- "$BIN" --rules "$TMP/libabi99.so" --world 2 "$SRC/cases/allgather-zh"
expect_grep "libabi99.so: rule set ABI version 99, this collgrad-check needs 6 \(rebuild the plugin against this version's rules.h: version 3 replaced cg_rule_call.in_counts with counts.*version 4 replaced cg_rules_fail\(call, ...\) with cg_error\(call->st, ...\).*version 5 added measured, refuses and nonmember_backward, version 6 refuses_at" "$TMP/out"
cp "$EXAMPLES/libbad_abi.so" "$TMP/libbad_abi.so"
expect_exit 2 -- "$BIN" --rules "$TMP/libbad_abi.so" --world 2 "$SRC/cases/allgather-zh"
expect_grep "no symbol 'collgrad_rules' \(not a collgrad-check rule set\?\)" "$TMP/out"
expect_exit 2 -- "$BIN" --rules "$TMP/missing.so" --world 2 "$SRC/cases/allgather-zh"
expect_grep "missing.so: cannot read the plugin: No such file or directory" "$TMP/out"
expect_exit 2 -- "$BIN" --rules example-own-slice --world 2 "$SRC/cases/allgather-zh"
expect_grep "unknown rule set 'example-own-slice' \(built in: reference, c10d, " "$TMP/out"
finish
