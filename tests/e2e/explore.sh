#!/usr/bin/env bash
# `collgrad-check explore`: random programs are the same for a seed, valid
# (the parser and the oracle take every one), and the oracle, finite
# differences and the MPI reference agree on them; a transport with a planted
# bug (examples/buggy_transport: reduce_scatter's blocks in the wrong rank
# order) is found, and each class shrinks to a case of at most 6 statements
# that fails the same way when the tool runs it as is, and passes over the
# built-in transport; every --inject data-fault kind is found. 300 programs in all
# (CI's count). Its reports validate (finish). CG_EXAMPLES_DIR comes
# from tests/CMakeLists.txt.
. "$(dirname "$0")/common.bash"
BUGGY="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}/libbuggy_transport.so"

# class_case DIR CLASS: the shrunk case file of CLASS in DIR/explore.json
class_case() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1] + "/explore.json"))
print(next(c["case"] for c in d["classes"] if c["class"] == sys.argv[2]))' "$1" "$2"
}
# at_most_statements N FILE: its statements (not header, comment, expect or blank lines)
at_most_statements() {
  local n
  n=$(grep -cvE '^(#|case |source |world |dtype |tolerance |expect |$)' "$2")
  [ "$n" -le "$1" ] && ok || bad "$2 has $n statements (at most $1)"
}

# the same seed, the same programs (and another seed, others)
expect_exit 0 -- "$BIN" explore --seed 7 --count 30 --no-mpi --out "$TMP/a"
expect_exit 0 -- "$BIN" explore --seed 7 --count 30 --no-mpi --out "$TMP/b"
expect_exit 0 -- "$BIN" explore --seed 8 --count 30 --no-mpi --out "$TMP/c"
diff -r "$TMP/a/programs" "$TMP/b/programs" > /dev/null && ok || bad "seed 7 drew different programs twice"
diff -r "$TMP/a/programs" "$TMP/c/programs" > /dev/null && bad "seeds 7 and 8 drew the same programs" || ok
[ "$(ls "$TMP/a/programs" | wc -l)" -eq 30 ] && ok || bad "30 programs expected in $TMP/a/programs"

# the three opinions agree, and the generator made no invalid program
expect_exit 0 -- "$BIN" explore --seed 1 --count 110 --max-world 4 --out "$TMP/ref"
expect_grep "^explore: seed 1, 110 programs in .*: 0 disagreements of the tool .*, 0 rejected programs" "$TMP/out"
python3 - "$TMP/ref" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "explore.json / reference.json: $(cat "$TMP/py.out")"
import json, sys
d = json.load(open(sys.argv[1] + "/explore.json"))
assert (d["programs"], d["tool_disagreements"], d["rejected"], d["classes"]) == (110, 0, 0, []), d
r = json.load(open(sys.argv[1] + "/reference.json"))
assert len(r["cases"]) == 110 and all(c["status"] == "pass" for c in r["cases"]), r["summary"]
kinds, flowing = set(), 0
for c in r["cases"]:
    kinds |= {k["semantics"] for k in c["checks"]}
    flowing += any(k["semantics"] == "per_rank" and any(v != 0 for v in k["expected"]) for k in c["checks"])
assert {"value", "per_rank"} <= kinds, kinds   # values and gradients were compared, not just run
assert flowing >= 90, flowing                   # and in most programs some gradient is not zero
# a sum rounds at its terms' magnitude: each program's tolerance line allows the
# larger of the dtype's rtol and 16 unit roundoffs times its largest gradient or, where more, 16 unit roundoffs times its
# largest value times W(W+1) (the oracle's numbers, as the report lists them)
import re
default = {"f64": (1e-9, 1e-12, 2.0**-53), "f32": (1e-5, 1e-5, 2.0**-24)}
lines = 0
for c in r["cases"]:
    text = open("%s/programs/%s.case" % (sys.argv[1], c["name"])).read()
    rtol, atol, u = default[re.search(r"^dtype (\S+)$", text, re.M).group(1)]
    def largest(sem):
        return max([abs(v) for k in c["checks"] if k["semantics"] == sem for v in k["expected"]] + [0])
    w = c["world"]
    need = max(max(rtol, 16 * u) * largest("per_rank"), 16 * u * largest("value") * w * (w + 1))
    line = re.search(r"^tolerance rtol=(\S+) atol=(\S+)$", text, re.M)
    if need > atol:
        assert line and float(line.group(1)) == rtol, (c["name"], line)
        assert abs(float(line.group(2)) - need) <= 1e-3 * need, (c["name"], line.group(2), need)
        lines += 1
    else:
        assert not line, (c["name"], need)
assert lines >= 30, lines
PY
# what the programs draw: collectives on groups and meshes of every rooted and split kind, uneven
# splits (reduce_scatter, all_to_all), rings of every shift
python3 - "$TMP/ref/programs" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "generator coverage: $(cat "$TMP/py.out")"
import os, re, sys
text = "".join(open(os.path.join(sys.argv[1], f)).read() for f in os.listdir(sys.argv[1]))
want = {
    "group gather/reduce/scatter/all_to_all": r"= (gather|reduce|scatter|all_to_all)\(.*group=",
    "a mesh root expression": r"rank - rank % 2, group=tp\)|rank % 2, group=dp\)",
    "a rooted result read on its roots": r"^on \d+(, \d+)* \{",
    "uneven reduce_scatter": r"reduce_scatter\(.*send_splits=\[",
    "uneven all_to_all": r"all_to_all\(.*send_splits=\[\[.*recv_splits=\[\[",
    "a ring of shift > 1": r"send\(\w+, \(rank \+ [2-9]\) % world\)",
}
missing = [k for k, rx in want.items() if not re.search(rx, text, re.M)]
assert not missing, missing
PY

# the planted bug is found and shrunk to a case that reproduces as is; its other face, all_gather's
# gradients through the buggy reduce_scatter (alone, or with a local term added), is the same class,
# so no program is left "unknown"
expect_exit 1 -- "$BIN" explore --seed 1 --count 30 --max-world 2 --transport "$BUGGY" --timeout 5 \
  --shrink-time 5 --out "$TMP/bug"
expect_grep "^  matches wrong_rank_order +[0-9]+ programs" "$TMP/out"
grep -q "^  unknown " "$TMP/out" && bad "a buggy-transport program left unknown" || ok
expect_grep "0 disagreements of the tool" "$TMP/out"
f=$(class_case "$TMP/bug" "matches wrong_rank_order")
at_most_statements 6 "$f"
grep -q "^# observed under --transport .*libbuggy_transport.so (fail):" "$f" && grep -q "^#   grad(x0) rank 0: \[" "$f" \
  && ok || bad "$f has no observed numbers"
expect_exit 1 -- "$BIN" --transport "$BUGGY" "$f"
expect_grep "diagnosis: the transport's reduce_scatter delivers results in the wrong rank order" "$TMP/out"
expect_exit 0 -- "$BIN" "$f"
[ "$(ls "$TMP"/bug/shrunk-*.case | wc -l)" -eq "$(python3 -c "
import json; print(len(json.load(open('$TMP/bug/explore.json'))['classes']))")" ] && ok || bad "a shrunk case per class"

# a class that names a built-in rule set shrinks against that rule set on threads (milliseconds a
# candidate, where real PyTorch takes seconds), and the result stands once the backend itself gives
# it the class: the plugin own_slice_rules (all_gather's backward keeps the own slice) gives
# gatherlayer's numbers; the shrunk case fails as is under the plugin and passes under the reference
OWN="${CG_EXAMPLES_DIR:-$(dirname "$BIN")/examples}/libown_slice_rules.so"
expect_exit 1 -- "$BIN" explore --seed 1 --count 30 --max-world 3 --rules "$OWN" --shrink-time 30 --out "$TMP/own"
expect_grep "^explore: shrunk under the rule set gatherlayer in [0-9]+ tries: the same class under the backend" "$TMP/out"
expect_grep "^  matches gatherlayer +[0-9]+ programs" "$TMP/out"
f=$(class_case "$TMP/own" "matches gatherlayer")
at_most_statements 4 "$f"
expect_exit 1 -- "$BIN" --rules "$OWN" "$f"
expect_grep "diagnosis: (matches rule set gatherlayer|this case cannot tell apart gatherlayer)" "$TMP/out"
expect_exit 0 -- "$BIN" "$f"

# a rule set's raises classes name the error, not which rank passed it on or where
# (c10d: the gather's output is detached, so a backward through it raises)
expect_exit 1 -- "$BIN" explore --seed 3 --count 60 --no-mpi --rules c10d --shrink-time 2 --out "$TMP/c10d"
python3 - "$TMP/c10d/explore.json" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "c10d classes: $(cat "$TMP/py.out")"
import json, re, sys
d = json.load(open(sys.argv[1]))
names = [c["class"] for c in d["classes"]]
assert d["tool_disagreements"] == 0 and names, d
raises = [n for n in names if n.startswith("raises: ")]
assert all(not re.search(r"rank \d+ failed|:\d+:\d+: ", n) for n in raises), raises
assert len(raises) == len(set(raises)), raises
PY

# an f16 gradient past f16's largest finite value (65504) is inf in an honest run: a program whose
# largest gradient would come near it has its losses scaled by a power of two (first seen at seed
# 21, program 170 of the generator before it read the collective table: four collectives at W=5,
# the oracle's gradients up to 93750, inf from the MPI reference on ranks 3 and 4; today seed 29,
# program 112: three collectives at W=7, every loss halved). Scaled, it passes over MPI.
expect_exit 0 -- "$BIN" explore --seed 29 --count 113 --halves --no-mpi --out "$TMP/f16"
p="$TMP/f16/programs/s29_p112.case"
expect_grep "^dtype f16$" "$p"
n=$(grep -c "backward(" "$p")
[ "$n" -ge 1 ] && [ "$(grep -cE 'backward\(.* \* 0\.(5|25|125|0625|03125|015625|0078125)\)$' "$p")" = "$n" ] && ok \
  || { bad "s29_p112's losses are not scaled by a power of two"; grep backward "$p"; }
expect_exit 0 -- "$BIN" --no-fd "$p"

# a max/min collective whose input ties across ranks has no one gradient: the generator avoids
# the ties it knows of, and the oracle's values catch the rest, made a sum (first seen at seed
# 22, program 136 of the earlier generator, where a reduce max of a mean that was 1/2 on every
# rank gave the oracle and the MPI reference different ranks' gradients; today seed 22, program
# 134: softmax(v7) of a [6, 1] tensor is 1 on every rank, and the reduce_scatter drawn over it
# with min is judged, and written, as a sum)
expect_exit 0 -- "$BIN" explore --seed 22 --count 135 --no-mpi --out "$TMP/tie"
p="$TMP/tie/programs/s22_p134.case"
expect_grep "^v9 = softmax\(v7\)$" "$p"
expect_grep "^v11 = reduce_scatter\(v9, sum\)$" "$p"
expect_exit 0 -- "$BIN" --no-fd "$p"

# every --inject data-fault kind is found within 10 programs: findings, none the tool's own
# (wrong_root hangs the ranks of some programs: --timeout bounds each)
kinds="wrong_sum drop_rank swap_slices bit_flip scale_world wrong_root wrong_dtype_size"
# under the sanitizers (CI's time) two of them: the fault wrapper is one for every kind,
# and the plain build runs all seven
[ -n "${ASAN_OPTIONS:-}" ] && kinds="bit_flip wrong_root"
for kind in $kinds; do
  expect_exit 1 -- "$BIN" explore --seed 1 --count 10 --max-world 3 --inject "$kind:0" --timeout 3 \
    --shrink-time 2 --out "$TMP/inject-$kind"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool_disagreements"] == 0 and d["findings"] > 0 and d["classes"], d' "$TMP/inject-$kind/explore.json" \
    && ok || bad "--inject $kind: no finding in 10 programs"
done

# bad options: one line naming the option and what it takes
expect_exit 2 -- "$BIN" explore --count 0
expect_grep "^collgrad-check explore: --count: expected an integer in 1\.\.100000000, got '0'$" "$TMP/out"
expect_exit 2 -- "$BIN" explore --max-world 9
expect_grep "^collgrad-check explore: --max-world: expected an integer in 1\.\.8, got '9'$" "$TMP/out"
# the backend's names are checked before any program is drawn (once: after the oracle's and
# the MPI reference's runs, as "the backend run failed (exit 2): see backend.log")
for opt in "--rules no-such-rules" "--transport no-such-transport" "--backend pytorch:no-such-api" \
           "--inject no-such-fault" "--backend pytorch:nn --inject hang"; do
  # shellcheck disable=SC2086
  expect_exit 2 -- "$BIN" explore --count 1000 $opt --out "$TMP/refused"
  [ ! -e "$TMP/refused" ] && ok || bad "explore $opt made $TMP/refused before refusing"
done
# --python goes to the backend run, with --backend pytorch:API only; an interpreter without torch
# is found before any program is drawn (exit 3, as the tool's own run; it was "0 findings", exit 0)
expect_exit 2 -- "$BIN" explore --count 1 --python /usr/bin/python3 --out "$TMP/refused"
expect_grep "^collgrad-check: --python applies to --backend pytorch:API only$" "$TMP/out"
expect_exit 3 -- "$BIN" explore --count 1 --backend pytorch:nn --python "$TMP/no-python" --out "$TMP/refused"
expect_grep "^collgrad-check explore: .*/no-python \(chosen by --python\) cannot import torch" "$TMP/out"
[ ! -e "$TMP/refused" ] && ok || bad "explore --python made $TMP/refused before refusing"
# an mpiexec that cannot start the ranks is the machine's: exit 3 and the log, not "2 disagreements
# of the tool" (exit 1, each program's class "tool: oracle vs MPI reference (error)")
CG_MPIEXEC=/bin/false expect_exit 3 -- "$BIN" explore --count 2 --max-world 2 --out "$TMP/nompi"
expect_grep "^collgrad-check explore: the MPI reference run ended in an error for every program \(exit 3\): the machine's, not a disagreement of the tool; see .*/nompi/reference.log$" "$TMP/out"
# --out: an empty name and a place no directory can be made are the user's (were exit 3, or
# a directory "/programs" at the root); the message names what could not be made
expect_exit 2 -- "$BIN" explore --out ""
expect_grep "^collgrad-check explore: expected a directory name .* after --out, got ''$" "$TMP/out"
touch "$TMP/a-file"
expect_exit 2 -- "$BIN" explore --count 1 --out "$TMP/a-file"
expect_grep "^collgrad-check explore: --out .*/a-file: cannot make .*/a-file/programs: Not a directory$" "$TMP/out"
expect_exit 2 -- "$BIN" explore --count 1 --out "$TMP/no/such"
expect_grep "^collgrad-check explore: --out .*/no/such: cannot make .*/no/such: No such file or directory$" "$TMP/out"
expect_exit 2 -- "$BIN" explore --bogus
expect_exit 2 -- "$BIN" explore extra-argument
expect_exit 0 -- "$BIN" explore --help
expect_grep "^usage: collgrad-check explore" "$TMP/out"
finish
