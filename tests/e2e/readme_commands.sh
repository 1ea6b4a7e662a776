#!/usr/bin/env bash
# Every command example in the documentation runs (issue 26 item 4: on
# ae24178 the bench, compare and install examples were run by no test, and the
# usage block had drifted from --help). Each fenced `sh` block and the bench
# block of docs/*.md (the pages the README's detail moved to, issue 53; the
# front page's own examples are e2e_front_page's) is taken as written and run
# here, with only the documented
# substitutions: bench sizes shrunk to their first size and one iteration
# (the numbers in docs/bench.md are measurements, not a test's), the install
# prefix and the plugin source under $TMP. `scripts/test.sh` is the command
# that runs this very test, so it is the one example not run here.
. "$(dirname "$0")/common.bash"
DOCS="$TMP/docs.md" # every page of docs/, one after the other
cat "$SRC"/docs/*.md > "$DOCS"
export PATH="$(cd "$(dirname "$BIN")" && pwd):$PATH" # `collgrad-check` in the examples is this build
T="timeout -k 5 300"

blocks() { # blocks LANG: the fenced blocks of that language, one command per line (comments dropped)
  python3 - "$DOCS" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
    for line in body.splitlines():
        if sys.argv[2] == "bench":
            if line.startswith("collgrad-check bench"):
                print(line)
        elif lang == sys.argv[2] and line.strip():
            print(line.split("  #")[0].rstrip())
PY
}

# 1. the usage block is --help, word for word (the directory line aside)
python3 - "$DOCS" "$BIN" > "$TMP/usage.out" 2>&1 <<'PY' && ok || bad "docs/running.md's usage block differs from --help: $(cat "$TMP/usage.out")"
import re, subprocess, sys
text = open(sys.argv[1]).read()
block = re.search(r"```text\n(usage: collgrad-check.*?)```", text, re.S).group(1).splitlines()
live = subprocess.run([sys.argv[2], "--help"], capture_output=True, text=True).stdout.splitlines()
live[5] = block[5]  # the cases directory this machine searches
if block != live:
    import difflib
    print("\n".join(difflib.unified_diff(block, live, "docs/running.md", "--help", lineterm="")))
    sys.exit(1)
PY

# 1b. every rule set --help names has a row in docs/rule-sets.md's table with the
# framework versions it models, and the old paragraph listing five is gone
python3 - "$DOCS" "$BIN" > "$TMP/rules.out" 2>&1 <<'PY' && ok || bad "docs/rule-sets.md's table: $(cat "$TMP/rules.out")"
import re, subprocess, sys
text = open(sys.argv[1]).read()
live = subprocess.run([sys.argv[2], "--help"], capture_output=True, text=True).stdout
names = re.search(r"--rules NAME .*?\((.*?)\)", live, re.S).group(1)
names = [n.strip() for n in re.sub(r"\s+", " ", names).replace(", or a plugin ./liby.so", "").split(",")]
assert len(names) == 11, names
for n in names:
    row = re.search(r"^\| `%s` \| ([^|]*) \|" % re.escape(n), text, re.M)
    assert row, "no row for " + n
    assert n == "reference" or re.search(r"\d", row.group(1)), "no version for %s: %s" % (n, row.group(1))
assert "Rule sets: `reference`, `c10d`" not in text, "the stale paragraph is back"
PY

# 2. the bench examples: as written, at their first size, one iteration
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  small=$(printf '%s\n' "$cmd" | sed -E 's/-b ([0-9]+[KMG]?) -e [0-9]+[KMG]?/-b \1 -e \1/; s/-n [0-9]+/-n 1/; s/--oracle-max-world [0-9]+/--oracle-max-world 4/')
  expect_exit 0 -- $T bash -c "$small" < /dev/null
  # the page's output of this command is the tool's: every header line, numbers masked, and every
  # row's fields (numbers masked) as the tool prints them (issue 63 item 6)
  python3 - "$DOCS" "$cmd" "$TMP/out" > "$TMP/shape" 2>&1 <<'PY' && ok || { bad "docs/bench.md's output of '$cmd' is not the tool's:"; cat "$TMP/shape"; }
import re, sys
docs, cmd = open(sys.argv[1]).read().splitlines(), sys.argv[2]
live = [l for l in open(sys.argv[3]).read().splitlines() if l.strip()]
shown = []
for line in docs[docs.index(cmd) + 1:]:
    if line.startswith(("collgrad-check", "```")):
        break
    shown.append(line)
mask = lambda l: " ".join(re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "N", l).split())
live_heads = {mask(l) for l in live if l.startswith("#")}
live_rows = {mask(l) for l in live if not l.startswith("#")}
assert shown, "no output shown"
for line in shown:
    if line.startswith("# fitted growth:"):  # a small run has too few points to fit: the words only
        assert any(h.startswith("# fitted growth:") for h in live_heads), line
    elif line.startswith("#"):
        assert mask(line) in live_heads, f"header not the tool's: {line}\n  the tool's: {sorted(live_heads)}"
    else:
        assert mask(line) in live_rows, f"row not the tool's: {line}\n  the tool's: {sorted(live_rows)}"
PY
done < <(blocks bench)
[ "$n" -ge 3 ] && ok || bad "found $n bench examples in docs/, wanted 3"

# 3. compare: the example line docs/reports.md quotes comes out of two real reports
expect_exit 0 -- "$BIN" --no-fd --rules reference --world 2 --json "$TMP/OLD.json" "$SRC/cases/pytorch-58005/allreduce_prod_scaled.case"
expect_exit 1 -- "$BIN" --no-fd --rules torch-nn --world 2 --json "$TMP/NEW.json" "$SRC/cases/pytorch-58005/allreduce_prod_scaled.case"
quoted=$(grep -oE '`allreduce_prod_scaled W=2 rules=reference -> torch-nn@1.13: [^`]*`' "$DOCS" | tr -d '`')
[ -n "$quoted" ] && ok || bad "docs/reports.md's compare example line was not found"
(cd "$TMP" && collgrad-check compare OLD.json NEW.json) > "$TMP/cmp.out" 2>&1
[ $? = 1 ] && ok || bad "compare exit $? (wanted 1: a regression)"
grep -qF -- "$quoted" "$TMP/cmp.out" && ok || { bad "compare did not print docs/reports.md's line: $quoted"; sed 's/^/    /' "$TMP/cmp.out" | head; }

# 4. the install block, prefix and plugin source under $TMP
BUILD="$(cd "${CG_BUILD_DIR:-$(dirname "$BIN")}" && pwd)"
cp "$SRC/examples/rules_plugin/own_slice_rules.c" "$TMP/my_rules.c"
ln -s "$SRC/cases" "$TMP/cases" # the matrix lines name cases/ as seen from the source tree
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  cmd=${cmd//\/opt\/collgrad/$TMP/opt}
  cmd=${cmd//cmake --install build/${CG_CMAKE:-cmake} --install $BUILD}
  cmd=${cmd//cc -shared/${CG_CC:-cc} -shared}
  case "$cmd" in
    export\ *) eval "$cmd"; ok ;;
    *collgrad-check\ --rules*) # every built-in case under GatherLayer's rule: checks fail (1), nothing breaks
      (cd "$TMP" && $T bash -c "$cmd --no-fd") < /dev/null > "$TMP/out" 2>&1; rc=$?
      [ "$rc" = 1 ] && ok || { bad "exit $rc (wanted 1): $cmd"; tail -5 "$TMP/out"; } ;;
    *) (cd "$TMP" && $T bash -c "$cmd") < /dev/null > "$TMP/out" 2>&1 && ok || { bad "failed: $cmd"; tail -5 "$TMP/out"; } ;;
  esac
  case "$cmd" in *matrix*) # every column ran its cases (once: each refused "cases/...: cannot read", exit 0)
    grep -E "^matrix: \[[0-9/]+\] [^ ]+: (not run|every case skipped)" "$TMP/out" && bad "a column did not run: $cmd" || ok
    case "$cmd" in
      *--md\ matrix.md*) expect_grep "^\| allreduce_prod_scaled \| 2 \| correct \| wrong \(" "$TMP/matrix.md" ;;
      *) expect_grep "^\| rpc_add \| 2 \| correct \| correct \|$" "$TMP/out" ;;
    esac ;;
  esac
done < <(blocks sh | grep -v '^scripts/')
[ "$n" -ge 4 ] && ok || bad "found $n install commands in docs/, wanted 4"

# 5. the main job and its documented variants (scripts/run.sh builds into the
# build directory this test runs from: nothing to compile, so it only runs)
for args in "" "--world 4"; do
  expect_exit 0 -- env CG_BUILD_DIR="$BUILD" $T "$SRC/scripts/run.sh" $args
  expect_grep "100% cases passed" "$TMP/out"
done
finish
