#!/usr/bin/env bash
# The README is a front page (issue 53 item 6): at most 250 lines, every page
# it links to exists, and its examples run as written with the output shown:
# each `sh` line with the exit status its comment names ("# exit N"; a line
# "# on a GPU" is one scripts/gpu-check.sh runs, not run here), the `python`
# block as a script and the `py` block as a pytest module; a `text` block right
# after one of them holds lines its output must have (times written N s).
. "$(dirname "$0")/common.bash"
README="$SRC/README.md"
PY="${COLLGRAD_PYTHON:-/usr/bin/python3}"
export PATH="$(cd "$(dirname "$BIN")" && pwd):$PATH" # `collgrad-check` on the page is this build
export PYTHONPATH="$SRC/python"                      # this tree's package, not an installed one
T="timeout -k 5 300"
lines=$(wc -l < "$README")
[ "$lines" -le 250 ] && ok || bad "README.md has $lines lines (a front page has at most 250)"

# every link into docs/ (and docs/'s own links) names a file that exists
python3 - "$SRC" > "$TMP/links.out" 2>&1 <<'PY' && ok || bad "broken links: $(cat "$TMP/links.out")"
import os, re, sys
root = sys.argv[1]
pages = [os.path.join(root, "README.md")] + [os.path.join(root, "docs", n) for n in os.listdir(os.path.join(root, "docs")) if n.endswith(".md")]
broken = []
for p in pages:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", open(p).read()):
        if "://" not in target and not os.path.exists(os.path.join(os.path.dirname(p), target)):
            broken.append(f"{os.path.relpath(p, root)} -> {target}")
print("\n".join(broken))
sys.exit(1 if broken else 0)
PY

# the examples: blocks in order, each followed by the output block it shows
python3 - "$README" "$TMP" > "$TMP/blocks.out" 2>&1 <<'PY' || { cat "$TMP/blocks.out"; exit 1; }
import re, sys
text, tmp = open(sys.argv[1]).read(), sys.argv[2]
blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
n = 0
for i, (lang, body) in enumerate(blocks):
    if lang not in ("sh", "python", "py"):
        continue
    n += 1
    # importable names: the ranks import a checked function from its module
    name = {"sh": f"ex{n}.sh", "python": f"ex{n}_script.py", "py": f"test_ex{n}.py"}[lang]
    open(f"{tmp}/{name}", "w").write(body)
    if i + 1 < len(blocks) and blocks[i + 1][0] == "text":
        open(f"{tmp}/{name}.want", "w").write(blocks[i + 1][1])
print(n)
PY
read -r nex < "$TMP/blocks.out"
[ "$nex" -ge 5 ] && ok || bad "found $nex examples on the front page, wanted at least 5"
ln -s "$SRC/cases" "$TMP/cases"
ln -s "$SRC/examples" "$TMP/examples"
for ex in "$TMP"/ex*.sh "$TMP"/ex*_script.py "$TMP"/test_ex*.py; do
  [ -f "$ex" ] || continue
  : > "$ex.out"
  case "$ex" in
    *_script.py) (cd "$TMP" && $T "$PY" "$ex") < /dev/null >> "$ex.out" 2>&1 \
                   && ok || { bad "the python example failed"; tail -15 "$ex.out"; } ;;
    */test_ex*.py) (cd "$TMP" && $T "$PY" -m pytest -q -p no:cacheprovider "$(basename "$ex")") < /dev/null >> "$ex.out" 2>&1 \
                     && ok || { bad "the pytest example failed"; tail -15 "$ex.out"; } ;;
    *.sh) while IFS= read -r line; do
            cmd=$(printf '%s\n' "$line" | sed -E 's/  # .*//')
            [ -z "$cmd" ] && continue
            case "$cmd" in scripts/*) continue ;; esac # scripts/test.sh runs this test; scripts/run.sh: e2e_readme_commands
            case "$line" in *"# on a GPU"*)
              grep -qF -- "--transport nccl" "$SRC/scripts/gpu-check.sh" && ok || bad "gpu-check.sh does not run: $cmd"
              if ! command -v nvidia-smi > /dev/null 2>&1; then # here: refused in one line, exit 3
                (cd "$TMP" && $T bash -c "$cmd") < /dev/null > "$TMP/gpu.out" 2>&1
                rc=$?
                [ "$rc" = 3 ] && [ "$(wc -l < "$TMP/gpu.out")" = 1 ] && grep -q "^collgrad-check: nccl: " "$TMP/gpu.out" \
                  && ok || { bad "without a GPU, '$cmd' exits $rc (wanted 3, one line): $(cat "$TMP/gpu.out")"; }
              fi
              continue ;;
            esac
            want=$(printf '%s\n' "$line" | sed -nE 's/.*# exit ([0-9]).*/\1/p')
            cmd=$(printf '%s\n' "$cmd" | sed -E 's/^python3 /"$PY" /')
            (cd "$TMP" && PY="$PY" $T bash -c "$cmd") < /dev/null >> "$ex.out" 2>&1
            rc=$?
            [ "$rc" = "${want:-0}" ] && ok || { bad "exit $rc (wanted ${want:-0}): $cmd"; tail -15 "$ex.out"; }
          done < "$ex" ;;
  esac
  want="$ex.want"
  [ -f "$want" ] || continue
  # the block shown is the tool's output as it comes, line after line (times written N s, the
  # example's file FILE.py), cut only where it says "..." (issue 63 item 6: a block once lacked lines)
  python3 - "$want" "$ex.out" > "$TMP/want.out" 2>&1 <<'PY' && ok || bad "$(basename "$ex")'s output is not what the page shows: $(cat "$TMP/want.out")"
import re, sys
norm = lambda s: re.sub(r"\S*\.py:", "FILE.py:", re.sub(r"\d+(\.\d+)? ?s\b", "N s", s.rstrip()))
got = [norm(l) for l in open(sys.argv[2]) if l.strip()]
shown = [norm(l) for l in open(sys.argv[1]).read().splitlines() if l.strip()]
runs, run = [], []
for l in shown:
    if l.strip() == "...":
        runs, run = runs + [run], []
    else:
        run.append(l)
runs.append(run)
at = 0
for run in (r for r in runs if r):
    starts = [i for i in range(at, len(got) - len(run) + 1) if got[i:i + len(run)] == run]
    if not starts:
        missing = [l for l in run if l not in got]
        print("not a run of the output's lines: " + ("; ".join(missing) if missing else run[0] + " ..."))
        print("the output:\n" + "\n".join(got))
        sys.exit(1)
    at = starts[0] + len(run)
PY
done
finish
