#!/usr/bin/env bash
# Every case example in the README and docs/ runs as written (issue 11 item
# 15): each fenced block that starts with a `case` line is run by the oracle
# and must pass; the rank-block snippets written inline (`on 0 { send(t, 1) }`, ...)
# are put together into one program, which must parse and run.
. "$(dirname "$0")/common.bash"
cat "$SRC/README.md" "$SRC"/docs/*.md > "$TMP/pages.md"
python3 - "$TMP/pages.md" "$TMP" > "$TMP/extract.out" 2>&1 <<'PY' || { cat "$TMP/extract.out"; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
n = 0
for body in re.findall(r"```\w*\n(.*?)```", text, re.S):
    if body.lstrip().startswith("case "):
        n += 1
        open(f"{sys.argv[2]}/readme{n}.case", "w").write(body)
spans = re.findall(r"`(on [^`]*\{[^`]*\})`", text)
prog = "case readme_inline\nworlds 2\nt = param(ones(2))\n" + "\n".join(spans) + "\n"
open(f"{sys.argv[2]}/readme_inline.case", "w").write(prog)
print(n, len(spans))
PY
read -r nblocks nspans < "$TMP/extract.out"
[ "$nblocks" -ge 1 ] && ok || bad "no case example found in the README or docs/"
[ "$nspans" -ge 2 ] && ok || bad "the inline rank blocks were not found"
for f in "$TMP"/readme*.case; do
    expect_exit 0 -- "$BIN" --oracle-only "$f"
    expect_exit 0 -- "$BIN" --no-fd "$f" # distributed: the rules= expectations too
done
finish
