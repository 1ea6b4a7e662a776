#!/usr/bin/env bash
# A case file never loads code (issue 12 item 1). A shared object whose
# constructor writes a marker file is named by case files in every spelling
# dlopen would accept (absolute path, relative path, bare NAME.so); each case
# is refused at parse time with file:line:col and exit 2, in oracle-only and
# distributed runs, and the marker never appears: the library was never
# loaded. The same library passed on the command line (--rules FILE.so) is
# loaded, which proves the marker works.
. "$(dirname "$0")/common.bash"
CC="${CG_CC:-cc}"
BIN="$(realpath "$BIN")"
cd "$TMP" || exit 1 # relative spellings resolve here, beside the libraries
MARK="$TMP/loaded.marker"
cat > "$TMP/evil.c" <<C
#include <stdio.h>
__attribute__((constructor)) static void mark(void)
{
    FILE *f = fopen("$MARK", "w");
    if (f) { fputs("loaded\n", f); fclose(f); }
}
C
"$CC" -shared -fPIC -o "$TMP/evil.so" "$TMP/evil.c" || { echo "cannot build the test library"; exit 1; }
cp "$TMP/evil.so" "$TMP/libevil.so"

n=0
for spelling in "$TMP/evil.so" "./evil.so" "evil.so" "libevil.so" "../evil"; do
    n=$((n + 1))
    printf 'case evil%d\nworlds 2\nx = param(ones(1))\ny = all_reduce(x, sum)\nbackward(y)\nexpect grad(x) rules=%s [2] [2]\n' \
        "$n" "$spelling" > "$TMP/evil$n.case"
    for mode in --oracle-only --world=2; do
        [ "$mode" = --world=2 ] && mode="--world 2"
        expect_exit 2 -- "$BIN" $mode --json "$TMP/r$n.json" "$TMP/evil$n.case"
        expect_grep "evil$n.case:6:22: expected a rule-set name .*a case file cannot load a plugin" "$TMP/out"
        [ ! -e "$MARK" ] && ok || bad "the library was loaded for rules=$spelling ($mode)"
    done
done

# a name that is not registered: a clear error at run time, nothing loaded
printf 'case unknown\nworlds 2\nx = param(ones(1))\ny = all_reduce(x, sum)\nbackward(y)\nexpect grad(x) rules=evil [2] [2]\n' \
    > "$TMP/unknown.case"
expect_exit 2 -- "$BIN" --world 2 "$TMP/unknown.case"
expect_grep "evil" "$TMP/out"
[ ! -e "$MARK" ] && ok || bad "the library was loaded for rules=evil"

# the marker does work: --rules FILE.so loads the library (and then fails its ABI check)
"$BIN" --world 2 --rules "$TMP/evil.so" "$TMP/unknown.case" > "$TMP/out" 2>&1
[ -e "$MARK" ] && ok || bad "--rules FILE.so did not load the library: the marker test proves nothing"
finish
