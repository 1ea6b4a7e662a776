#!/usr/bin/env bash
# `collgrad-check bench`: every collective it times, at W=2 and two small sizes,
# writes the JSON rows it promises; under the reference rules each backward
# moves exactly the bytes of its transpose (transport.c's counting rule: a
# rank's send block plus its receive block), and the check passes. A rule set
# whose backward skips the communication (c10d's all_reduce is the identity)
# moves no bytes and fails the check: exit 1. Bad options exit 2. `--oracle`
# prints its fit, and all_gather's oracle runs to 1024 ranks in memory flat
# per element. No timing is asserted: this machine is noisy.
. "$(dirname "$0")/common.bash"

# sizes: 64 KiB and 256 KiB of f32, 16384 and 65536 elements
for coll in all_reduce all_gather reduce_scatter broadcast all_to_all; do
    expect_exit 0 -- "$BIN" bench -b 64K -e 256K -f 4 -n 2 -w 1 -W 2 -c "$coll" --json "$TMP/$coll.json"
    expect_grep "^# collgrad-check bench: $coll" "$TMP/out"
    python3 - "$TMP/$coll.json" "$coll" > "$TMP/py.out" 2>&1 <<'PY' && ok || bad "$coll rows: $(cat "$TMP/py.out")"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
coll = sys.argv[2]
assert [r["bytes"] for r in rows] == [65536, 262144], rows
keys = {"collective", "dtype", "world", "bytes", "fwd_s", "bwd_s", "raw_s", "ratio", "bwd_bytes",
        "transpose_bytes", "peak_rss_bytes", "check_ok", "check_s"}
for r in rows:
    assert keys <= set(r), keys - set(r)
    n = r["bytes"]          # the larger buffer; a rank's other buffer is n/W for the split collectives
    # the transpose of each forward, counted as send block + receive block on rank 0:
    # all_reduce: all_reduce (n + n); all_gather: reduce_scatter (n + n/2);
    # reduce_scatter: all_gather (n/2 + n); broadcast: reduce to rank 0 (n + n);
    # all_to_all: all_to_all (n + n: every rank's buffer is the whole size)
    want = {"all_reduce": 2 * n, "all_gather": n + n // 2, "reduce_scatter": n // 2 + n, "broadcast": 2 * n,
            "all_to_all": 2 * n}[coll]
    assert r["transpose_bytes"] == want, (r["transpose_bytes"], want)
    assert r["bwd_bytes"] == r["transpose_bytes"], (r["bwd_bytes"], r["transpose_bytes"])
    assert r["check_ok"] is True and r["check_s"] > 0
    assert r["fwd_s"] > 0 and r["bwd_s"] > 0 and r["raw_s"] > 0 and r["ratio"] > 0
    assert 0 < r["raw_fwd_s"] <= r["raw_s"], (r["raw_fwd_s"], r["raw_s"])  # the forward is part of the pair
    assert r["peak_rss_bytes"] > 0 and r["world"] == 2 and r["collective"] == coll
    # the whole run's peak holds the timed loop's; a CPU rank at these sizes stays small
    # (it loaded the GPU module once: 200 MB of CUDA in every rank)
    assert r["peak_rss_bytes"] <= r["peak_rss_run_bytes"] < 100 << 20, r
    assert r["device"] == "cpu" and r["peak_device_bytes"] is None, r
    # the raw floor as nccl-tests would print it: bytes over its time, times the
    # collective's bus factor at W=2 (all_reduce 2(W-1)/W = 1; the others 1/2 or 1)
    factor = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "broadcast": 1.0,
              "all_to_all": 0.5}[coll]
    raw_alg = n / r["raw_s"] / 1e9
    assert abs(r["raw_algbw_gbs"] - raw_alg) <= 1e-9 * raw_alg, (r["raw_algbw_gbs"], raw_alg)
    assert abs(r["raw_busbw_gbs"] - raw_alg * factor) <= 1e-9 * raw_alg, (r["raw_busbw_gbs"], factor)
PY
done

# the whole run's peak per rank within 3x the tensor bytes + 50 MB (x, y and x.grad, the
# truth and the check included), at 64 MiB W=4 for broadcast: its backward is a reduce, and
# MPICH's MPI_Reduce mallocs and fills a receive buffer of the whole count on every non-root
# (302 MB here before the transport reduced in pieces; 215-231 MB after)
# (not under AddressSanitizer, scripts/sanitize.sh: its shadow memory and quarantine are in the RSS)
# all_reduce likewise: MPICH's large MPI_Allreduce fills half a temporary of the whole count
# (252 MB here, over the bound by 0.1 MB, before the transport reduced in pieces; 227 MB after)
if [ -z "${ASAN_OPTIONS:-}" ]; then
for coll in broadcast all_reduce; do
  expect_exit 0 -- "$BIN" bench -c "$coll" -b 64M -e 64M -n 1 -w 0 -W 4 --json "$TMP/$coll-64.json"
  python3 -c "
import json,sys; r=json.load(open('$TMP/$coll-64.json'))['rows'][0]
bound = 3 * r['bytes'] + 50e6
sys.exit(0 if r['check_ok'] and r['peak_rss_run_bytes'] <= bound else 1)" && ok ||
    bad "$coll 64 MiB W=4 whole-run peak over 3x + 50 MB: $(tail -1 "$TMP/out")"
done
fi

# c10d's all_reduce backward is the identity: no bytes, wrong gradients
expect_exit 1 -- "$BIN" bench -b 64K -e 64K -n 1 -W 2 -r c10d --json "$TMP/c10d.json"
expect_grep "FAIL" "$TMP/out"
python3 -c "
import json,sys; r=json.load(open('$TMP/c10d.json'))['rows'][0]
sys.exit(0 if r['bwd_bytes'] == 0 and r['check_ok'] is False else 1)" && ok || bad "c10d row"

# usage errors
expect_exit 2 -- "$BIN" bench -c gather
expect_grep "expected all_reduce, all_gather, reduce_scatter, broadcast or all_to_all" "$TMP/out"
expect_exit 2 -- "$BIN" bench -b 1M -e 1K
expect_exit 2 -- "$BIN" bench -b 12Q
expect_exit 2 -- "$BIN" bench --bogus
expect_exit 2 -- "$BIN" bench -c all_to_all -o max   # once: ignored, the row labelled max
expect_grep "^collgrad-check bench: -o max: all_to_all reduces nothing" "$TMP/out"
# names and the JSON target are checked before the ranks start: one line, not one per rank
# and an MPI_Abort (once: W lines, or rank 0's abort after MPI_Init)
for bad in "-r no-such-rules" "-t no-such-transport" "--json /nonexistent-dir/b.json"; do
  # shellcheck disable=SC2086
  expect_exit 2 -- "$BIN" bench -W 2 -b 1K -e 1K $bad
  [ "$(wc -l < "$TMP/out")" -eq 1 ] && ok || { bad "bench $bad: not one line"; sed 's/^/    /' "$TMP/out"; }
done
expect_exit 0 -- "$BIN" bench --help
expect_grep "^  -b, --minbytes SIZE" "$TMP/out"

# the oracle alone: a table and a fitted exponent
expect_exit 0 -- "$BIN" bench --oracle -b 64K -e 256K -f 4 --oracle-max-world 4
expect_grep "^# fitted growth" "$TMP/out"

# all_gather's output is held once (interp.h cg_share): up to 1024 simulated
# ranks, and the bytes per input element stay flat in W. Held per rank, each
# of W outputs of W N f64 elements would be 8 W bytes per input element:
# 2 KB at W=256, 8 KB at W=1024; the bound below is 256 bytes (32 f64).
expect_exit 0 -- "$BIN" bench --oracle -c all_gather -b 4K -e 4K --oracle-max-world 1024
expect_grep "^ +1024 +1024 +1048576 " "$TMP/out"
awk '$1 ~ /^[0-9]+$/ && $1 >= 256 && $6 > 256 { bad = 1 } END { exit bad }' "$TMP/out" && ok ||
    bad "bytes per element grow with W: $(grep -E '^ +[0-9]' "$TMP/out" | tail -3)"
expect_exit 2 -- "$BIN" bench --oracle --oracle-max-world 1
# the distributed bench too: W=2 ranks on this node at 64 GiB each need 2 x 5 x 64 GiB = 640 GiB
# (5 buffers of the size a rank, bench_rank.c); the sizes before it run, the note ends the table
expect_exit 0 -- "$BIN" bench -b 64K -e 64G -f 1024 -n 1 -w 0 -W 2 --json "$TMP/toolarge.json"
expect_grep "^ +65536 +16384 " "$TMP/out"
expect_grep "^# 68719476736 bytes and larger: not run: 2 ranks on a node need about 640\.0 GiB, [0-9.]+ GiB available$" "$TMP/out"
python3 -c "
import json,sys; r=json.load(open('$TMP/toolarge.json'))
assert [x['bytes'] for x in r['rows']] == [65536, 67108864], r['rows']
assert r['not_run'].startswith('68719476736 bytes and larger: not run: 2 ranks on a node need about 640.0 GiB'), r
" && ok || bad "the JSON of a bench that stopped at a size that does not fit"
# a point that cannot fit is a note, not the OOM killer (--oracle-max-world 99999 was killed at
# W=32 on a 24 GiB machine): 64 GiB of f32 is 2^34 elements a rank, at W=2 2^35 simulated, at
# 40 bytes each (the estimate before any point is measured) 1280 GiB
expect_exit 0 -- "$BIN" bench --oracle -b 64G -e 64G --oracle-max-world 4
expect_grep "^# W=2 N=17179869184 and larger: not run: needs about 1280\.0 GiB, [0-9.]+ GiB available$" "$TMP/out"
finish
