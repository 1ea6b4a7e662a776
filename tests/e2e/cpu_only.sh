#!/usr/bin/env bash
# A CPU-only run maps no CUDA or NCCL library (issue 23 item 4): the GPU part
# is a module, libcollgrad-gpu.so, that the tool loads with dlopen on first
# use (harness/autograd/gpu_module.h). The dynamic loader's own trace
# (LD_DEBUG=files, one file per process, inherited by every rank mpiexec
# starts) names every library any process of a run loads: an MPI run at W=2
# and an oracle-only run must name none of libcudart, libcublas, libnccl or
# the module, and neither must a CPU bench. In a build with the GPU path (CG_HAVE_CUDA=1, set by
# tests/CMakeLists.txt) the control: --transport nccl does load the module,
# so the trace can see a load.
. "$(dirname "$0")/common.bash"
CASE="$SRC/cases/collectives/all_reduce_sum.case"
GPU_LIBS='file=[^ ]*(libcudart|libcublas|libnccl|libcollgrad-gpu)'

# the executable itself needs none of them (nor the C++ runtime the kernels use)
if ldd "$BIN" | grep -E "libcudart|libcublas|libnccl|libstdc\+\+" > "$TMP/ldd"; then
  bad "the executable links the GPU libraries:"; sed 's/^/    /' "$TMP/ldd"
else ok; fi

# traced: every process writes $TMP/<name>.trace.<pid>
traced() {
  local name="$1"; shift
  mkdir -p "$TMP/$name"
  LD_DEBUG=files LD_DEBUG_OUTPUT="$TMP/$name/trace" "$@" > "$TMP/out" 2>&1
}

traced mpi "$BIN" --world 2 "$CASE"
expect_grep "100% cases passed \(1 of 1\)" "$TMP/out"
n=$(find "$TMP/mpi" -name 'trace.*' | wc -l)
# the launcher, mpiexec, its proxy and two ranks: at least four traces, each
# seeing MPI load (so a trace that saw nothing cannot pass for a clean one)
if [ "$n" -ge 4 ]; then ok; else bad "expected at least 4 traced processes, got $n"; fi
if [ "$(grep -lE 'file=[^ ]*libmpi' "$TMP"/mpi/trace.* | wc -l)" -ge 3 ]; then ok
else bad "the traces do not show MPI loading in the ranks"; fi
if grep -hE "$GPU_LIBS" "$TMP"/mpi/trace.* > "$TMP/gpu"; then
  bad "a CPU-only MPI run loaded GPU libraries:"; sort -u "$TMP/gpu" | head -5 | sed 's/^/    /'
else ok; fi

traced oracle "$BIN" --oracle-only "$CASE"
expect_grep "100% cases passed" "$TMP/out"
if grep -hE "$GPU_LIBS" "$TMP"/oracle/trace.* > "$TMP/gpu"; then
  bad "an oracle-only run loaded GPU libraries:"; sort -u "$TMP/gpu" | head -5 | sed 's/^/    /'
else ok; fi

# the bench on the CPU too (its device-memory figure is asked of the GPU module
# only on the device: asking it always loaded 200 MB of CUDA into every rank)
traced bench "$BIN" bench -W 2 -b 1K -e 1K -n 1 -w 0
expect_grep "^# collgrad-check bench: all_reduce .*device cpu" "$TMP/out"
if grep -hE "$GPU_LIBS" "$TMP"/bench/trace.* > "$TMP/gpu"; then
  bad "a CPU bench loaded GPU libraries:"; sort -u "$TMP/gpu" | head -5 | sed 's/^/    /'
else ok; fi

# the control: asking for nccl loads the module (whether or not a GPU is there)
if [ "${CG_HAVE_CUDA:-0}" = 1 ]; then
  traced nccl "$BIN" --transport nccl "$CASE"
  if grep -qhE 'file=[^ ]*libcollgrad-gpu' "$TMP"/nccl/trace.*; then ok
  else bad "--transport nccl did not load libcollgrad-gpu.so"; sed 's/^/    /' "$TMP/out" | tail -5; fi
fi
rm -rf "$TMP/mpi" "$TMP/oracle" "$TMP/nccl" "$TMP/bench"
finish
