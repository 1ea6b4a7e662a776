#!/usr/bin/env bash
# Where --json and --junit write (reports/report_file.h): "-" is standard output,
# with the progress lines and the summary moved to standard error; a FIFO, a
# character device or a link to standard output is written as a stream and
# stays what it was; a directory, a missing directory, a link to a regular file
# are refused before anything runs (exit 2); a FIFO nobody reads is an error
# (exit 3), not a hang; a file is replaced atomically and keeps its mode.
# finish() validates every report written here, the ones caught from stdout too.
# (The links point at /proc/self/fd/1, which is what /dev/stdout is: a binary
# that replaced the link must not be handed the real /dev/stdout or /dev/null.)
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/pytorch-58005/allreduce_prod_scaled.case"
cd "$TMP" || exit 1

# run NAME args...: the tool's stdout in $TMP/NAME.out, stderr in $TMP/NAME.err, exit in $rc
run() {
  local name="$1"; shift
  "$BIN" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err" 3>&-
  rc=$?
}
want_rc() { if [ "$rc" -eq "$1" ]; then ok; else bad "$2: exit $rc (wanted $1)"; sed 's/^/    /' "$TMP/$3.err" | tail -5; fi; }
nothing_ran() { if grep -q "Passed" "$TMP/$1.out" "$TMP/$1.err"; then bad "$1: a job ran before the refusal"; else ok; fi; }

# --json -: only the report on stdout; the terminal output on stderr; no file "-"
run json_stdout --oracle-only --json - "$CASE"
want_rc 0 "--json -" json_stdout
expect_grep '^\{$' <(head -n 1 "$TMP/json_stdout.out")
expect_grep '"schema":[[:space:]]*"collgrad-check/report/1"' "$TMP/json_stdout.out"
expect_grep "allreduce_prod_scaled \(W=2\) \.+ Passed" "$TMP/json_stdout.err"
expect_grep "^2 passed, 0 failed, 0 errors, 0 skipped$" "$TMP/json_stdout.err"
if [ -e "$TMP/-" ]; then bad "a file named - was written"; else ok; fi

# --junit -, and the JSON report beside it in a file
run junit_stdout --oracle-only --junit - --json "$TMP/beside.json" "$CASE"
want_rc 0 "--junit -" junit_stdout
expect_grep '^<\?xml version="1.0" encoding="UTF-8"\?>$' <(head -n 1 "$TMP/junit_stdout.out")
expect_grep '<testcase classname="collgrad-check.oracle.oracle.W4" name="allreduce_prod_scaled"' "$TMP/junit_stdout.out"
expect_grep "^2 passed, 0 failed, 0 errors, 0 skipped$" "$TMP/junit_stdout.err"

# both on stdout would be one unreadable stream
run both --oracle-only --json - --junit - "$CASE"
want_rc 2 "--json - --junit -" both
expect_grep "would write to the same place" "$TMP/both.err"
nothing_ran both

# distributed, through the launcher (its jobs print nothing to our stdout) and
# under mpiexec directly (rank 0 writes the report)
run launched --world 2 --json - "$CASE"
want_rc 0 "launcher --json -" launched
expect_grep "allreduce_prod_scaled \(W=2\) \.+ Passed" "$TMP/launched.err"
mpiexec -n 2 "$BIN" --json - "$CASE" > "$TMP/direct.out" 2> "$TMP/direct.err" 3>&-
rc=$?
want_rc 0 "mpiexec --json -" direct
expect_grep '^\{$' <(head -n 1 "$TMP/direct.out")

# a link to standard output (what /dev/stdout is): the stream, the link stays
ln -s /proc/self/fd/1 "$TMP/stdout-link"
run link --oracle-only --json "$TMP/stdout-link" "$CASE"
want_rc 0 "a link to stdout" link
if [ -L "$TMP/stdout-link" ]; then ok; else bad "the link to stdout was replaced"; fi
expect_grep '"schema":[[:space:]]*"collgrad-check/report/1"' "$TMP/link.out"
expect_grep "^2 passed, 0 failed, 0 errors, 0 skipped$" "$TMP/link.err"

# a FIFO with a reader gets the report and stays a FIFO (the shell holds it open
# on fd 3 while the tool runs, so the reader sees the end only after). The read
# end is opened here, before the reader starts: a reader that opened it itself
# could come after the tool and fd 3 are gone, and then wait for a writer forever.
mkfifo "$TMP/fifo"
exec 3<> "$TMP/fifo"
exec 4< "$TMP/fifo"
cat <&4 > "$TMP/fifo.json" 3>&- 4<&- &
reader=$!
exec 4<&-
run fifo --oracle-only --json "$TMP/fifo" "$CASE"
exec 3>&-
wait "$reader"
want_rc 0 "a FIFO" fifo
if [ -p "$TMP/fifo" ]; then ok; else bad "the FIFO was replaced"; fi
expect_grep '"schema":[[:space:]]*"collgrad-check/report/1"' "$TMP/fifo.json"
# ... and without a reader: an error at once, the FIFO left alone
mkfifo "$TMP/lonely"
SECONDS=0
run lonely --oracle-only --json "$TMP/lonely" "$CASE"
want_rc 3 "a FIFO without a reader" lonely
expect_grep "lonely: cannot write: a FIFO with no reader" "$TMP/lonely.err"
if [ -p "$TMP/lonely" ] && [ "$SECONDS" -lt 10 ]; then ok; else bad "the lonely FIFO: replaced or waited ${SECONDS} s"; fi

# a character device is written, never replaced (a private null device when
# we may make one, so that a broken binary cannot replace the real /dev/null)
if mknod "$TMP/null" c 1 3 2> /dev/null; then chr="$TMP/null"; elif [ "$(id -u)" -ne 0 ]; then chr=/dev/null; else chr=""; fi
if [ -n "$chr" ]; then
  run chr --oracle-only --json "$chr" "$CASE"
  want_rc 0 "a character device" chr
  if [ -c "$chr" ]; then ok; else bad "$chr is no longer a character device"; fi
fi

# refused before the run: a directory, a missing directory, a link to a file
mkdir "$TMP/adir"
run dir --oracle-only --json "$TMP/adir" "$CASE"
want_rc 2 "a directory" dir
expect_grep "adir: is a directory; a report needs a file name" "$TMP/dir.err"
nothing_ran dir
if [ -d "$TMP/adir" ]; then ok; else bad "the directory was replaced"; fi
run nodir --oracle-only --junit "$TMP/no/such/r.xml" "$CASE"
want_rc 2 "a missing directory" nodir
expect_grep "r.xml: cannot write: .*/no/such is not a directory" "$TMP/nodir.err"
nothing_ran nodir
# a directory that takes no new file: its permission bits pass root's access(2),
# the writer's temporary file does not (was found after the run, exit 3)
run procdir --oracle-only --junit /proc/r.xml "$CASE"
want_rc 2 "a directory that takes no file" procdir
expect_grep "/proc/r.xml: cannot create a temporary file beside it" "$TMP/procdir.err"
nothing_ran procdir
# an empty name (an unset variable in a CI script) was a new file in "", found after the run
run empty --oracle-only --json "" "$CASE"
want_rc 2 "an empty file name" empty
expect_grep "^collgrad-check: --json '': expected a file name \(or - for standard output\)$" "$TMP/empty.err"
nothing_ran empty
echo "keep me" > "$TMP/target"
ln -s "$TMP/target" "$TMP/file-link"
run filelink --oracle-only --json "$TMP/file-link" "$CASE"
want_rc 2 "a link to a regular file" filelink
expect_grep "file-link: is a symbolic link to a regular file; not following it" "$TMP/filelink.err"
if [ -L "$TMP/file-link" ] && [ "$(cat "$TMP/target")" = "keep me" ]; then ok; else bad "the link or its file changed"; fi

# a regular file: replaced whole, its mode kept, no temporary left beside it
echo "old" > "$TMP/kept.json"
chmod 640 "$TMP/kept.json"
run kept --oracle-only --json "$TMP/kept.json" "$CASE"
want_rc 0 "an existing file" kept
expect_grep '"schema":[[:space:]]*"collgrad-check/report/1"' "$TMP/kept.json"
if [ "$(stat -c %a "$TMP/kept.json")" = 640 ]; then ok; else bad "mode $(stat -c %a "$TMP/kept.json") (wanted 640)"; fi
if ls "$TMP"/*.tmp.* > /dev/null 2>&1; then bad "a temporary file was left: $(ls "$TMP"/*.tmp.*)"; else ok; fi
finish
