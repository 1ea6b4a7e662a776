#!/usr/bin/env bash
# gpu-check.sh — the GPU path on a real GPU, in one command that needs no
# network (issue 37): run it on the device machine from the bundle that
# scripts/gpu-bundle.sh made here.
#
#   scripts/gpu-check.sh --bundle .gpu-bundle/bundle.tar.gz --out DIR
#   scripts/gpu-check.sh --build BUILD_DIR --out DIR    (a tree built on that machine)
#
# What it runs (every step under a time limit, the whole under a budget):
#   env       the GPU, driver, CUDA, NCCL (the library the tool loads) and torch versions
#   kernels   cudatest_ops (every CUDA kernel against its CPU op: all dtypes, odd sizes, 0
#             elements), cudatest_graph, cudatest_local; cudatest_nccl at W = 1, 2
#   cases     every built-in case over --transport nccl (tensors on the GPU) at W = 1, 2, 4;
#             the bf16 and f16 cases at W = 2; cases/subgroups at W = 3, 4
#   p2p       send/recv over MPI (the default) on the probes of tests/data/nccl_p2p and
#             the rings; over NCCL's grouped point to point, the ping-pong that waited
#   faults    the fault table over nccl (scripts/fault-table.sh, --device cpu: the data
#             faults rewrite host buffers)
#   memcheck  compute-sanitizer --tool memcheck over one small run (W = 1)
#   torch     --backend pytorch:nn over the built-in cases at W = 2 with the machine's torch,
#             --torch-backend nccl and gloo, outcomes compared case by case
#   usercode  collgrad_torch.check over examples/user_code at W = 2, nccl beside gloo
#   launched  the same check inside torchrun (--world launched, issue 62): one rank per GPU (two
#             sharing the one GPU where there is one), --backend nccl, beside the spawned gloo check
#   bench     all_reduce, all_gather, reduce_scatter, broadcast, all_to_all from 1 MiB to
#             --bench-max (default 1G) at W = 2 over nccl, tensors on the GPU, beside the raw
#             NCCL calls; alone, after the rest (its times must not share the machine)
# Ranks outnumbering the GPUs share them (COLLGRAD_NCCL_SHARE_GPU=1: NCCL's network path).
# Writes DIR/summary.txt (also printed), DIR/bench.json (every bench row) and
# DIR/gpu-logs.tar.gz (every log and report): three files, within the device
# tool's eight. Exit: 0 every step passed, 1 a step failed, 3 nothing could run.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="" build="" out="$root/out" bench_min=1M bench_max=1G bench_iters=3
bench_colls="all_reduce all_gather reduce_scatter broadcast all_to_all"
budget="${CG_GPU_CHECK_BUDGET:-500}"
only="env kernels cases p2p faults memcheck torch usercode launched bench"
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bench-min) bench_min="$2"; shift 2 ;;
    --bench-max) bench_max="$2"; shift 2 ;;
    --bench-iters) bench_iters="$2"; shift 2 ;;
    --bench-colls) bench_colls="$2"; shift 2 ;;  # a subset of the five, for a rerun
    --only) only="$2"; shift 2 ;;  # a subset of the steps above, for a rerun
    *) echo "gpu-check: unknown argument $1" >&2; exit 3 ;;
  esac
done
t_start=$(date +%s)
deadline=$((t_start + budget))
mkdir -p "$out"
logs="$(mktemp -d)/gpu-logs"
mkdir -p "$logs"

# ---- the tool: unpacked from the bundle, or a build tree ------------------------
if [ -n "$bundle" ]; then
  prefix="$(mktemp -d)"
  tar -xzf "$bundle" -C "$prefix" || { echo "gpu-check: cannot unpack $bundle" >&2; exit 3; }
  P="$prefix/collgrad"
  # a bundle made for a rehearsal (scripts/gpu-bundle.sh build-emu) runs the CUDA emulation: on
  # a machine with a GPU it would spend the device's minutes measuring nothing of the GPU
  if grep -q "emulation ON" "$P/MANIFEST" 2>/dev/null && nvidia-smi -L > /dev/null 2>&1; then
    echo "gpu-check: $bundle was built against the CUDA emulation ($(sed -n 's/^build: //p' "$P/MANIFEST"));" \
         "this machine has a GPU: make the real bundle with scripts/gpu-bundle.sh" >&2
    exit 3
  fi
  BIN="$P/bin/collgrad-check" TESTS="$P/bin"
  export CG_MPIEXEC="$P/bin/mpiexec" PATH="$P/bin:$PATH"
  export COLLGRAD_GPU_MODULE="$P/lib/collgrad-check/libcollgrad-gpu.so"
  libs="$P/lib"
elif [ -n "$build" ]; then
  BIN="$build/collgrad-check" TESTS="$build/tests" libs=""
  export COLLGRAD_GPU_MODULE="$build/libcollgrad-gpu.so"
else
  echo "gpu-check: expected --bundle FILE or --build DIR" >&2
  exit 3
fi
# no GPU and no emulation: one line, before anything runs (the device tool lends the machine)
emulated=0
[ -n "$bundle" ] && grep -q "emulation ON" "$P/MANIFEST" 2>/dev/null && emulated=1
[ -n "$build" ] && grep -q "^CG_CUDA_EMU:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null && emulated=1
if [ "$emulated" = 0 ] && ! { nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }; then
  echo "gpu-check: no GPU here (nvidia-smi lists none): run it on a machine with one (docs/gpu.md)" >&2
  exit 3
fi
# the machine's own CUDA libraries and NCCL: its CUDA, else torch's wheels
pydirs="$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)"
for so in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  # shellcheck disable=SC2086
  hit="$(find /usr/local/cuda/lib64/ /usr/local/cuda/targets/x86_64-linux/lib/ /usr/local/cuda/lib/ \
           /usr/lib/x86_64-linux-gnu/ $pydirs -maxdepth 4 -name "$so" 2>/dev/null | head -n 1)"
  [ -n "$hit" ] && libs="$libs:$(dirname "$hit")" && eval "lib_${so%%.*}=\$hit"
done
export LD_LIBRARY_PATH="${libs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HYDRA_LAUNCHER=fork COLLGRAD_NCCL_SHARE_GPU=1
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"  # nvcc, compute-sanitizer
C="$root/cases"

# ---- steps: each under a limit, its log kept, one summary line each ---------------
status=0
# run NAME LIMIT CMD...: the command's output into $logs/NAME.log; its exit status
run() {
  local name="$1" limit="$2" left
  shift 2
  left=$((deadline - $(date +%s)))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 10 ]; then
    echo "gpu-check: no time left for $name" > "$logs/$name.log"
    return 124
  fi
  timeout -k 5 "$limit" "$@" > "$logs/$name.log" 2>&1
}
# say FILE LINE: a summary line into a lane's file
say() { echo "$2" >> "$1"; }
# verdict RC: the worse of the step's and the run's status (3 could-not-run stays 3)
verdict() { [ "$1" -ne 0 ] && [ "$status" -ne 3 ] && status=1; return 0; }
has() { [[ " $only " == *" $1 "* ]]; }
cases_line() { grep -m1 -E '^[0-9]+% cases passed' "$logs/$1.log" || echo "no summary: exit $2 ($(tail -n 1 "$logs/$1.log"))"; }

lane_kernels() {
  local f="$logs/lane-kernels.txt" rc
  for t in cudatest_ops cudatest_graph cudatest_local; do
    run "$t" 120 "$TESTS/$t"; rc=$?
    say "$f" "$t: $(tail -n 1 "$logs/$t.log") [exit $rc]"
  done
  for w in 1 2; do
    run "cudatest_nccl-w$w" 60 "$CG_MPIEXEC_OR" -n "$w" "$TESTS/cudatest_nccl"; rc=$?
    say "$f" "$(grep -m1 -E '^cudatest_nccl' "$logs/cudatest_nccl-w$w.log" || echo "cudatest_nccl W=$w: exit $rc") [exit $rc]"
  done
}

lane_cases() {
  local f="$logs/lane-cases.txt" rc
  for w in 1 2 4; do
    run "cases-w$w" 150 "$BIN" --transport nccl --world "$w" --timeout 30 --json "$logs/cases-w$w.json"; rc=$?
    say "$f" "built-in cases, nccl, W=$w: $(cases_line "cases-w$w" $rc) [exit $rc]"
  done
  run "half-w2" 90 "$BIN" --transport nccl --world 2 --timeout 60 --json "$logs/half-w2.json" "$C/half"; rc=$?
  say "$f" "bf16 + f16 cases, nccl, W=2: $(cases_line half-w2 $rc) [exit $rc]"
}

lane_groups() {
  local f="$logs/lane-groups.txt" rc
  for w in 3 4; do
    run "subgroups-w$w" 120 "$BIN" --transport nccl --world "$w" --timeout 60 \
      --json "$logs/subgroups-w$w.json" "$C/subgroups"; rc=$?
    say "$f" "cases/subgroups, nccl, W=$w: $(cases_line "subgroups-w$w" $rc) [exit $rc]"
  done
}

# send and recv: over MPI by default (transport_nccl_p2p.c), which must pass the
# probes of tests/data/nccl_p2p (rpc_add's shape: a ping-pong, two sends) and the
# rings; over NCCL's grouped point to point (COLLGRAD_NCCL_P2P=nccl) the
# ping-pong waited at W = 2 on NCCL 2.28.3 (H100 and H200): those exits are
# evidence, not a verdict ("[probe exit N]").
lane_p2p() {
  local f="$logs/lane-p2p.txt" rc d="$root/tests/data/nccl_p2p" ring="$C/collectives"
  for probe in "$d/pingpong.case 2" "$d/two_sends.case 2" "$d/pingpong.case 4" "$d/two_sends.case 4" \
               "$C/rpc-design/rpc_add.case 2" "$ring/send_recv_ring.case 2" "$ring/send_recv_ring.case 3" \
               "$ring/send_recv_ring_large.case 3"; do
    set -- $probe
    local name="p2p-$(basename "$1" .case)-w$2"
    run "$name" 40 "$BIN" --transport nccl --world "$2" --timeout 20 "$1"; rc=$?
    say "$f" "send/recv over MPI, $(basename "$1" .case) W=$2: $(cases_line "$name" $rc) [exit $rc]"
  done
  for probe in "$d/pingpong.case 2" "$ring/send_recv_ring.case 3"; do
    set -- $probe
    local name="p2p-grouped-$(basename "$1" .case)-w$2"
    COLLGRAD_NCCL_P2P=nccl run "$name" 30 "$BIN" --transport nccl --world "$2" --timeout 10 "$1"; rc=$?
    say "$f" "send/recv over NCCL (COLLGRAD_NCCL_P2P=nccl), $(basename "$1" .case) W=$2: $(cases_line "$name" $rc) $(grep -m1 -E 'wait|stopped' "$logs/$name.log" | sed 's/^ *//' | cut -c1-120) [probe exit $rc]"
  done
}

lane_faults() {
  local f="$logs/lane-faults.txt" rc
  CG_FAULT_JOBS=4 run faults 180 "$root/scripts/fault-table.sh" "$BIN" --transport nccl --device cpu; rc=$?
  say "$f" "fault table over nccl (--device cpu): $(tail -n 1 "$logs/faults.log") [exit $rc]"
}

lane_memcheck() {
  local f="$logs/lane-memcheck.txt" rc
  # --report-api-errors no: NCCL 2.28.3's ncclCommInitRank probes kernels built for other
  # architectures (cudaFuncGetAttributes -> cudaErrorNoKernelImageForDevice, 4 per run):
  # its own, handled calls; the tool checks every CUDA call it makes itself
  run memcheck 150 compute-sanitizer --tool memcheck --report-api-errors no --target-processes all \
    --error-exitcode 9 \
    "$BIN" --transport nccl --world 1 --timeout 120 "$C/collectives/all_reduce_sum.case" \
    "$C/collectives/all_gather_ragged.case"; rc=$?
  say "$f" "compute-sanitizer memcheck, W=1 all_reduce_sum + all_gather_ragged: $(grep -m1 'ERROR SUMMARY' "$logs/memcheck.log" || echo 'no ERROR SUMMARY') $(cases_line memcheck $rc) [exit $rc]"
}

lane_torch() {
  local f="$logs/lane-torch.txt" rc
  for pg in nccl gloo; do
    run "torch-$pg" 200 "$BIN" --backend pytorch:nn --torch-backend "$pg" --python "$(command -v python3)" \
      --world 2 --timeout 60 --json "$logs/torch-$pg.json"; rc=$?
    # real torch's own findings (and its hang in gather_ragged) end the run non-zero on
    # both backends alike: the lane's verdict is the comparison below
    say "$f" "pytorch:nn over $pg, W=2: $(cases_line "torch-$pg" $rc) [probe exit $rc]"
  done
  python3 - "$logs/torch-nccl.json" "$logs/torch-gloo.json" >> "$f" 2>&1 <<'PY'
import json, sys
def outcomes(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        return None, f"{path}: {e}"
    return {(c["name"], c["world"], c.get("rules")): c for c in d["cases"]}, None
nccl, e1 = outcomes(sys.argv[1])
gloo, e2 = outcomes(sys.argv[2])
if e1 or e2:
    print(f"torch nccl vs gloo: not compared ({e1 or e2}) [exit 1]")
    sys.exit(0)
diff = [k for k in sorted(set(nccl) | set(gloo), key=str)
        if (nccl.get(k) or {}).get("status") != (gloo.get(k) or {}).get("status")]
both = set(nccl) & set(gloo)
print(f"torch nccl vs gloo: {len(both)} cases in both, {len(diff)} differ "
      f"[exit {0 if both and not diff else 1}]")
for k in diff[:20]:
    a, b = nccl.get(k) or {}, gloo.get(k) or {}
    print(f"  {k[0]} (W={k[1]}, rules={k[2]}): nccl {a.get('status')}, gloo {b.get('status')}")
PY
}

# the user-code check (collgrad_torch.check) over nccl, the ranks' inputs on
# their GPU, beside gloo: the same verdict per function is expected
lane_usercode() {
  local f="$logs/lane-usercode.txt" rc ex="$root/examples/user_code"
  for pg in nccl gloo; do
    for probe in "seed_allreduce make_inputs sum_nn sum_c10d" "all_to_all make_inputs uneven"; do
      set -- $probe
      local file="$ex/$1.py" name="usercode-$pg-$1" fns=()
      for fn in "${@:3}"; do fns+=("$file:$fn"); done
      PYTHONPATH="$root/python" run "$name" 150 python3 -m collgrad_torch check --inputs "$file:$2" \
        --world 2 --backend "$pg" --timeout 60 --json "$logs/$name.json" "${fns[@]}"; rc=$?
      say "$f" "user code $1 over $pg, W=2: $(tail -n 1 "$logs/$name.log") [probe exit $rc]"
    done
  done
  python3 - "$logs" >> "$f" 2>&1 <<'PY'
import glob, json, os, sys
def verdicts(pg):
    out = {}
    for p in glob.glob(os.path.join(sys.argv[1], f"usercode-{pg}-*.json")):
        try:
            for c in json.load(open(p))["cases"]:
                out[c["name"]] = c["status"]
        except (OSError, ValueError, KeyError) as e:
            out[p] = f"unreadable: {e}"
    return out
n, g = verdicts("nccl"), verdicts("gloo")
same = [k for k in g if n.get(k) == g[k]]
print(f"user code nccl vs gloo: {len(same)} of {len(g)} functions with the same verdict")
for k in sorted(set(n) | set(g)):
    if n.get(k) != g.get(k):
        print(f"  {k}: nccl {n.get(k)}, gloo {g.get(k)}")
PY
}

# the user-code check inside torchrun, over nccl with the tensors on the GPUs, beside the spawned
# check over gloo on the CPU: the same verdict per step is expected
lane_launched() {
  local f="$logs/lane-launched.txt" rc ex="$root/examples/user_code/data_parallel.py" n port=29561
  n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ "$n" -lt 2 ] && n=2   # ranks outnumbering the GPUs share them (COLLGRAD_NCCL_SHARE_GPU)
  for fn in ddp_step allreduce_step_no_divide; do
    PYTHONPATH="$root/python" run "launched-nccl-$fn" 180 python3 -m torch.distributed.run \
      --nproc-per-node "$n" --master-addr 127.0.0.1 --master-port $((port++)) -m collgrad_torch check \
      --step "$ex:$fn" --inputs "$ex:make_inputs" --reduction mean --backend nccl --world launched \
      --timeout 60 --json "$logs/launched-nccl-$fn.json"; rc=$?
    say "$f" "launched $fn over nccl, torchrun W=$n: $(grep -m1 ' checks passed' "$logs/launched-nccl-$fn.log") [launch exit $rc]"
    PYTHONPATH="$root/python" run "launched-gloo-$fn" 180 python3 -m collgrad_torch check \
      --step "$ex:$fn" --inputs "$ex:make_inputs" --reduction mean --backend gloo --world "$n" \
      --timeout 60 --json "$logs/launched-gloo-$fn.json"; rc=$?
    say "$f" "spawned $fn over gloo, W=$n: $(tail -n 1 "$logs/launched-gloo-$fn.log") [exit $rc]"
  done
  python3 - "$logs" >> "$f" 2>&1 <<'PY'
import glob, json, os, sys
def verdicts(pg):
    out = {}
    for p in glob.glob(os.path.join(sys.argv[1], f"launched-{pg}-*.json")):
        try:
            for c in json.load(open(p))["cases"]:
                out[c["name"]] = (c["status"], sorted((k["rank"], k["tensor"], k["status"]) for k in c["checks"]))
        except (OSError, ValueError, KeyError) as e:
            out[p] = (f"unreadable: {e}", [])
    return out
n, g = verdicts("nccl"), verdicts("gloo")
same = [k for k in g if n.get(k) == g[k]]
print(f"launched nccl vs spawned gloo: {len(same)} of {len(g)} steps alike, tensor by tensor "
      f"[exit {0 if g and len(same) == len(g) == len(n) else 1}]")
for k in sorted(set(n) | set(g)):
    if n.get(k) != g.get(k):
        print(f"  {k}: nccl {(n.get(k) or ('missing',))[0]}, gloo {(g.get(k) or ('missing',))[0]}")
PY
}

bench() {
  local f="$logs/lane-bench.txt" rc
  for c in $bench_colls; do
    run "bench-$c" 75 "$BIN" bench -t nccl -W 2 -c "$c" -b "$bench_min" -e "$bench_max" -f 4 \
      -n "$bench_iters" -w 1 \
      --json "$logs/bench-$c.json"; rc=$?
    say "$f" "bench $c: exit $rc"
    grep -E '^ +[0-9]' "$logs/bench-$c.log" | sed 's/^/  /' >> "$f"
  done
  python3 - "$logs" "$out/bench.json" >> "$f" 2>&1 <<'PY'
import glob, json, os, sys
rows = []
for p in sorted(glob.glob(os.path.join(sys.argv[1], "bench-*.json"))):
    try:
        rows += json.load(open(p))["rows"]
    except (OSError, ValueError, KeyError) as e:
        print(f"  {p}: {e}")
json.dump({"schema": "collgrad-check/bench/1", "rows": rows}, open(sys.argv[2], "w"), indent=1)
print("bench, W=2 over nccl: (fwd+bwd)/raw, backward busbw / the raw transpose's, peak device / tensor bytes")
for r in rows:
    transpose = r["raw_s"] - r["raw_fwd_s"]
    bwd_vs_raw = transpose / r["bwd_s"] if r["bwd_s"] > 0 else 0.0
    dev = r.get("peak_device_bytes")
    print(f"  {r['collective']:>14} {r['bytes'] / 2**20:7.0f} MiB  ratio {r['ratio']:5.2f}  "
          f"bwd busbw {r['busbw_gbs']:7.2f} GB/s vs raw {r['raw_busbw_gbs']:7.2f}  "
          f"bwd/raw-transpose {100 * bwd_vs_raw:5.1f}%  peakDev {dev / r['bytes'] if dev else 0:4.2f}x  "
          f"check {'ok' if r.get('check_ok') else r.get('check_message', 'FAIL')}")
PY
}

# ---- env, and a first run that says whether anything can run ------------------------
CG_MPIEXEC_OR="${CG_MPIEXEC:-mpiexec}"
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | sed 's/^/driver /'
  command -v nvcc > /dev/null && nvcc --version | tail -n 1 | sed 's/^/nvcc: /'
  echo "libraries: cudart ${lib_libcudart:-not found}; cublas ${lib_libcublas:-not found}; nccl ${lib_libnccl:-not found}"
  python3 - "${lib_libnccl:-libnccl.so.2}" "${lib_libcudart:-libcudart.so.13}" <<'PY' 2>&1
import ctypes, sys
v = ctypes.c_int()
try:
    ctypes.CDLL(sys.argv[1]).ncclGetVersion(ctypes.byref(v))
    x = v.value
    print(f"nccl (the one the tool loads): {x // 10000}.{x // 100 % 100}.{x % 100}" if x >= 10000 else f"nccl: {x}")
except OSError as e:
    print(f"nccl: {e}")
try:
    ctypes.CDLL(sys.argv[2]).cudaRuntimeGetVersion(ctypes.byref(v))
    print(f"cuda runtime: {v.value // 1000}.{v.value % 1000 // 10}")
except OSError as e:
    print(f"cuda runtime: {e}")
try:
    import torch
    print(f"torch {torch.__version__}, its cuda {torch.version.cuda}, its nccl "
          f"{'.'.join(map(str, torch.cuda.nccl.version()))}, devices {torch.cuda.device_count()}")
except Exception as e:
    print(f"torch: {type(e).__name__}: {e}")
PY
  [ -n "$bundle" ] && head -n 4 "$P/MANIFEST"
  echo "cpus: $(nproc), memory: $(free -g | awk '/^Mem/ {print $2}') GiB"
} > "$logs/env.txt" 2>&1
cat "$logs/env.txt"
run smoke 90 "$BIN" --transport nccl --world 1 --timeout 60 "$C/collectives/all_reduce_sum.case"
smoke=$?
echo "smoke (W=1 all_reduce_sum over nccl): exit $smoke: $(cases_line smoke $smoke)"
if [ "$smoke" -ne 0 ] && [ "$smoke" -ne 1 ]; then
  status=3
  tail -n 30 "$logs/smoke.log"
fi

# ---- the correctness lanes, side by side; then the bench alone --------------------------
if [ "$status" -ne 3 ]; then
  pids=()
  has kernels && { lane_kernels & pids+=($!); }
  has cases && { lane_cases & pids+=($!); lane_groups & pids+=($!); }
  has p2p && { lane_p2p & pids+=($!); }
  has faults && { lane_faults & pids+=($!); }
  has memcheck && { lane_memcheck & pids+=($!); }
  has torch && { lane_torch & pids+=($!); }
  has usercode && { lane_usercode & pids+=($!); }
  has launched && { lane_launched & pids+=($!); }
  for p in "${pids[@]}"; do wait "$p"; done
  has bench && bench
fi

{
  echo "== gpu-check summary ($(( $(date +%s) - t_start )) s)"
  cat "$logs/env.txt"
  echo "smoke: exit $smoke"
  for lane in kernels cases groups p2p faults memcheck torch usercode launched bench; do
    [ -f "$logs/lane-$lane.txt" ] && cat "$logs/lane-$lane.txt"
  done
} > "$out/summary.txt"
# a step's verdict: any "[exit N]" with N not 0 fails the run
grep -qE '\[exit [1-9][0-9]*\]|bench [a-z_]+: exit [1-9]' "$out/summary.txt" && verdict 1
tar -C "$(dirname "$logs")" -czf "$out/gpu-logs.tar.gz" gpu-logs
echo
cat "$out/summary.txt"
echo "gpu-check: $([ "$status" -eq 0 ] && echo 'all passed' || echo "FAILED (status $status)")"
exit "$status"
